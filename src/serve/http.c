/* http.c — requests and answers of the HTTP layer (see http.h and
 * http_internal.h): the daemon's start and stop, on_access (headers, body,
 * the refusals that come before any handler, the hand-over to a request
 * thread), answers queued to libmicrohttpd once the thread has resumed the
 * connection, and the access log. */
#include "serve/http_internal.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"


bool http_peer_gone(int fd) {
    if (fd < 0) return false;
    struct pollfd p = {.fd = fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
    if (p.revents & POLLIN) {
        char ch;
        if (recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 0) return true;
    }
    return false;
}

const char *http_method(const http_call *c) { return c->method; }
const char *http_path(const http_call *c) { return c->path; }
bool http_stopping(const http_server *s) { return s && atomic_load(&s->stopping); }
int http_port(const http_server *s) { return s->port; }

const char *http_header(const http_call *c, const char *name) {
    return MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, name);
}

const char *http_query(const http_call *c, const char *name) {
    return MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *http_body(const http_call *c, size_t *len) {
    if (len) *len = c->body_len;
    return c->body ? c->body : "";
}

bool http_client_gone(const http_call *c) { return atomic_load(&c->srv->stopping) || http_peer_gone(c->fd); }

void http_note(http_call *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->note, sizeof c->note, fmt, ap);
    va_end(ap);
}

void http_add_header(http_call *c, const char *name, const char *value) {
    if (c->n_hdr == HTTP_MAX_HEADERS) return;
    char *n = strdup(name), *v = strdup(value);
    if (!n || !v) {
        free(n);
        free(v);
        return;
    }
    c->hdr_name[c->n_hdr] = n;
    c->hdr_value[c->n_hdr++] = v;
}

/* ---- answers ---- */

static void clear_answer(http_call *c) {
    free(c->ctype);
    free(c->resp);
    c->ctype = c->resp = NULL;
    c->resp_len = 0;
}

static void set_answer(http_call *c, int status, const char *content_type, char *body, size_t len) {
    clear_answer(c);
    c->ctype = content_type ? strdup(content_type) : NULL;
    c->resp = body;
    c->resp_len = len;
    c->status = status;
    if (!body || (content_type && !c->ctype)) {
        clear_answer(c);
        c->status = 500;
    }
    c->phase = CALL_ANSWERED;
}

void http_reply(http_call *c, int status, const char *content_type, const char *body, size_t len) {
    char *b = malloc(len + 1);
    if (b) {
        memcpy(b, body, len);
        b[len] = 0;
    }
    set_answer(c, status, content_type, b, len);
}

void http_reply_wbuf(http_call *c, int status, const char *content_type, wbuf *b) {
    size_t len;
    char *data = wbuf_take(b, &len);
    set_answer(c, status, content_type, data, len);
}

void http_reply_stream(http_call *c, int status, const char *content_type, http_pull_fn pull, http_fin_fn fin,
                       void *ctx) {
    if (c->stream) return; /* one stream per request */
    http_stream *st = stream_new(c->srv, c->conn, c->fd, pull, fin, ctx);
    if (!st) {
        fin(ctx, true);
        http_reply(c, 500, "text/plain", "out of memory", 13);
        return;
    }
    clear_answer(c);
    c->ctype = content_type ? strdup(content_type) : NULL;
    c->stream = st;
    c->status = status;
    c->phase = CALL_ANSWERED;
    http_add_header(c, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
}

static void add_headers(http_call *c, struct MHD_Response *r) {
    for (int i = 0; i < c->n_hdr; i++) MHD_add_response_header(r, c->hdr_name[i], c->hdr_value[i]);
    if (c->ctype) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, c->ctype);
    if (c->close_after) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    } else if (c->srv->cfg.header_timeout_s > 0) {
        char ka[32];
        snprintf(ka, sizeof ka, "timeout=%d", c->srv->cfg.header_timeout_s);
        MHD_add_response_header(r, "Keep-Alive", ka);
    }
}

/* Queue the answer (event thread, after the request thread resumed the connection). */
static enum MHD_Result queue(http_call *c) {
    struct MHD_Response *r = NULL;
    if (c->stream) {
        r = stream_response(c->stream);
        c->stream_queued = r != NULL;
    } else if (c->resp) {
        r = MHD_create_response_from_buffer(c->resp_len, c->resp, MHD_RESPMEM_MUST_FREE);
        if (r) c->resp = NULL; /* the response owns it now */
    }
    if (!r) {
        clear_answer(c);
        c->status = 500;
        r = MHD_create_response_from_buffer(21, (void *)"internal server error", MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
    }
    add_headers(c, r);
    c->phase = CALL_SENT;
    enum MHD_Result rc = MHD_queue_response(c->conn, (unsigned)c->status, r);
    MHD_destroy_response(r);
    return rc;
}

/* A refusal written straight to the socket, for a request whose body is
 * still arriving (libmicrohttpd queues answers only before or after the
 * body); the connection is closed right after. Best effort. */
static void send_raw(http_call *c) {
    char head[1024];
    int n = snprintf(head, sizeof head, "HTTP/1.1 %d %s\r\nContent-Length: %zu\r\nConnection: close\r\n", c->status,
                     MHD_get_reason_phrase_for((unsigned)c->status), c->resp_len);
    if (c->ctype) n += snprintf(head + n, sizeof head - (size_t)n, "Content-Type: %s\r\n", c->ctype);
    for (int i = 0; i < c->n_hdr && n < (int)sizeof head - 4; i++)
        n += snprintf(head + n, sizeof head - (size_t)n, "%s: %s\r\n", c->hdr_name[i], c->hdr_value[i]);
    if (n > (int)sizeof head - 3) return;
    n += snprintf(head + n, sizeof head - (size_t)n, "\r\n");
    if (send(c->fd, head, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n && c->resp_len)
        (void)!send(c->fd, c->resp, c->resp_len, MSG_NOSIGNAL | MSG_DONTWAIT);
    shutdown(c->fd, SHUT_WR);
}

/* Refuse before the handler: the refuse callback answers in the path's API shape. */
static void refuse(http_call *c, int status, const char *why) {
    c->close_after = true;
    if (status == 503) http_add_header(c, "Retry-After", "1");
    c->srv->cfg.refuse(c->srv->cfg.user, c, status, why);
    if (c->phase != CALL_ANSWERED) http_reply(c, status, "text/plain", why, strlen(why));
}

/* ---- the body budget ---- */

static bool reserve(http_call *c, size_t total) {
    if (total <= c->reserved) return true;
    http_server *s = c->srv;
    size_t more = total - c->reserved, was = atomic_fetch_add(&s->body_bytes, more);
    if (was + more > s->cfg.body_budget) {
        atomic_fetch_sub(&s->body_bytes, more);
        return false;
    }
    c->reserved = total;
    return true;
}

/* ---- on_access ---- */

static const char *header(struct MHD_Connection *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* Headers are in: checks that need no handler. */
static enum MHD_Result first_call(http_server *s, struct MHD_Connection *conn, const char *url, const char *method,
                                  void **con_cls) {
    http_call *c = calloc(1, sizeof *c);
    if (!c) return MHD_NO;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    c->srv = s;
    c->conn = conn;
    c->hc = ci ? ci->socket_context : NULL;
    c->fd = c->hc ? c->hc->fd : -1;
    c->method = method;
    c->t0 = wick_now_ms();
    c->phase = CALL_READING;
    atomic_fetch_add(&s->active, 1);
    *con_cls = c;
    if (!(c->path = strndup(url, strcspn(url, "?")))) return MHD_NO;
    if (c->hc) conn_set_state(s, c->hc, CONN_READING);
    const char *te = header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const unsigned long long n = cl ? strtoull(cl, NULL, 10) : 0;
    char why[160];
    if (!c->hc || c->hc->refuse) {
        refuse(c, 503, "too many connections; retry later");
    } else if (c->hc->bad_url) {
        refuse(c, 400, "the URL holds an encoded NUL byte (%00)");
    } else if (te && strcasecmp(te, "chunked") != 0) {
        snprintf(why, sizeof why, "Transfer-Encoding \"%.60s\" is not supported (only chunked)", te);
        refuse(c, 501, why);
    } else if (n > s->cfg.body_limit) {
        snprintf(why, sizeof why, "request body is larger than the limit of %zu bytes", s->cfg.body_limit);
        refuse(c, 413, why);
    } else if (n && !reserve(c, (c->expect = (size_t)n + 1))) {
        refuse(c, 503, "server busy: too many request bodies in flight; retry later");
    } else {
        return MHD_YES;
    }
    if (c->hc && (n || te)) c->hc->linger = true; /* answered before the body: it may still be arriving */
    return queue(c);
}

/* A piece of the body. */
static enum MHD_Result body_data(http_call *c, const char *data, size_t *size) {
    http_server *s = c->srv;
    size_t n = *size;
    *size = 0;
    if (c->phase != CALL_READING) return MHD_YES; /* refused already: discarded */
    char why[160];
    const size_t need = c->body_len + n + 1;
    /* the buffer grows by doubling (within the limit), and the budget with it */
    size_t cap = c->body_cap ? c->body_cap : 4096;
    while (cap < need) cap *= 2;
    if (cap > s->cfg.body_limit + 1) cap = s->cfg.body_limit + 1;
    if (c->expect && cap > c->expect) cap = c->expect > need ? c->expect : need; /* Content-Length told us */
    if (need > s->cfg.body_limit + 1 || (!reserve(c, cap) && !reserve(c, need))) {
        if (need > s->cfg.body_limit + 1) {
            snprintf(why, sizeof why, "request body is larger than the limit of %zu bytes", s->cfg.body_limit);
            refuse(c, 413, why);
        } else {
            refuse(c, 503, "server busy: too many request bodies in flight; retry later");
        }
        send_raw(c);
        if (c->hc) c->hc->linger = true;
        return MHD_NO; /* stop reading: the connection closes */
    }
    if (need > c->body_cap) {
        if (cap > c->reserved) cap = c->reserved;
        char *b = realloc(c->body, cap);
        if (!b) return MHD_NO;
        c->body = b;
        c->body_cap = cap;
    }
    memcpy(c->body + c->body_len, data, n);
    c->body_len += n;
    c->body[c->body_len] = 0;
    if (c->hc) conn_body_seen(s, c->hc, n);
    return MHD_YES;
}

/* The whole request is in: hand it to a request thread (work_submit
 * suspends the connection). */
static enum MHD_Result dispatch(http_call *c) {
    if (c->hc) conn_set_state(c->srv, c->hc, CONN_HANDLING);
    c->phase = CALL_RUNNING;
    if (work_submit(c->srv, c)) return MHD_YES;
    c->phase = CALL_READING; /* no more work is taken: answer here */
    refuse(c, 503, "server is shutting down");
    return queue(c);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_size,
                                 void **con_cls) {
    (void)version;
    http_call *c = *con_cls;
    if (!c) return first_call(cls, conn, url, method, con_cls);
    if (*upload_size) return body_data(c, upload_data, upload_size);
    switch (c->phase) {
    case CALL_READING: return dispatch(c);
    case CALL_ANSWERED: return queue(c);
    default: return MHD_YES;
    }
}

void call_run(http_call *c) {
    c->srv->cfg.handler(c->srv->cfg.user, c);
    if (c->phase != CALL_ANSWERED) http_reply(c, 500, "text/plain", "no response", 11);
    http_stream *st = c->stream;
    struct MHD_Connection *conn = c->conn;
    /* c belongs to the event thread again once resumed: not touched after */
    MHD_resume_connection(conn);
    if (st) stream_run(st);
}

/* ---- the end of a request ---- */

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)conn;
    http_server *s = cls;
    http_call *c = *con_cls;
    if (!c) return;
    *con_cls = NULL;
    if (s->cfg.log) {
        const char *why = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
                          : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT ? " (client gone)"
                          : " (connection closed)";
        char note[260];
        snprintf(note, sizeof note, "%s%s", c->note, why);
        s->cfg.log(s->cfg.log_user, c->method, c->path ? c->path : "?", c->status, wick_now_ms() - c->t0, note);
    }
    if (c->stream) {
        if (!c->stream_queued) stream_close(c->stream);
        stream_unref(c->stream);
    }
    if (c->hc) conn_set_state(s, c->hc, CONN_WAITING);
    clear_answer(c);
    for (int i = 0; i < c->n_hdr; i++) {
        free(c->hdr_name[i]);
        free(c->hdr_value[i]);
    }
    if (c->reserved) atomic_fetch_sub(&s->body_bytes, c->reserved);
    free(c->path);
    free(c->body);
    free(c);
    atomic_fetch_sub(&s->active, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    (void)fmt;
    (void)ap; /* library code does not print; errors surface as failed calls */
}

/* ---- start and stop ---- */

static void defaults(http_config *c) {
    if (!c->header_timeout_s) c->header_timeout_s = 30; /* < 0: none */
    if (c->max_connections <= 0) c->max_connections = 2048;
    if (c->max_per_ip <= 0) c->max_per_ip = 512;
    if (c->max_workers <= 0) c->max_workers = c->max_connections;
    if (!c->body_budget) {
        c->body_budget = c->body_limit * 8;
        if (c->body_budget < (64u << 20)) c->body_budget = 64u << 20;
    }
}

http_server *http_start(const http_config *cfg, wick_error *err) {
    http_server *s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    defaults(&s->cfg);
    pthread_mutex_init(&s->cmu, NULL);
    pthread_cond_init(&s->ccv, NULL);
    pthread_mutex_init(&s->wmu, NULL);
    pthread_cond_init(&s->wcv, NULL);
    pthread_mutex_init(&s->lmu, NULL);
    pthread_cond_init(&s->lcv, NULL);
    const char *host = cfg->host && *cfg->host ? cfg->host : "127.0.0.1";
    char port[16];
    snprintf(port, sizeof port, "%d", cfg->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
                    *ai = NULL;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0 || !ai) {
        wick_fail(err, "cannot resolve host \"%s\": %s", host, gai_strerror(gai));
        goto fail;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    /* libmicrohttpd's own limit leaves room for connections we answer 503 */
    const unsigned hard = (unsigned)s->cfg.max_connections + (unsigned)s->cfg.max_connections / 8 + 64;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, s,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
                            MHD_OPTION_UNESCAPE_CALLBACK, conn_unescape, s,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(cfg->idle_timeout_s > 0 ? cfg->idle_timeout_s : 0),
                            MHD_OPTION_CONNECTION_LIMIT, hard,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!s->d) {
        wick_fail(err, "cannot listen on %s:%d (address in use or not available)", host, cfg->port);
        goto fail;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : cfg->port;
    if (conn_start_sweeper(s) < 0 || linger_start(s) < 0) {
        wick_fail(err, "cannot start a thread");
        MHD_stop_daemon(s->d);
        conn_stop_sweeper(s);
        linger_stop(s);
        goto fail;
    }
    return s;
fail:
    pthread_mutex_destroy(&s->cmu);
    pthread_cond_destroy(&s->ccv);
    pthread_mutex_destroy(&s->wmu);
    pthread_cond_destroy(&s->wcv);
    pthread_mutex_destroy(&s->lmu);
    pthread_cond_destroy(&s->lcv);
    free(s);
    return NULL;
}

void http_stop(http_server *s) {
    if (!s) return;
    /* let requests in flight end (streams with a closing event) for up to 4 s */
    atomic_store(&s->stopping, true);
    for (int i = 0; i < 400 && atomic_load(&s->active) > 0; i++) nanosleep(&(struct timespec){0, 10000000}, NULL);
    work_stop(s); /* no connection stays suspended past this */
    conn_stop_sweeper(s);
    MHD_stop_daemon(s->d);
    linger_stop(s);
    pthread_mutex_destroy(&s->cmu);
    pthread_cond_destroy(&s->ccv);
    pthread_mutex_destroy(&s->wmu);
    pthread_cond_destroy(&s->wcv);
    pthread_mutex_destroy(&s->lmu);
    pthread_cond_destroy(&s->lcv);
    free(s);
}
