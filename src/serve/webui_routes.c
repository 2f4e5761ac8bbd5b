/* webui_routes.c — serves the built-in web chat (webui.h): the embedded
 * files by name, each with its Content-Type, a Content-Security-Policy that
 * allows this origin only (no inline code, no other host), an ETag of its
 * bytes with Cache-Control: no-cache (the browser keeps a copy and asks again
 * with If-None-Match; 304 when unchanged) and nosniff. No API key is needed
 * for these: the page asks the API with the key its user gives it. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve/server.h"
#include "serve/webui.h"

static const char CSP[] = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                          "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

static const char *content_type(const char *name) {
    const char *dot = strrchr(name, '.');
    if (!dot) return "application/octet-stream";
    if (strcmp(dot, ".html") == 0) return "text/html; charset=utf-8";
    if (strcmp(dot, ".js") == 0) return "text/javascript; charset=utf-8";
    if (strcmp(dot, ".css") == 0) return "text/css; charset=utf-8";
    if (strcmp(dot, ".svg") == 0) return "image/svg+xml";
    if (strcmp(dot, ".png") == 0) return "image/png";
    return "application/octet-stream";
}

bool webui_wants_html(http_call *c) {
    const char *a = http_header(c, "Accept");
    for (; a && *a; a++)
        if (strncasecmp(a, "text/html", 9) == 0) return true;
    return false;
}

/* If-None-Match lists the ETag (or is "*"). */
static bool etag_matches(const char *inm, const char *etag) {
    if (!inm) return false;
    const size_t n = strlen(etag);
    for (const char *p = inm; *p; p++) {
        if (*p == '*') return true;
        if (strncmp(p, etag, n) == 0) return true;
    }
    return false;
}

void webui_reply(http_call *c, const char *name) {
    const webui_file *f = NULL;
    for (int i = 0; i < webui_n_files; i++)
        if (strcmp(webui_files[i].name, name) == 0) f = &webui_files[i];
    if (!f) {
        fld_error e = {0};
        fld_fail(&e, 404, NULL, "no web UI file %s", name);
        reply_openai_error(c, &e);
        return;
    }
    http_add_header(c, "Content-Security-Policy", CSP);
    http_add_header(c, "X-Content-Type-Options", "nosniff");
    http_add_header(c, "Referrer-Policy", "no-referrer");
    http_add_header(c, "Cache-Control", "no-cache");
    http_add_header(c, "ETag", f->etag);
    if (etag_matches(http_header(c, "If-None-Match"), f->etag)) {
        http_reply(c, 304, NULL, "", 0);
        return;
    }
    http_reply(c, 200, content_type(name), f->data, (size_t)f->len);
}
