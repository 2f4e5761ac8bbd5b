/* sched_masks.c — grammar masks computed while the forward pass runs. A
 * request's next mask depends only on the tokens it has (never on the
 * logits being computed), so at each step the masks of the grammar
 * requests that will sample are handed to a worker thread before the
 * forward pass and collected after it; req_advance then uses them. The
 * worker touches only those requests' matchers and masks, which nothing
 * else reads until the step collects them. Started on the first step with
 * a grammar request. */
#include <stdlib.h>

#include "core/buf.h"
#include "engine/sched_internal.h"

struct sched_masks {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
    bool started, stop;
    sched_req **work; /* this step's requests */
    int n_work, next; /* handed out so far: work[0 .. next) */
    size_t cap;
    int busy;         /* requests taken and not yet done */
};

static void mask_one(sched_req *q) {
    q->mask_ok = req_grammar_mask(q);
    q->mask_ready = true;
}

static void *worker(void *arg) {
    sched_masks *m = arg;
    pthread_mutex_lock(&m->mu);
    for (;;) {
        while (!m->stop && m->next == m->n_work) pthread_cond_wait(&m->cv, &m->mu);
        if (m->stop) break;
        sched_req *q = m->work[m->next++];
        m->busy++;
        pthread_mutex_unlock(&m->mu);
        mask_one(q);
        pthread_mutex_lock(&m->mu);
        m->busy--;
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

void sched_masks_free(wick_sched *s) {
    sched_masks *m = s->masks;
    if (!m) return;
    if (m->started) {
        pthread_mutex_lock(&m->mu);
        m->stop = true;
        pthread_cond_broadcast(&m->cv);
        pthread_mutex_unlock(&m->mu);
        pthread_join(m->thread, NULL);
    }
    pthread_mutex_destroy(&m->mu);
    pthread_cond_destroy(&m->cv);
    free(m->work);
    free(m);
    s->masks = NULL;
}

void sched_masks_start(wick_sched *s) {
    const sched_batch *bt = &s->batch;
    int n = 0;
    for (int i = 0; i < bt->n_in; i++) {
        const sched_req *q = bt->in[i];
        n += q->gm && q->n_draft == 0 && q->n_computed + bt->counts[i] == q->n_tokens && q->n_predict > 0;
    }
    if (!n) return;
    sched_masks *m = s->masks;
    if (!m) {
        if (!(m = calloc(1, sizeof *m))) return; /* (req_advance computes the masks itself) */
        pthread_mutex_init(&m->mu, NULL);
        pthread_cond_init(&m->cv, NULL);
        s->masks = m;
        m->started = pthread_create(&m->thread, NULL, worker, m) == 0;
    }
    if (!m->started) return;
    pthread_mutex_lock(&m->mu);
    if (GROW_ARRAY(m->work, (size_t)n, &m->cap)) {
        m->n_work = m->next = 0;
        for (int i = 0; i < bt->n_in; i++) {
            sched_req *q = bt->in[i];
            if (q->gm && q->n_draft == 0 && q->n_computed + bt->counts[i] == q->n_tokens && q->n_predict > 0)
                m->work[m->n_work++] = q;
        }
        pthread_cond_broadcast(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
}

void sched_masks_wait(wick_sched *s) {
    sched_masks *m = s->masks;
    if (!m || !m->started) return;
    pthread_mutex_lock(&m->mu);
    /* what the worker has not taken yet, this thread computes */
    while (m->next < m->n_work) {
        sched_req *q = m->work[m->next++];
        pthread_mutex_unlock(&m->mu);
        mask_one(q);
        pthread_mutex_lock(&m->mu);
    }
    while (m->busy) pthread_cond_wait(&m->cv, &m->mu);
    m->n_work = m->next = 0;
    pthread_mutex_unlock(&m->mu);
}
