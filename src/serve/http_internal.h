/* http_internal.h — what the files of the HTTP layer share (http.c: requests
 * and answers; http_conn.c: the connection table, its caps and deadlines;
 * http_work.c: the request threads; http_stream.c: streamed answers;
 * http_linger.c: closing sockets whose body was left unread). Not
 * for the routes: they see http.h only.
 *
 * Threads: libmicrohttpd runs one event thread (epoll) that owns every
 * socket; it calls on_access, the stream reader and the notifications. A
 * complete request is handed to a request thread (the connection is
 * suspended meanwhile, so the event thread never waits on a handler); the
 * thread answers, resumes the connection and, for a stream, goes on pulling
 * the stream's bytes into a buffer the reader drains. */
#ifndef WICK_SERVE_HTTP_INTERNAL_H
#define WICK_SERVE_HTTP_INTERNAL_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/bg_thread.h"
#include "serve/http.h"

#define HTTP_MAX_HEADERS 16

/* ---- connections (http_conn.c) ---- */

typedef enum conn_state {
    CONN_WAITING,  /* no request yet (new, or idle between requests) */
    CONN_READING,  /* headers in, body still arriving */
    CONN_HANDLING, /* a whole request: with a handler or being answered */
} conn_state;

typedef struct http_conn {
    struct http_conn *prev, *next; /* the server's list, oldest first */
    int fd;
    int family;                    /* AF_INET / AF_INET6 (0 = other: no per-address cap) */
    unsigned char ip[16];
    conn_state state;
    double since;                  /* when the state began (ms, monotonic) */
    uint64_t body_seen;            /* CONN_READING: body bytes so far */
    bool refuse;                   /* over the caps with nothing to evict: answer 503 */
    bool bad_url;                  /* the URL or a query value holds %00 */
    bool kicked;                   /* shut down by us (evicted or past its deadline) */
    bool linger;                   /* answered with body bytes unread: close lingering */
} http_conn;

/* The MHD options and flags for the connection table. */
void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                 enum MHD_ConnectionNotificationCode code);
size_t conn_unescape(void *cls, struct MHD_Connection *conn, char *s);
/* A connection's state changes (event thread). */
void conn_set_state(http_server *s, http_conn *hc, conn_state st);
void conn_body_seen(http_server *s, http_conn *hc, size_t n);
int conn_start_sweeper(http_server *s);
void conn_stop_sweeper(http_server *s);

/* ---- lingering close (http_linger.c) ---- */

#define LINGER_MAX 64
/* Keep the socket fd open (shut for sending), dropping what the client still
 * sends, for a few seconds (call before libmicrohttpd closes fd). */
void linger_add(http_server *s, int fd);
int linger_start(http_server *s);
void linger_stop(http_server *s); /* closes every socket still lingering */

/* ---- streams (http_stream.c) ---- */

typedef struct http_stream http_stream;
http_stream *stream_new(http_server *srv, struct MHD_Connection *conn, int fd, http_pull_fn pull, http_fin_fn fin,
                        void *ctx);
/* The MHD response that reads the stream (takes a reference); NULL if out of memory. */
struct MHD_Response *stream_response(http_stream *st);
/* The connection went away before the response was queued. */
void stream_close(http_stream *st);
/* The request thread's part: pull until the stream ends or the client leaves, then fin. */
void stream_run(http_stream *st);
void stream_unref(http_stream *st);

/* ---- requests ---- */

typedef enum call_phase {
    CALL_READING,  /* headers in, body arriving */
    CALL_RUNNING,  /* with a request thread (the connection is suspended) */
    CALL_ANSWERED, /* an answer is ready to queue */
    CALL_SENT,     /* queued to libmicrohttpd */
} call_phase;

struct http_call {
    http_server *srv;
    struct MHD_Connection *conn;
    http_conn *hc; /* event thread only */
    int fd;
    const char *method; /* in libmicrohttpd's memory for the request */
    char *path;
    char *body;
    size_t body_len, body_cap, reserved; /* reserved: bytes counted against the server's body budget */
    size_t expect;                       /* Content-Length + 1 (0 = not given) */
    bool close_after, stream_queued;
    call_phase phase;
    /* the answer */
    int status;
    char *ctype, *resp;
    size_t resp_len;
    http_stream *stream;
    char *hdr_name[HTTP_MAX_HEADERS], *hdr_value[HTTP_MAX_HEADERS];
    int n_hdr;
    double t0;
    char note[200];
    struct http_call *next_work;
};

struct worker;

struct http_server {
    struct MHD_Daemon *d;
    http_config cfg;
    atomic_bool stopping;
    atomic_int active; /* requests between their first byte and their end */
    int port;
    atomic_size_t body_bytes; /* request bodies held now */
    /* connections */
    pthread_mutex_t cmu;
    pthread_cond_t ccv;
    http_conn *head, *tail;
    int n_conn;
    bool header_timeout_on;
    bg_thread sweeper;
    /* lingering closes */
    pthread_mutex_t lmu;
    pthread_cond_t lcv;
    int linger_fd[LINGER_MAX];
    double linger_until[LINGER_MAX];
    int n_linger;
    bg_thread linger;
    /* request threads */
    pthread_mutex_t wmu;
    pthread_cond_t wcv;
    http_call *q_head, *q_tail;
    struct worker *workers;
    int n_workers, n_idle, n_queued;
    bool closing; /* no more work is taken: requests get 503 */
};

/* Hand a whole request to a request thread (event thread; the connection is
 * suspended). False when the server no longer takes work. */
bool work_submit(http_server *s, http_call *c);
/* Wait for every request thread to finish what it holds, then end them. */
void work_stop(http_server *s);
/* Run the handler for c (a request thread). */
void call_run(http_call *c);

/* The peer closed its end (poll on the socket; only while the connection is
 * suspended, so that the socket cannot be closed meanwhile). */
bool http_peer_gone(int fd);

#endif
