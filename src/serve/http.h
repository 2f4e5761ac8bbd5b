/* http.h — the HTTP layer of `wick serve` on libmicrohttpd: one thread per
 * connection, request bodies collected up to a limit, whole and streamed
 * (chunked) responses, client-disconnect detection. It knows nothing of
 * models or JSON APIs: every complete request goes to one handler. */
#ifndef WICK_SERVE_HTTP_H
#define WICK_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "serve/sbuf.h"
#include "wick.h"

typedef struct http_server http_server;
typedef struct http_call http_call;

/* Called once per complete request on the connection's own thread (it may
 * block); it must answer with http_reply or http_reply_stream. */
typedef void (*http_handler)(void *user, http_call *call);
/* A finished request, for the access log. */
typedef void (*http_log_fn)(void *user, const char *method, const char *path, int status,
                            double ms, const char *note);

typedef struct http_config {
    const char *host;  /* NULL = 127.0.0.1 */
    int port;          /* 0 = any free port */
    size_t body_limit; /* bytes; larger bodies reach the handler with http_body_too_large */
    int idle_timeout_s;
    int max_connections;
    http_handler handler;
    void *user;
    http_log_fn log; /* may be NULL */
    void *log_user;
} http_config;

http_server *http_start(const http_config *cfg, wick_error *err);
int http_port(const http_server *s);
/* Mark the server as stopping (routes see http_stopping and end their work;
 * a stream gets 3 s to close itself), wait up to 4 s for the requests in
 * flight, then stop the daemon, join every connection thread and free. */
void http_stop(http_server *s);
bool http_stopping(const http_server *s);

const char *http_method(const http_call *c);
const char *http_path(const http_call *c);    /* without the query string */
const char *http_header(const http_call *c, const char *name); /* NULL if absent */
const char *http_query(const http_call *c, const char *name);  /* a query-string argument; NULL if absent */
const char *http_body(const http_call *c, size_t *len);        /* NUL-terminated */
bool http_body_too_large(const http_call *c);
/* True once the client has closed its connection, or the server is stopping. */
bool http_client_gone(const http_call *c);
/* A short note for the access log line (model, tokens). */
void http_note(http_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add a response header (before or after the reply call). */
void http_add_header(http_call *c, const char *name, const char *value);
/* A whole response; body is copied. */
void http_reply(http_call *c, int status, const char *content_type, const char *body, size_t len);
/* Take the buffer's data as the body (b is emptied). */
void http_reply_sbuf(http_call *c, int status, const char *content_type, sbuf *b);

/* A streamed response. pull appends the next bytes to out, waiting at most
 * timeout_ms for them: it returns 1 (more may follow), 0 (the stream ends
 * after what it appended) or -1 (abort the connection). fin is called once
 * when the response is done with, whether it completed or the client left
 * (aborted = true then). */
typedef int (*http_pull_fn)(void *ctx, sbuf *out, int timeout_ms);
typedef void (*http_fin_fn)(void *ctx, bool aborted);
void http_reply_stream(http_call *c, int status, const char *content_type, http_pull_fn pull,
                       http_fin_fn fin, void *ctx);

#endif
