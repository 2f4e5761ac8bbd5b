/* http_work.c — the request threads of the HTTP layer: whole requests wait
 * in a FIFO queue (their connections suspended) and run on a pool of
 * threads that grows on demand up to max_workers and shrinks when idle. A
 * thread keeps a request until its answer (and, for a stream, its last byte)
 * is handed over, so handlers may block. */
#include <stdlib.h>
#include <time.h>

#include "core/clock.h"
#include "serve/http_internal.h"

#define IDLE_EXIT_S 30 /* an idle thread beyond the first few ends after this */
#define KEEP_IDLE 4

typedef struct worker {
    struct worker *next;
    pthread_t t;
    bool done; /* the thread has returned (or is about to): join it */
} worker;

static http_call *take(http_server *s) {
    http_call *c = s->q_head;
    if (c) {
        s->q_head = c->next_work;
        if (!s->q_head) s->q_tail = NULL;
        c->next_work = NULL;
        s->n_queued--;
    }
    return c;
}

typedef struct worker_arg {
    http_server *s;
    worker *w;
} worker_arg;

static void *run(void *arg) {
    worker_arg a = *(worker_arg *)arg;
    free(arg);
    http_server *s = a.s;
    pthread_mutex_lock(&s->wmu);
    for (;;) {
        http_call *c = take(s);
        if (c) {
            pthread_mutex_unlock(&s->wmu);
            call_run(c);
            pthread_mutex_lock(&s->wmu);
            continue;
        }
        if (s->closing) break;
        s->n_idle++;
        const struct timespec ts = wick_deadline_ms(CLOCK_REALTIME, IDLE_EXIT_S * 1e3); /* wcv's clock */
        int rc = 0;
        while (!s->q_head && !s->closing && rc == 0) rc = pthread_cond_timedwait(&s->wcv, &s->wmu, &ts);
        s->n_idle--;
        if (rc != 0 && !s->q_head && s->n_workers > KEEP_IDLE) break;
    }
    s->n_workers--;
    a.w->done = true;
    pthread_cond_broadcast(&s->wcv);
    pthread_mutex_unlock(&s->wmu);
    return NULL;
}

/* Join the threads that have ended (wmu held). */
static void reap(http_server *s) {
    for (worker **p = &s->workers; *p;) {
        worker *w = *p;
        if (!w->done) {
            p = &w->next;
            continue;
        }
        *p = w->next;
        pthread_join(w->t, NULL);
        free(w);
    }
}

/* Start one more thread (wmu held); false if none could start. */
static bool spawn(http_server *s) {
    worker *w = calloc(1, sizeof *w);
    worker_arg *a = malloc(sizeof *a);
    if (!w || !a) {
        free(w);
        free(a);
        return false;
    }
    *a = (worker_arg){s, w};
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setstacksize(&at, 8u << 20);
    int rc = pthread_create(&w->t, &at, run, a);
    pthread_attr_destroy(&at);
    if (rc != 0) {
        free(w);
        free(a);
        return false;
    }
    w->next = s->workers;
    s->workers = w;
    s->n_workers++;
    return true;
}

bool work_submit(http_server *s, http_call *c) {
    pthread_mutex_lock(&s->wmu);
    if (s->closing || (s->n_workers == 0 && !spawn(s))) {
        pthread_mutex_unlock(&s->wmu);
        return false;
    }
    MHD_suspend_connection(c->conn);
    if (s->q_tail) s->q_tail->next_work = c;
    else s->q_head = c;
    s->q_tail = c;
    s->n_queued++;
    reap(s);
    /* a thread for every request: waiting ones would sit behind long generations */
    if (s->n_queued > s->n_idle && s->n_workers < s->cfg.max_workers) spawn(s);
    pthread_cond_signal(&s->wcv);
    pthread_mutex_unlock(&s->wmu);
    return true;
}

void work_stop(http_server *s) {
    pthread_mutex_lock(&s->wmu);
    s->closing = true;
    pthread_cond_broadcast(&s->wcv);
    while (s->n_workers > 0) pthread_cond_wait(&s->wcv, &s->wmu);
    reap(s);
    pthread_mutex_unlock(&s->wmu);
}
