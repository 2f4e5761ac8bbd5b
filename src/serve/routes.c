/* routes.c — the route table of `wick serve`: method and path to handler,
 * the API key check, body size and JSON parsing, and 404/405 answers in the
 * error shape of the API the path belongs to (OpenAI for /v1 and the
 * utility routes, Ollama for /api). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve/server.h"

typedef enum route_kind { R_GET, R_POST } route_kind;

typedef struct route {
    const char *method; /* "GET" also answers HEAD */
    const char *path;
    bool body, open;    /* needs a JSON body; no API key needed */
    void (*get)(serve_server *, http_call *);
    void (*post)(serve_server *, http_call *, cJSON *);
} route;

static void root(serve_server *s, http_call *c) {
    (void)s;
    reply_text(c, 200, "text/plain; charset=utf-8", "Ollama is running");
}

static const route ROUTES[] = {
    {"GET", "/", false, true, root, NULL},
    {"GET", "/health", false, true, util_health, NULL},
    {"GET", "/v1/health", false, true, util_health, NULL},
    {"GET", "/metrics", false, true, util_metrics, NULL},
    {"GET", "/v1/models", false, false, oai_models, NULL},
    {"POST", "/v1/completions", true, false, NULL, oai_completions},
    {"POST", "/v1/chat/completions", true, false, NULL, oai_chat},
    {"POST", "/v1/completions/render", true, false, NULL, oai_render_completions},
    {"POST", "/v1/chat/completions/render", true, false, NULL, oai_render_chat},
    {"POST", "/v1/query/execute", true, false, NULL, spnl_execute},
    {"POST", "/tokenize", true, false, NULL, util_tokenize},
    {"POST", "/detokenize", true, false, NULL, util_detokenize},
    {"POST", "/api/generate", true, false, NULL, oll_generate},
    {"POST", "/api/chat", true, false, NULL, oll_chat},
    {"POST", "/api/show", true, false, NULL, oll_show},
    {"GET", "/api/tags", false, false, oll_tags, NULL},
    {"GET", "/api/ps", false, false, oll_ps, NULL},
    {"GET", "/api/version", false, false, oll_version, NULL},
};

static bool is_ollama(const char *path) { return strncmp(path, "/api/", 5) == 0; }

static void error(http_call *c, const char *path, int status, const char *code, const char *fmt, const char *arg) {
    fld_error e = {0};
    fld_fail(&e, status, NULL, fmt, arg);
    if (code) snprintf(e.code, sizeof e.code, "%s", code);
    if (is_ollama(path)) reply_ollama_error(c, &e);
    else reply_openai_error(c, &e);
}

static bool authorized(const serve_server *s, http_call *c) {
    const char *key = s->cfg.api_key;
    if (!key || !*key) return true;
    const char *h = http_header(c, "Authorization");
    if (h && strncasecmp(h, "Bearer ", 7) == 0) {
        h += 7;
        while (*h == ' ') h++;
        if (strcmp(h, key) == 0) return true;
    }
    h = http_header(c, "x-api-key");
    return h && strcmp(h, key) == 0;
}

void routes_dispatch(void *user, http_call *c) {
    serve_server *s = user;
    const char *method = http_method(c), *path = http_path(c);
    bool head = strcmp(method, "HEAD") == 0;
    const route *r = NULL;
    bool path_known = false;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        if (strcmp(path, ROUTES[i].path) != 0) continue;
        path_known = true;
        if (strcmp(method, ROUTES[i].method) == 0 || (head && ROUTES[i].get)) r = &ROUTES[i];
    }
    bool model_path = !r && strncmp(path, "/v1/models/", 11) == 0 && path[11] &&
                      (strcmp(method, "GET") == 0 || head);
    if (!r && !model_path) {
        if (path_known) error(c, path, 405, NULL, "method %s not allowed here", method);
        else error(c, path, 404, NULL, "no route %s", path);
        return;
    }
    if (!(r && r->open) && !authorized(s, c)) {
        http_add_header(c, "WWW-Authenticate", "Bearer");
        error(c, path, 401, "invalid_api_key", "%s", "invalid or missing API key (Authorization: Bearer KEY)");
        return;
    }
    if (model_path) {
        oai_model(s, c, path + 11);
        return;
    }
    if (http_stopping(s->http) && !r->open) {
        error(c, path, 503, NULL, "%s", "server is shutting down");
        return;
    }
    if (!r->body) {
        r->get(s, c);
        return;
    }
    if (http_body_too_large(c)) {
        char lim[64];
        snprintf(lim, sizeof lim, "%zu", s->cfg.body_limit);
        error(c, path, 413, NULL, "request body is larger than the limit of %s bytes", lim);
        return;
    }
    size_t len;
    const char *body = http_body(c, &len);
    fld_error e = {0};
    cJSON *j = fld_parse_body(body, len, &e);
    if (!j) {
        if (is_ollama(path)) reply_ollama_error(c, &e);
        else reply_openai_error(c, &e);
        return;
    }
    r->post(s, c, j);
    cJSON_Delete(j);
}
