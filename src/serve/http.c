/* http.c — the HTTP layer on libmicrohttpd (see http.h). One thread per
 * connection, so handlers and stream pulls may block; a stream pull waits in
 * short slices and checks the socket between them, so a client that leaves
 * mid-stream ends the response (and the route's fin callback cancels its work). */
#include "serve/http.h"

#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "core/error.h"

#define HTTP_MAX_HEADERS 8

struct http_server {
    struct MHD_Daemon *d;
    http_config cfg;
    atomic_bool stopping;
    atomic_int active; /* requests between their first byte and their end */
    int port;
};

struct http_call {
    http_server *srv;
    struct MHD_Connection *conn;
    const char *method;
    char *path;
    char *body;
    size_t body_len, body_cap;
    bool too_large, answered;
    int status;
    struct MHD_Response *resp;
    char *hdr_name[HTTP_MAX_HEADERS], *hdr_value[HTTP_MAX_HEADERS];
    int n_hdr;
    double t0;
    char note[200];
};

typedef struct http_stream {
    http_server *srv;
    struct MHD_Connection *conn;
    http_pull_fn pull;
    http_fin_fn fin;
    void *ctx;
    sbuf out;
    size_t off;
    bool ended; /* pull said the stream ends */
    double t_stop; /* when the stream first saw the server stopping */
    bool done;  /* every byte handed to MHD */
} http_stream;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

const char *http_method(const http_call *c) { return c->method; }
const char *http_path(const http_call *c) { return c->path; }
bool http_body_too_large(const http_call *c) { return c->too_large; }
bool http_stopping(const http_server *s) { return atomic_load(&s->stopping); }
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

/* The peer closed its end (the server stopping does not count here). */
static bool peer_gone(struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci) return false;
    struct pollfd p = {.fd = ci->connect_fd, .events = POLLIN | POLLRDHUP};
    if (poll(&p, 1, 0) <= 0) return false;
    if (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
    if (p.revents & POLLIN) {
        char ch;
        if (recv(ci->connect_fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 0) return true;
    }
    return false;
}

bool http_client_gone(const http_call *c) { return atomic_load(&c->srv->stopping) || peer_gone(c->conn); }

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

static void set_response(http_call *c, int status, const char *content_type, struct MHD_Response *r) {
    if (c->resp) MHD_destroy_response(c->resp);
    c->resp = r;
    c->status = r ? status : 500;
    c->answered = true;
    if (r && content_type) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
}

void http_reply(http_call *c, int status, const char *content_type, const char *body, size_t len) {
    set_response(c, status, content_type,
                 MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY));
}

void http_reply_sbuf(http_call *c, int status, const char *content_type, sbuf *b) {
    size_t len;
    char *data = sbuf_take(b, &len);
    if (!data) {
        http_reply(c, 500, "text/plain", "out of memory", 13);
        return;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(len, data, MHD_RESPMEM_MUST_FREE);
    if (!r) free(data);
    set_response(c, status, content_type, r);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    http_stream *st = cls;
    while (st->off == st->out.len) {
        if (st->ended) {
            st->done = true;
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        sbuf_reset(&st->out);
        st->off = 0;
        if (atomic_load(&st->srv->stopping) && st->t_stop == 0) st->t_stop = now_ms();
        int rc = st->pull(st->ctx, &st->out, 200);
        if (rc < 0 || st->out.oom) return MHD_CONTENT_READER_END_WITH_ERROR;
        if (rc == 0) st->ended = true;
        /* stopping: the pull ends the stream itself (cancelled); a stream that
         * does not end within the grace time is cut */
        if (st->out.len == 0 && !st->ended &&
            (peer_gone(st->conn) || (atomic_load(&st->srv->stopping) && now_ms() - st->t_stop > 3000)))
            return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    size_t n = st->out.len - st->off;
    if (n > max) n = max;
    memcpy(buf, st->out.data + st->off, n);
    st->off += n;
    return (ssize_t)n;
}

static void stream_free(void *cls) {
    http_stream *st = cls;
    st->fin(st->ctx, !st->done);
    sbuf_free(&st->out);
    free(st);
}

void http_reply_stream(http_call *c, int status, const char *content_type, http_pull_fn pull,
                       http_fin_fn fin, void *ctx) {
    http_stream *st = calloc(1, sizeof *st);
    if (!st) {
        fin(ctx, true);
        http_reply(c, 500, "text/plain", "out of memory", 13);
        return;
    }
    st->srv = c->srv;
    st->conn = c->conn;
    st->pull = pull;
    st->fin = fin;
    st->ctx = ctx;
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st,
                                                               stream_free);
    if (!r) {
        stream_free(st);
        http_reply(c, 500, "text/plain", "out of memory", 13);
        return;
    }
    MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    set_response(c, status, content_type, r);
}

static enum MHD_Result queue(http_call *c) {
    if (!c->resp) {
        c->status = 500;
        c->resp = MHD_create_response_from_buffer(21, (void *)"internal server error", MHD_RESPMEM_PERSISTENT);
        if (!c->resp) return MHD_NO;
    }
    for (int i = 0; i < c->n_hdr; i++) MHD_add_response_header(c->resp, c->hdr_name[i], c->hdr_value[i]);
    enum MHD_Result rc = MHD_queue_response(c->conn, (unsigned)c->status, c->resp);
    MHD_destroy_response(c->resp);
    c->resp = NULL;
    return rc;
}

static void dispatch(http_call *c) {
    c->srv->cfg.handler(c->srv->cfg.user, c);
    if (!c->answered) http_reply(c, 500, "text/plain", "no response", 11);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                 const char *version, const char *upload_data, size_t *upload_size,
                                 void **con_cls) {
    (void)version;
    http_server *srv = cls;
    http_call *c = *con_cls;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c) return MHD_NO;
        c->srv = srv;
        c->conn = conn;
        c->method = method;
        c->t0 = now_ms();
        atomic_fetch_add(&srv->active, 1);
        size_t pl = strcspn(url, "?");
        c->path = strndup(url, pl);
        *con_cls = c;
        if (!c->path) return MHD_NO;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > srv->cfg.body_limit) {
            /* answer at once; libmicrohttpd closes the connection after it */
            c->too_large = true;
            dispatch(c);
            return queue(c);
        }
        return MHD_YES;
    }
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (c->too_large || c->answered) return MHD_YES;
        if (c->body_len + n > srv->cfg.body_limit) {
            c->too_large = true;
            free(c->body);
            c->body = NULL;
            c->body_len = c->body_cap = 0;
            return MHD_YES;
        }
        if (c->body_len + n + 1 > c->body_cap) {
            size_t cap = c->body_cap ? c->body_cap : 4096;
            while (cap < c->body_len + n + 1) cap *= 2;
            char *b = realloc(c->body, cap);
            if (!b) return MHD_NO;
            c->body = b;
            c->body_cap = cap;
        }
        memcpy(c->body + c->body_len, upload_data, n);
        c->body_len += n;
        c->body[c->body_len] = 0;
        return MHD_YES;
    }
    if (c->answered) return MHD_YES;
    dispatch(c);
    return queue(c);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)conn;
    http_server *srv = cls;
    http_call *c = *con_cls;
    if (!c) return;
    *con_cls = NULL;
    if (srv->cfg.log) {
        const char *why = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK ? ""
                          : toe == MHD_REQUEST_TERMINATED_CLIENT_ABORT ? " (client gone)"
                          : " (connection closed)";
        char note[260];
        snprintf(note, sizeof note, "%s%s", c->note, why);
        srv->cfg.log(srv->cfg.log_user, c->method, c->path ? c->path : "?", c->status, now_ms() - c->t0, note);
    }
    if (c->resp) MHD_destroy_response(c->resp);
    for (int i = 0; i < c->n_hdr; i++) {
        free(c->hdr_name[i]);
        free(c->hdr_value[i]);
    }
    free(c->path);
    free(c->body);
    free(c);
    atomic_fetch_sub(&srv->active, 1);
}

static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    (void)fmt;
    (void)ap; /* library code does not print; errors surface as failed calls */
}

http_server *http_start(const http_config *cfg, wick_error *err) {
    http_server *s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail(err, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    const char *host = cfg->host && *cfg->host ? cfg->host : "127.0.0.1";
    char port[16];
    snprintf(port, sizeof port, "%d", cfg->port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE},
                    *ai = NULL;
    int gai = getaddrinfo(host, port, &hints, &ai);
    if (gai != 0 || !ai) {
        wick_fail(err, "cannot resolve host \"%s\": %s", host, gai_strerror(gai));
        free(s);
        return NULL;
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ITC;
    if (ai->ai_family == AF_INET6) flags |= MHD_USE_IPv6;
    s->d = MHD_start_daemon(flags, 0, NULL, NULL, on_access, s,
                            MHD_OPTION_SOCK_ADDR, ai->ai_addr,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(cfg->idle_timeout_s > 0 ? cfg->idle_timeout_s : 0),
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)(cfg->max_connections > 0 ? cfg->max_connections : 1024),
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
                            MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
                            MHD_OPTION_END);
    freeaddrinfo(ai);
    if (!s->d) {
        wick_fail(err, "cannot listen on %s:%d (address in use or not available)", host, cfg->port);
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : cfg->port;
    return s;
}

void http_stop(http_server *s) {
    if (!s) return;
    /* let requests in flight end (streams with a closing event) for up to 4 s */
    atomic_store(&s->stopping, true);
    for (int i = 0; i < 400 && atomic_load(&s->active) > 0; i++) nanosleep(&(struct timespec){0, 10000000}, NULL);
    MHD_stop_daemon(s->d);
    free(s);
}
