/* http_conn.c — the connection table of the HTTP layer: every open
 * connection, its client address and what it is doing, so that
 *  - at most max_connections are held, and max_per_ip per client address: a
 *    new connection over a cap evicts the oldest connection that has not sent
 *    a whole request (idle, or slow), and when there is none it is answered
 *    503 and closed (never left unanswered);
 *  - a connection must send a whole request (headers and body; the body gets
 *    a second more per 64 KiB) within header_timeout_s of its start or of
 *    its previous answer, or it is closed: byte-trickling clients cannot
 *    hold a connection, whatever --timeout says;
 *  - %00 in the URL or a query value marks the request bad (libmicrohttpd
 *    would hand the routes a truncated string).
 * Closing a connection from here is shutdown(2) on its socket: the event
 * thread then sees the end and closes it itself. The table is guarded by
 * cmu; a connection leaves it (CLOSED notification) before its socket is
 * closed, so a socket found in the table is still open. */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "core/clock.h"
#include "serve/http_internal.h"

#define SWEEP_MS 250
#define BODY_BYTES_PER_S 65536.0

static void list_add(http_server *s, http_conn *hc) {
    hc->prev = s->tail;
    if (s->tail) s->tail->next = hc;
    else s->head = hc;
    s->tail = hc;
    s->n_conn++;
}

static void list_del(http_server *s, http_conn *hc) {
    if (hc->prev) hc->prev->next = hc->next;
    else s->head = hc->next;
    if (hc->next) hc->next->prev = hc->prev;
    else s->tail = hc->prev;
    s->n_conn--;
}

static bool same_ip(const http_conn *a, const http_conn *b) {
    return a->family && a->family == b->family &&
           memcmp(a->ip, b->ip, a->family == AF_INET6 ? 16 : 4) == 0;
}

static void kick(http_conn *hc) {
    hc->kicked = true;
    shutdown(hc->fd, SHUT_RDWR);
}

/* The oldest connection that may be evicted: no whole request yet (cmu held). */
static http_conn *victim(http_server *s, const http_conn *newc, bool same_addr) {
    http_conn *best = NULL;
    for (http_conn *c = s->head; c; c = c->next) {
        if (c == newc || c->kicked || c->state != CONN_WAITING) continue;
        if (same_addr && !same_ip(c, newc)) continue;
        if (!best || c->since < best->since) best = c;
    }
    return best;
}

/* Apply the caps to a new connection (cmu held). */
static void admit(http_server *s, http_conn *hc) {
    for (;;) {
        int total = 0, mine = 0;
        for (http_conn *c = s->head; c; c = c->next) {
            if (c->kicked || c->refuse) continue;
            total++;
            if (same_ip(c, hc)) mine++;
        }
        const bool over_ip = hc->family && mine > s->cfg.max_per_ip, over_all = total > s->cfg.max_connections;
        if (!over_ip && !over_all) return;
        http_conn *v = victim(s, hc, over_ip);
        if (!v) {
            hc->refuse = true;
            return;
        }
        kick(v);
    }
}

void conn_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
                 enum MHD_ConnectionNotificationCode code) {
    http_server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        http_conn *hc = *socket_context;
        if (!hc) return;
        pthread_mutex_lock(&s->cmu);
        list_del(s, hc);
        pthread_mutex_unlock(&s->cmu);
        if (hc->linger && !hc->kicked) linger_add(s, hc->fd);
        free(hc);
        *socket_context = NULL;
        return;
    }
    http_conn *hc = calloc(1, sizeof *hc);
    *socket_context = hc;
    if (!hc) return; /* answered 503 at its first request */
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    hc->fd = fd ? fd->connect_fd : -1;
    const struct sockaddr *sa = ad ? ad->client_addr : NULL;
    if (sa && sa->sa_family == AF_INET) {
        hc->family = AF_INET;
        memcpy(hc->ip, &((const struct sockaddr_in *)sa)->sin_addr, 4);
    } else if (sa && sa->sa_family == AF_INET6) {
        hc->family = AF_INET6;
        memcpy(hc->ip, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
    }
    hc->state = CONN_WAITING;
    hc->since = wick_now_ms();
    pthread_mutex_lock(&s->cmu);
    list_add(s, hc);
    admit(s, hc);
    pthread_mutex_unlock(&s->cmu);
}

void conn_set_state(http_server *s, http_conn *hc, conn_state st) {
    pthread_mutex_lock(&s->cmu);
    hc->state = st;
    hc->since = wick_now_ms();
    hc->body_seen = 0;
    if (st == CONN_WAITING) hc->bad_url = false; /* the next request's URL is checked anew */
    pthread_mutex_unlock(&s->cmu);
}

void conn_body_seen(http_server *s, http_conn *hc, size_t n) {
    pthread_mutex_lock(&s->cmu);
    hc->body_seen += n;
    pthread_mutex_unlock(&s->cmu);
}

/* libmicrohttpd's percent-decoding, noting a decoded NUL (which would cut the
 * string short where the routes read it). */
size_t conn_unescape(void *cls, struct MHD_Connection *conn, char *s) {
    (void)cls;
    char *w = s;
    bool nul = false;
    for (const char *r = s; *r;) {
        unsigned v = 0;
        int k = 0;
        if (r[0] == '%') {
            for (k = 1; k <= 2; k++) {
                char ch = r[k];
                unsigned d = ch >= '0' && ch <= '9'   ? (unsigned)(ch - '0')
                             : ch >= 'a' && ch <= 'f' ? (unsigned)(ch - 'a' + 10)
                             : ch >= 'A' && ch <= 'F' ? (unsigned)(ch - 'A' + 10)
                                                      : 16u;
                if (d == 16) break;
                v = v * 16 + d;
            }
        }
        if (k == 3 && v == 0) {
            nul = true;
            *w++ = *r++; /* kept as the literal "%00" */
        } else if (k == 3) {
            *w++ = (char)v;
            r += 3;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    if (nul) {
        const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        http_conn *hc = ci ? ci->socket_context : NULL;
        if (hc) hc->bad_url = true; /* read later on the same (event) thread */
    }
    return (size_t)(w - s);
}

/* Close the connections past their deadline (cmu held). */
static void sweep(http_server *s) {
    const double now = wick_now_ms(), limit = s->cfg.header_timeout_s * 1e3;
    for (http_conn *c = s->head; c; c = c->next) {
        if (c->kicked || c->state == CONN_HANDLING) continue;
        double allowed = limit;
        if (c->state == CONN_READING) allowed += (double)c->body_seen / BODY_BYTES_PER_S * 1e3;
        if (now - c->since > allowed) kick(c);
    }
}

static void *sweeper(void *arg) {
    http_server *s = arg;
    pthread_mutex_lock(&s->cmu);
    while (!bg_thread_stopping(&s->sweeper)) {
        const struct timespec ts = wick_deadline_ms(CLOCK_REALTIME, SWEEP_MS); /* ccv's clock */
        pthread_cond_timedwait(&s->ccv, &s->cmu, &ts);
        if (s->header_timeout_on) sweep(s);
    }
    pthread_mutex_unlock(&s->cmu);
    return NULL;
}

int conn_start_sweeper(http_server *s) {
    s->header_timeout_on = s->cfg.header_timeout_s > 0;
    return bg_thread_start(&s->sweeper, &s->cmu, &s->ccv, sweeper, s);
}

void conn_stop_sweeper(http_server *s) { bg_thread_stop(&s->sweeper); }
