/* http_linger.c — lingering close. A connection answered before its whole
 * body was read (413 over the body limit, 503 over a cap) is closed by
 * libmicrohttpd with the rest of the body still arriving; closing a socket
 * with unread data makes the kernel send a reset, which can destroy the
 * answer in the client's buffer before the client reads it. So such a
 * socket is kept open here (a dup of its descriptor, taken before
 * libmicrohttpd closes its own), its sending side shut, and what still
 * arrives is read and dropped until the client closes or LINGER_MS passes,
 * as web servers do. At most LINGER_MAX sockets linger; past that they
 * close at once. */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "serve/http_internal.h"

#define LINGER_MS 5000.0
#define POLL_MS 50

void linger_add(http_server *s, int fd) {
    if (fd < 0) return;
    pthread_mutex_lock(&s->lmu);
    const bool room = s->linger.running && !bg_thread_stopping(&s->linger) && s->n_linger < LINGER_MAX;
    int d = room ? dup(fd) : -1;
    if (d >= 0) {
        shutdown(d, SHUT_WR); /* the answer is in the kernel's hands; the client sees its end */
        s->linger_fd[s->n_linger] = d;
        s->linger_until[s->n_linger] = wick_now_ms() + LINGER_MS;
        s->n_linger++;
        pthread_cond_signal(&s->lcv);
    }
    pthread_mutex_unlock(&s->lmu);
}

/* Read and drop what is there; false once the client has closed (or failed). */
static bool drain(int fd) {
    char buf[16384];
    for (int i = 0; i < 64; i++) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) continue;
        return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
    }
    return true;
}

static void *lingerer(void *arg) {
    http_server *s = arg;
    struct pollfd pf[LINGER_MAX];
    pthread_mutex_lock(&s->lmu);
    while (!bg_thread_stopping(&s->linger)) {
        if (!s->n_linger) {
            pthread_cond_wait(&s->lcv, &s->lmu);
            continue;
        }
        const nfds_t n = (nfds_t)s->n_linger;
        for (nfds_t i = 0; i < n; i++) pf[i] = (struct pollfd){.fd = s->linger_fd[i], .events = POLLIN};
        pthread_mutex_unlock(&s->lmu);
        (void)poll(pf, n, POLL_MS);
        bool open[LINGER_MAX];
        for (nfds_t i = 0; i < n; i++) open[i] = !pf[i].revents || drain(pf[i].fd);
        pthread_mutex_lock(&s->lmu);
        /* entries 0..n-1 are where they were: only this thread removes */
        const double now = wick_now_ms();
        int w = 0;
        for (int i = 0; i < s->n_linger; i++) {
            if ((nfds_t)i < n && (!open[i] || now > s->linger_until[i])) {
                close(s->linger_fd[i]);
                continue;
            }
            s->linger_fd[w] = s->linger_fd[i];
            s->linger_until[w] = s->linger_until[i];
            w++;
        }
        s->n_linger = w;
    }
    for (int i = 0; i < s->n_linger; i++) close(s->linger_fd[i]);
    s->n_linger = 0;
    pthread_mutex_unlock(&s->lmu);
    return NULL;
}

int linger_start(http_server *s) { return bg_thread_start(&s->linger, &s->lmu, &s->lcv, lingerer, s); }

void linger_stop(http_server *s) { bg_thread_stop(&s->linger); }
