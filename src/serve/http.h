/* http.h — the HTTP layer of `wick serve` on libmicrohttpd: one event thread
 * (epoll) holds every connection, so idle and slow clients cost no thread;
 * a complete request runs its handler on a request thread. Connections are
 * capped (in all and per client address: a new one evicts the oldest that
 * has not sent a whole request, else is answered 503) and must send a whole
 * request within a deadline. Request bodies are collected up to a limit and
 * under a budget for all bodies at once; answers are whole or streamed
 * (chunked); a client that leaves is noticed. It knows nothing of models or
 * JSON APIs: every complete request goes to one handler. */
#ifndef WICK_SERVE_HTTP_H
#define WICK_SERVE_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "wick.h"

typedef struct http_server http_server;
typedef struct http_call http_call;

/* Called once per complete request on a request thread (it may block); it
 * must answer with http_reply or http_reply_stream. */
typedef void (*http_handler)(void *user, http_call *call);
/* Called on the event thread (it must not block) for a request refused
 * before its handler runs (413 body too large, 400 bad URL, 501 unsupported
 * Transfer-Encoding, 503 no room or shutting down): it answers with
 * http_reply in the shape of the path's API. */
typedef void (*http_refuse_fn)(void *user, http_call *call, int status, const char *why);
/* A finished request, for the access log. */
typedef void (*http_log_fn)(void *user, const char *method, const char *path, int status,
                            double ms, const char *note);

typedef struct http_config {
    const char *host;  /* NULL = 127.0.0.1 */
    int port;          /* 0 = any free port */
    size_t body_limit;      /* bytes; a larger body is refused with 413 as soon as it is seen */
    size_t body_budget;     /* bytes of all request bodies held at once; 0 = 8 x body_limit (at least 64 MiB) */
    int idle_timeout_s;     /* a connection with no traffic is closed after this; 0 = never */
    int header_timeout_s;   /* a whole request (headers and body) must arrive within this of the
                               connection's start or its previous answer; 0 = 30, < 0 = none */
    int max_connections;    /* 0 = 2048 */
    int max_per_ip;         /* connections from one address; 0 = 512 */
    int max_workers;        /* request threads; 0 = max_connections */
    http_handler handler;
    http_refuse_fn refuse;
    void *user;
    http_log_fn log; /* may be NULL */
    void *log_user;
} http_config;

http_server *http_start(const http_config *cfg, wick_error *err);
int http_port(const http_server *s);
/* Mark the server as stopping (routes see http_stopping and end their work;
 * a stream gets 3 s to close itself), wait up to 4 s for the requests in
 * flight, answer new ones 503, join the request threads, stop the daemon and
 * free. */
void http_stop(http_server *s);
/* False for NULL too: requests can arrive while http_start is still
 * returning, before its caller has stored the server. */
bool http_stopping(const http_server *s);

const char *http_method(const http_call *c);
const char *http_path(const http_call *c);    /* without the query string */
const char *http_header(const http_call *c, const char *name); /* NULL if absent */
const char *http_query(const http_call *c, const char *name);  /* a query-string argument; NULL if absent */
const char *http_body(const http_call *c, size_t *len);        /* NUL-terminated */
/* True once the client has closed its connection, or the server is stopping
 * (for handlers, while they run). */
bool http_client_gone(const http_call *c);
/* A short note for the access log line (model, tokens). */
void http_note(http_call *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add a response header (before or after the reply call; at most 16). */
void http_add_header(http_call *c, const char *name, const char *value);
/* A whole response; body is copied. */
void http_reply(http_call *c, int status, const char *content_type, const char *body, size_t len);
/* Take the buffer's data as the body (b is emptied). */
void http_reply_wbuf(http_call *c, int status, const char *content_type, wbuf *b);

/* A streamed response. pull appends the next bytes to out, waiting at most
 * timeout_ms for them: it returns 1 (more may follow), 0 (the stream ends
 * after what it appended) or -1 (abort the connection). fin is called once
 * when the response is done with, whether it completed or the client left
 * (aborted = true then). */
typedef int (*http_pull_fn)(void *ctx, wbuf *out, int timeout_ms);
typedef void (*http_fin_fn)(void *ctx, bool aborted);
void http_reply_stream(http_call *c, int status, const char *content_type, http_pull_fn pull,
                       http_fin_fn fin, void *ctx);

#endif
