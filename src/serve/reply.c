/* reply.c — JSON and error replies of `wick serve`, ids and timestamps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/server.h"

void reply_json(http_call *c, int status, cJSON *j) {
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!s) {
        reply_text(c, 500, "application/json", "{\"error\":\"out of memory\"}");
        return;
    }
    http_reply(c, status, "application/json", s, strlen(s));
    free(s);
}

void reply_text(http_call *c, int status, const char *content_type, const char *text) {
    http_reply(c, status, content_type, text, strlen(text));
}

static void retry_headers(http_call *c, const fld_error *e) {
    if (e->no_retry) http_add_header(c, "x-should-retry", "false");
    if (e->retry_after > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", e->retry_after);
        http_add_header(c, "retry-after", v);
    }
}

static const char *openai_type(int status) {
    switch (status) {
    case 400: case 413: case 422: return "invalid_request_error";
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 429: return "rate_limit_error";
    case 503: return "unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
    }
}

void reply_openai_error(http_call *c, const fld_error *e) {
    int status = e->status ? e->status : 500;
    cJSON *j = cJSON_CreateObject(), *err = cJSON_AddObjectToObject(j, "error");
    cJSON_AddStringToObject(err, "message", e->msg);
    /* a prompt over the context: llama-server's type and counts (OpenAI's code stays) */
    cJSON_AddStringToObject(err, "type", e->n_ctx > 0 ? "exceed_context_size_error" : openai_type(status));
    if (e->n_ctx > 0) {
        cJSON_AddNumberToObject(err, "n_prompt_tokens", e->n_prompt_tokens);
        cJSON_AddNumberToObject(err, "n_ctx", e->n_ctx);
    }
    if (e->param[0]) cJSON_AddStringToObject(err, "param", e->param);
    else cJSON_AddNullToObject(err, "param");
    if (e->code[0]) cJSON_AddStringToObject(err, "code", e->code);
    else cJSON_AddNullToObject(err, "code");
    retry_headers(c, e);
    http_note(c, "error: %.150s", e->msg);
    reply_json(c, status, j);
}

void reply_ollama_error(http_call *c, const fld_error *e) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", e->msg);
    retry_headers(c, e);
    http_note(c, "error: %.150s", e->msg);
    reply_json(c, e->status ? e->status : 500, j);
}

void reply_new_id(serve_server *s, const char *prefix, char *out, size_t cap) {
    unsigned long long n = atomic_fetch_add(&s->next_id, 1);
    /* the wall clock's nanoseconds as entropy for the id, so ids differ across restarts */
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    unsigned long long x = ((unsigned long long)t.tv_sec * 1000000007ull) ^ ((unsigned long long)t.tv_nsec << 20) ^
                           (n * 0x9E3779B97F4A7C15ull);
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 32;
    snprintf(out, cap, "%s%016llx%04llx", prefix, x, n & 0xffff);
}


void reply_rfc3339(double wall_s, char *out, size_t cap) {
    time_t sec = (time_t)wall_s;
    long ns = (long)((wall_s - (double)sec) * 1e9);
    if (ns < 0) ns = 0;
    if (ns > 999999999) ns = 999999999;
    struct tm tm;
    gmtime_r(&sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out, cap, "%s.%09ldZ", base, ns);
}
