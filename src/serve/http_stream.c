/* http_stream.c — streamed answers (chunked). The request thread pulls the
 * route's bytes into a buffer; libmicrohttpd's reader, on the event thread,
 * drains it. When the buffer is empty the reader suspends the connection,
 * and the request thread resumes it once there is more (or the end), so the
 * event thread never waits. While the connection is suspended the request
 * thread watches the socket for a client that left; while it is not, the
 * event thread's writes find that out. The buffer is bounded: the pulling
 * waits while the client reads slowly.
 *
 * The stream has two owners, the request thread (until its end) and the MHD
 * response (until freed); the last one frees it. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "serve/http_internal.h"

#define HIGH_WATER (256 * 1024) /* buffered bytes past which the pulling waits */
#define STOP_GRACE_MS 3000      /* a stream still open this long after the server began stopping is cut */

struct http_stream {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    http_server *srv;
    struct MHD_Connection *conn;
    int fd;
    http_pull_fn pull;
    http_fin_fn fin;
    void *ctx;
    wbuf buf;
    size_t off;      /* bytes of buf handed to libmicrohttpd */
    bool ended;      /* no more bytes will come */
    bool failed;     /* the stream ends with an error (the connection is cut) */
    bool suspended;  /* the reader suspended the connection: the request thread resumes it */
    bool closed;     /* libmicrohttpd is done with the response (sent, or the client left) */
};

http_stream *stream_new(http_server *srv, struct MHD_Connection *conn, int fd, http_pull_fn pull, http_fin_fn fin,
                        void *ctx) {
    http_stream *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    pthread_mutex_init(&st->mu, NULL);
    pthread_cond_init(&st->cv, NULL);
    st->refs = 2; /* the request thread and the call (which hands its reference to the response) */
    st->srv = srv;
    st->conn = conn;
    st->fd = fd;
    st->pull = pull;
    st->fin = fin;
    st->ctx = ctx;
    return st;
}

void stream_unref(http_stream *st) {
    pthread_mutex_lock(&st->mu);
    bool last = --st->refs == 0;
    pthread_mutex_unlock(&st->mu);
    if (!last) return;
    pthread_mutex_destroy(&st->mu);
    pthread_cond_destroy(&st->cv);
    wbuf_free(&st->buf);
    free(st);
}

/* The reader (event thread). */
static ssize_t stream_read(void *cls, uint64_t pos, char *out, size_t max) {
    (void)pos;
    http_stream *st = cls;
    pthread_mutex_lock(&st->mu);
    if (st->off < st->buf.len) {
        size_t n = st->buf.len - st->off;
        if (n > max) n = max;
        memcpy(out, st->buf.data + st->off, n);
        st->off += n;
        if (st->off == st->buf.len) {
            wbuf_reset(&st->buf);
            st->off = 0;
        }
        pthread_cond_signal(&st->cv);
        pthread_mutex_unlock(&st->mu);
        return (ssize_t)n;
    }
    ssize_t rc = 0;
    if (st->failed || st->closed) {
        rc = MHD_CONTENT_READER_END_WITH_ERROR;
    } else if (st->ended) {
        rc = MHD_CONTENT_READER_END_OF_STREAM;
    } else {
        st->suspended = true;
        MHD_suspend_connection(st->conn);
    }
    pthread_mutex_unlock(&st->mu);
    return rc;
}

static void stream_free_cb(void *cls) {
    http_stream *st = cls;
    stream_close(st);
    stream_unref(st);
}

struct MHD_Response *stream_response(http_stream *st) {
    struct MHD_Response *r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16 * 1024, stream_read, st,
                                                               stream_free_cb);
    if (!r) {
        stream_close(st);
        return NULL;
    }
    pthread_mutex_lock(&st->mu);
    st->refs++; /* the response's; the call's own is dropped when the call ends */
    pthread_mutex_unlock(&st->mu);
    return r;
}

void stream_close(http_stream *st) {
    pthread_mutex_lock(&st->mu);
    st->closed = true;
    pthread_cond_broadcast(&st->cv);
    pthread_mutex_unlock(&st->mu);
}

/* Wake the reader if it waits (mu held). */
static void wake(http_stream *st) {
    if (!st->suspended) return;
    st->suspended = false;
    MHD_resume_connection(st->conn);
}

/* The server is stopping and this stream has had its grace time. */
static bool past_grace(const http_stream *st, double *t_stop) {
    if (!atomic_load(&st->srv->stopping)) return false;
    if (*t_stop == 0) *t_stop = wick_now_ms();
    return wick_now_ms() - *t_stop > STOP_GRACE_MS;
}

void stream_run(http_stream *st) {
    wbuf tmp = {0};
    bool aborted = false;
    double t_stop = 0;
    for (;;) {
        pthread_mutex_lock(&st->mu);
        bool cut = false; /* a client that stops reading cannot hold a stopping server */
        while (!st->closed && st->buf.len - st->off > HIGH_WATER && !(cut = past_grace(st, &t_stop))) {
            const struct timespec ts = wick_deadline_ms(CLOCK_REALTIME, 200); /* the cv's clock */
            pthread_cond_timedwait(&st->cv, &st->mu, &ts);
        }
        const bool closed = st->closed;
        pthread_mutex_unlock(&st->mu);
        if (closed || cut) { /* the client left (or the response was dropped), or the grace is over */
            aborted = true;
            break;
        }
        wbuf_reset(&tmp);
        const int rc = st->pull(st->ctx, &tmp, 200);
        pthread_mutex_lock(&st->mu);
        if (tmp.len) wbuf_put(&st->buf, tmp.data, tmp.len);
        if (rc <= 0 || tmp.oom || st->buf.oom) {
            st->ended = true;
            st->failed = rc < 0 || tmp.oom || st->buf.oom;
        }
        if (st->ended || st->buf.len > st->off) wake(st);
        const bool ended = st->ended, waiting = st->suspended;
        pthread_mutex_unlock(&st->mu);
        if (ended) break;
        if (past_grace(st, &t_stop)) {
            aborted = true;
            break;
        }
        /* the reader waits for bytes, so the socket is ours to watch */
        if (waiting && tmp.len == 0 && http_peer_gone(st->fd)) {
            aborted = true;
            break;
        }
    }
    wbuf_free(&tmp);
    st->fin(st->ctx, aborted);
    pthread_mutex_lock(&st->mu);
    if (!st->ended) {
        st->ended = true;
        st->failed = true;
    }
    wake(st);
    pthread_mutex_unlock(&st->mu);
    stream_unref(st);
}
