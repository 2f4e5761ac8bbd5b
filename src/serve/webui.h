/* webui.h — the built-in web chat of `wick serve`: the page at / (for
 * browsers) and its files under /webui/, embedded in the binary at build
 * time (scripts/embed_files.c writes webui_files from src/serve/webui/ and
 * the Debian-packaged marked and DOMPurify). */
#ifndef WICK_SERVE_WEBUI_H
#define WICK_SERVE_WEBUI_H

#include <stdbool.h>
#include <stddef.h>

typedef struct webui_file {
    const char *name; /* base name: index.html, app.js, marked.min.js, ... */
    const char *data;
    long len;
    const char *etag; /* quoted hash of the bytes */
} webui_file;

extern const webui_file webui_files[];
extern const int webui_n_files;

typedef struct http_call http_call;

/* The prefix of the files' paths. */
#define WEBUI_PREFIX "/webui/"

/* True when the request's Accept asks for HTML (a browser opening /). */
bool webui_wants_html(http_call *c);
/* Answers GET/HEAD for the file NAME (index.html for the page), with its
 * Content-Type, the Content-Security-Policy, ETag (304 on If-None-Match) and
 * Cache-Control; 404 in OpenAI's error shape when there is none. */
void webui_reply(http_call *c, const char *name);

#endif
