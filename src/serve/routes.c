/* routes.c — the route table of `wick serve`: method and path to handler;
 * before any handler, the Host and Origin checks (origin.h) with CORS
 * headers and preflights, the API key (compared in constant time; unknown
 * routes answer 401 too, so that a key-less client learns nothing), the
 * optional metrics key, the body's type and strict JSON parsing; 401, 404,
 * 405, 415 and the HTTP layer's refusals in the error shape of the API the
 * path belongs to (OpenAI for /v1 and the utility routes, Anthropic for
 * /v1/messages, Ollama for /api). */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve/anthropic.h"
#include "serve/llama_native.h"
#include "serve/responses.h"
#include "serve/server.h"
#include "serve/webui.h"

typedef struct route {
    const char *method; /* "GET" also answers HEAD */
    const char *path;
    bool body, open;    /* needs a JSON body; no API key needed */
    void (*get)(serve_server *, http_call *);
    void (*post)(serve_server *, http_call *, cJSON *);
    bool text_ok;       /* the JSON body may come as text/plain (spnl's client sends it so) */
} route;

/* The web chat for browsers (Accept: text/html); "Ollama is running" for
 * curl and Ollama's clients, which probe / for it. */
static void root(serve_server *s, http_call *c) {
    http_add_header(c, "Vary", "Accept");
    if (!s->cfg.no_webui && webui_wants_html(c)) {
        webui_reply(c, "index.html");
        return;
    }
    reply_text(c, 200, "text/plain; charset=utf-8", "Ollama is running");
}

static const route ROUTES[] = {
    {"GET", "/", false, true, root, NULL, false},
    {"GET", "/health", false, true, util_health, NULL, false},
    {"GET", "/v1/health", false, true, util_health, NULL, false},
    {"GET", "/metrics", false, true, util_metrics, NULL, false},
    {"GET", "/v1/models", false, false, ln_models, NULL, false},
    {"GET", "/models", false, true, ln_models, NULL, false}, /* public, as llama-server keeps it */
    {"POST", "/chat/completions", true, false, NULL, oai_chat, false},
    /* llama-server's native API (llama_native*.c) */
    {"POST", "/completion", true, false, NULL, ln_completion, false},
    {"POST", "/completions", true, false, NULL, ln_completion, false},
    {"POST", "/infill", true, false, NULL, ln_infill, false},
    {"POST", "/apply-template", true, false, NULL, ln_apply_template, false},
    {"POST", "/v1/chat/completions/input_tokens", true, false, NULL, ln_chat_input_tokens, false},
    {"GET", "/props", false, false, ln_props_get, NULL, false},
    {"POST", "/props", true, false, NULL, ln_props_post, false},
    {"GET", "/slots", false, false, ln_slots_get, NULL, false},
    {"POST", "/v1/completions", true, false, NULL, oai_completions, false},
    {"POST", "/v1/chat/completions", true, false, NULL, oai_chat, false},
    {"POST", "/v1/responses", true, false, NULL, resp_create, false},
    {"POST", "/v1/completions/render", true, false, NULL, oai_render_completions, false},
    {"POST", "/v1/chat/completions/render", true, false, NULL, oai_render_chat, false},
    {"POST", "/v1/messages", true, false, NULL, anth_messages, false},
    {"POST", "/v1/messages/count_tokens", true, false, NULL, anth_count_tokens, false},
    {"POST", "/v1/query/execute", true, false, NULL, spnl_execute, true},
    {"POST", "/tokenize", true, false, NULL, util_tokenize, false},
    {"POST", "/detokenize", true, false, NULL, util_detokenize, false},
    {"POST", "/api/generate", true, false, NULL, oll_generate, false},
    {"POST", "/api/chat", true, false, NULL, oll_chat, false},
    {"POST", "/api/show", true, false, NULL, oll_show, false},
    {"GET", "/api/tags", false, false, oll_tags, NULL, false},
    {"GET", "/api/ps", false, false, oll_ps, NULL, false},
    {"GET", "/api/version", false, false, oll_version, NULL, false},
};

static bool is_ollama(const char *path) { return strncmp(path, "/api/", 5) == 0; }
static bool is_anthropic(const char *path) {
    return strcmp(path, "/v1/messages") == 0 || strncmp(path, "/v1/messages/", 13) == 0;
}

/* An error in the shape of the path's API. */
static void reply_error(http_call *c, const char *path, const fld_error *e) {
    if (is_ollama(path)) reply_ollama_error(c, e);
    else if (is_anthropic(path)) reply_anthropic_error(c, e);
    else reply_openai_error(c, e);
}

static void error(http_call *c, const char *path, int status, const char *code, const char *fmt, const char *arg) {
    fld_error e = {0};
    fld_fail(&e, status, NULL, fmt, arg);
    if (code) snprintf(e.code, sizeof e.code, "%s", code);
    reply_error(c, path, &e);
}

/* Equal strings, in a time that depends on the key's length only. */
static bool key_eq(const char *given, const char *key) {
    const size_t lg = strlen(given), lk = strlen(key);
    unsigned char d = lg != lk;
    for (size_t i = 0; i < lk; i++) d |= (unsigned char)(key[i] ^ (i < lg ? given[i] : 0));
    return d == 0;
}

/* "Authorization: Bearer KEY" or "x-api-key: KEY" (Anthropic's spelling). */
static bool has_key(http_call *c, const char *key) {
    const char *h = http_header(c, "Authorization");
    if (h && strncasecmp(h, "Bearer ", 7) == 0) {
        h += 7;
        while (*h == ' ') h++;
        if (key_eq(h, key)) return true;
    }
    h = http_header(c, "x-api-key");
    return h && key_eq(h, key);
}

static bool authorized(const serve_server *s, http_call *c) {
    const char *key = s->cfg.api_key;
    return !key || !*key || has_key(c, key);
}

/* The CORS headers of an answer to an allowed browser origin. Credentials
 * are allowed: the origin is echoed, never "*". */
static void cors(http_call *c, const char *origin) {
    if (!origin) return;
    http_add_header(c, "Access-Control-Allow-Origin", origin);
    http_add_header(c, "Access-Control-Allow-Credentials", "true");
    http_add_header(c, "Vary", "Origin");
    http_add_header(c, "Access-Control-Expose-Headers", "retry-after, x-should-retry");
}

/* A CORS preflight (OPTIONS) from an allowed origin, or a plain OPTIONS;
 * 200 as llama-server answers. Methods: GET and POST (llama-server's list)
 * and DELETE when asked for (Ollama's /api/delete). Headers: the ones asked
 * for, by name: a wildcard would not let a browser send Authorization. */
static void preflight(http_call *c, const char *origin) {
    if (origin) {
        const char *h = http_header(c, "Access-Control-Request-Headers");
        const char *m = http_header(c, "Access-Control-Request-Method");
        const bool del = m && strcasecmp(m, "DELETE") == 0;
        http_add_header(c, "Access-Control-Allow-Methods", del ? "GET, POST, DELETE" : "GET, POST");
        http_add_header(c, "Access-Control-Allow-Headers", h && *h ? h : "Authorization, Content-Type, x-api-key");
        http_add_header(c, "Access-Control-Max-Age", "600");
    }
    http_add_header(c, "Allow", "GET, HEAD, POST, DELETE, OPTIONS");
    http_reply(c, 200, NULL, "", 0);
}

/* Bodies are JSON: application/json, application/<x>+json, none, or curl -d's
 * form type (what `curl -d '{...}'` sends, as the Ollama docs show). */
static bool json_content_type(const char *ct, bool text_ok) {
    if (!ct) return true;
    while (*ct == ' ') ct++;
    size_t n = strcspn(ct, ";");
    while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t')) n--;
    if (n == 0) return true;
    if (text_ok && n == 10 && strncasecmp(ct, "text/plain", 10) == 0) return true;
    if (n == 16 && strncasecmp(ct, "application/json", 16) == 0) return true;
    if (n == 33 && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0) return true;
    return n > 17 && strncasecmp(ct, "application/", 12) == 0 && strncasecmp(ct + n - 5, "+json", 5) == 0;
}

/* POST /slots/{id}?action=...: the body (a JSON object) may be absent, as
 * for action=erase. */
static void slot_action(serve_server *s, http_call *c, const char *rest) {
    if (http_stopping(s->http)) {
        error(c, http_path(c), 503, NULL, "%s", "server is shutting down");
        return;
    }
    size_t len;
    const char *body = http_body(c, &len);
    fld_error e = {0};
    cJSON *j = len ? fld_parse_body(body, len, &e) : cJSON_CreateObject();
    if (!j) {
        reply_openai_error(c, &e);
        return;
    }
    ln_slots_action(s, c, rest, j);
    cJSON_Delete(j);
}

void routes_refuse(void *user, http_call *c, int status, const char *why) {
    serve_server *s = user;
    const char *origin = http_header(c, "Origin");
    if (origin && origin_allowed(&s->origins, origin)) cors(c, origin);
    error(c, http_path(c), status, NULL, "%s", why);
}

void routes_dispatch(void *user, http_call *c) {
    serve_server *s = user;
    const char *method = http_method(c), *path = http_path(c);
    const char *origin = http_header(c, "Origin");
    if (!origin_host_allowed(&s->origins, http_header(c, "Host"))) {
        error(c, path, 403, NULL, "%s",
              "this Host name is not answered: a server on a loopback address answers loopback names only (a guard "
              "against DNS rebinding); start it with --host to serve others");
        return;
    }
    if (origin && !origin_allowed(&s->origins, origin) && !origin_same_site(&s->origins, origin, http_header(c, "Host"))) {
        error(c, path, 403, NULL, "%s", "this browser origin is not allowed (see --allowed-origins)");
        return;
    }
    cors(c, origin);
    if (strcmp(method, "OPTIONS") == 0) {
        preflight(c, origin);
        return;
    }
    bool head = strcmp(method, "HEAD") == 0;
    const route *r = NULL;
    bool path_known = false;
    for (size_t i = 0; i < sizeof ROUTES / sizeof ROUTES[0]; i++) {
        if (strcmp(path, ROUTES[i].path) != 0) continue;
        path_known = true;
        if (strcmp(method, ROUTES[i].method) == 0 || (head && ROUTES[i].get)) r = &ROUTES[i];
    }
    const bool model_path = strncmp(path, "/v1/models/", 11) == 0 && path[11];
    const bool resp_path = strncmp(path, "/v1/responses/", 14) == 0 && path[14] && !strchr(path + 14, '/');
    const bool slot_path = strncmp(path, "/slots/", 7) == 0 && path[7] && !strchr(path + 7, '/');
    if (model_path || resp_path || slot_path) path_known = true;
    /* the web chat's files are open, as / is */
    if (!s->cfg.no_webui && strncmp(path, WEBUI_PREFIX, strlen(WEBUI_PREFIX)) == 0 && (strcmp(method, "GET") == 0 || head)) {
        webui_reply(c, path + strlen(WEBUI_PREFIX));
        return;
    }
    /* with a key, nothing but the open routes is told apart without it (not even 404) */
    if (!(r && r->open) && !authorized(s, c)) {
        http_add_header(c, "WWW-Authenticate", "Bearer");
        error(c, path, 401, "invalid_api_key", "%s",
              "invalid or missing API key (Authorization: Bearer KEY, or x-api-key: KEY)");
        return;
    }
    if (r && r->get == util_metrics && s->cfg.metrics_key && *s->cfg.metrics_key && !has_key(c, s->cfg.metrics_key)) {
        http_add_header(c, "WWW-Authenticate", "Bearer");
        error(c, path, 401, "invalid_api_key", "%s", "/metrics needs the metrics key (Authorization: Bearer KEY)");
        return;
    }
    if (model_path && (strcmp(method, "GET") == 0 || head)) {
        oai_model(s, c, path + 11);
        return;
    }
    if (resp_path && (strcmp(method, "GET") == 0 || head)) {
        resp_get(s, c, path + 14);
        return;
    }
    if (resp_path && strcmp(method, "DELETE") == 0) {
        resp_delete(s, c, path + 14);
        return;
    }
    if (slot_path && strcmp(method, "POST") == 0) {
        slot_action(s, c, path + 7);
        return;
    }
    if (!r) {
        if (path_known) {
            http_add_header(c, "Allow", model_path ? "GET, HEAD" : resp_path ? "GET, HEAD, DELETE" : slot_path ? "POST" : "GET, HEAD, POST");
            error(c, path, 405, NULL, "method %s not allowed here", method);
        } else {
            error(c, path, 404, NULL, "no route %s", path);
        }
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
    if (!json_content_type(http_header(c, "Content-Type"), r->text_ok)) {
        error(c, path, 415, NULL, "%s", "the request body must be JSON (Content-Type: application/json)");
        return;
    }
    size_t len;
    const char *body = http_body(c, &len);
    fld_error e = {0};
    cJSON *j = fld_parse_body(body, len, &e);
    if (!j) {
        reply_error(c, path, &e);
        return;
    }
    r->post(s, c, j);
    cJSON_Delete(j);
}
