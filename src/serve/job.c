/* job.c — the bridge between a scheduler request and an HTTP thread (see
 * job.h). The job is shared by two owners, the scheduler (until on_done) and
 * the HTTP side (until job_release); the last one frees it. */
#include "serve/job.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"

struct job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;
    bool cancelled, done;
    job_batch pend; /* filled by the scheduler thread */
    job_result res;
    wick_sched *s;
    int64_t id;
    metrics_model *mx;
    double t_last; /* time of the last token, for inter-token latency */
    double t_submit;
    wick_grammar *grammar; /* the request's, freed with the job */
};


static void job_unref_locked(job *j) {
    if (--j->refs > 0) {
        pthread_mutex_unlock(&j->mu);
        return;
    }
    pthread_mutex_unlock(&j->mu);
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    job_batch_free(&j->pend);
    free(j->res.error);
    free(j->res.tail);
    wick_grammar_free(j->grammar);
    free(j);
}

bool job_batch_push(job_batch *b, const wick_token_info *tok, const char *text, size_t len) {
    if (!GROW_ARRAY(b->ev, b->n + 1, &b->cap)) return false;
    if (len > SIZE_MAX - 1 - b->text_len || !GROW_ARRAY(b->text, b->text_len + len + 1, &b->text_cap)) return false;
    job_event *e = &b->ev[b->n++];
    e->tok = *tok;
    e->off = b->text_len;
    e->len = len;
    if (len) memcpy(b->text + b->text_len, text, len);
    b->text_len += len;
    b->text[b->text_len] = 0;
    return true;
}

static bool on_token(void *user, const wick_token_info *tok, const char *text, size_t len) {
    job *j = user;
    double t = wick_now_s();
    if (j->mx && tok->index > 0) metrics_observe(&j->mx->itl, t - j->t_last);
    j->t_last = t;
    pthread_mutex_lock(&j->mu);
    bool ok = !j->cancelled && job_batch_push(&j->pend, tok, text, len);
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return ok;
}

static void on_progress(void *user, int n_cached, int n_processed, int n_prompt) {
    job *j = user;
    const double t = wick_now_s();
    pthread_mutex_lock(&j->mu);
    job_batch *b = &j->pend;
    if (GROW_ARRAY(b->prog, b->n_prog + 1, &b->prog_cap))
        b->prog[b->n_prog++] = (job_progress){n_cached, n_processed, n_prompt, (t - j->t_submit) * 1000.0};
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
}

static void on_done(void *user, const wick_request_result *r) {
    job *j = user;
    if (j->mx) metrics_request_done(j->mx, r);
    pthread_mutex_lock(&j->mu);
    job_result *o = &j->res;
    o->finish = r->finish;
    o->error = r->error ? strdup(r->error) : NULL;
    if (r->tail_len && (o->tail = malloc(r->tail_len + 1))) {
        memcpy(o->tail, r->tail, r->tail_len);
        o->tail[r->tail_len] = 0;
        o->tail_len = r->tail_len;
    }
    o->prompt_tokens = r->prompt_tokens;
    o->cached_tokens = r->cached_tokens;
    o->span_cached_tokens = r->span_cached_tokens;
    o->generated_tokens = r->generated_tokens;
    o->preemptions = r->preemptions;
    o->ctx_shifts = r->ctx_shifts;
    o->ctx_dropped = r->ctx_dropped;
    o->queue_ms = r->queue_ms;
    o->ttft_ms = r->ttft_ms;
    o->prefill_ms = r->prefill_ms;
    o->decode_ms = r->decode_ms;
    o->total_ms = r->total_ms;
    j->done = true;
    pthread_cond_broadcast(&j->cv);
    job_unref_locked(j);
}

job *job_submit(wick_sched *s, const wick_request *r, wick_grammar *grammar, metrics_model *mx, wick_error *err) {
    return job_submit_progress(s, r, grammar, false, mx, err);
}

job *job_submit_progress(wick_sched *s, const wick_request *r, wick_grammar *grammar, bool progress, metrics_model *mx,
                         wick_error *err) {
    job *j = calloc(1, sizeof *j);
    if (!j) {
        wick_grammar_free(grammar);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 2;
    j->s = s;
    j->mx = mx;
    j->t_last = j->t_submit = wick_now_s();
    j->grammar = grammar;
    wick_request q = *r;
    q.grammar = grammar;
    q.on_token = on_token;
    q.on_done = on_done;
    q.on_progress = progress ? on_progress : NULL;
    q.user = j;
    /* j->id is read only by this (the HTTP) thread, which still holds a reference */
    j->id = wick_sched_submit(s, &q, err);
    if (j->id < 0) {
        pthread_mutex_destroy(&j->mu);
        pthread_cond_destroy(&j->cv);
        wick_grammar_free(grammar);
        free(j);
        return NULL;
    }
    return j;
}

bool job_take(job *j, job_batch *b, int timeout_ms) {
    b->n = 0;
    b->n_prog = 0;
    b->text_len = 0;
    pthread_mutex_lock(&j->mu);
    if (j->pend.n == 0 && j->pend.n_prog == 0 && !j->done && timeout_ms > 0) {
        const struct timespec ts = wick_deadline_ms(CLOCK_REALTIME, timeout_ms); /* the cv's clock */
        while (j->pend.n == 0 && j->pend.n_prog == 0 && !j->done)
            if (pthread_cond_timedwait(&j->cv, &j->mu, &ts) != 0) break;
    }
    /* swap buffers: the scheduler keeps appending into b's old memory */
    job_batch t = j->pend;
    j->pend = *b;
    j->pend.n = 0;
    j->pend.n_prog = 0;
    j->pend.text_len = 0;
    j->pend.done = false;
    *b = t;
    b->done = j->done;
    pthread_mutex_unlock(&j->mu);
    return b->n > 0 || b->n_prog > 0 || b->done;
}

const job_result *job_get_result(const job *j) { return &j->res; }

void job_cancel(job *j) {
    pthread_mutex_lock(&j->mu);
    bool run = !j->done && !j->cancelled;
    j->cancelled = true;
    pthread_mutex_unlock(&j->mu);
    if (run) wick_sched_cancel(j->s, j->id);
}

void job_release(job *j) {
    if (!j) return;
    job_cancel(j);
    pthread_mutex_lock(&j->mu);
    job_unref_locked(j);
}

void job_batch_free(job_batch *b) {
    free(b->ev);
    free(b->text);
    free(b->prog);
    memset(b, 0, sizeof *b);
}
