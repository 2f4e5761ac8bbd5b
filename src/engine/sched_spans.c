/* sched_spans.c — the scheduler's side of span requests (the span work
 * itself is spans.c's): when a request's prefill reaches a placed span, place
 * it from the span cache, or make it the one span job of the context (its
 * A ++ S rows then ride in the step's batches), and when the job's rows are
 * all computed, place the span; a job whose request lets go of its slot is
 * dropped. Counts span-cache lookups and hits. */
#include <pthread.h>

#include "engine/sched_internal.h"

static void count_spans(wick_sched *s, sched_req *q, int hits, int queries) {
    q->span_hits += hits;
    q->span_queries += queries;
    pthread_mutex_lock(&s->mu);
    s->st.span_queries += (uint64_t)queries;
    s->st.span_hits += (uint64_t)hits;
    pthread_mutex_unlock(&s->mu);
}

/* Place every span from the cache at once; a span the cache lacks starts the
 * span job or, while another request's job runs, waits. */
void spans_place(wick_sched *s) {
    wick_context *c = s->c;
    for (int i = 0; i < s->n_running; i++) {
        sched_req *q = s->running[i];
        if (!q->plan || q == s->job_owner) continue;
        wick_error e;
        int hits = 0, queries = 0, failed = 0;
        bool restart = false;
        span_seg *g;
        while ((g = span_at(q->plan, q->n_computed))) {
            int to = span_place_cached(c, q->plan, g, q->slot, &hits, &queries, &e);
            if (to == SPAN_MISS) {
                if (s->job_owner) break; /* another request's span job runs: wait */
                to = span_job_start(c, q->plan, g, &e);
                if (to == 0) {
                    s->job_owner = q;
                    s->job_seg = g;
                    break;
                }
                if (to == SPAN_NO_BLOCKS && s->n_running > 1) {
                    /* no blocks to compute the span now: the newest request gives its
                     * blocks back (q itself when it is the newest: it waits, queued) */
                    sched_req *newest = sched_newest_running(s);
                    sched_preempt(s, newest);
                    restart = true;
                    if (newest == q) break;
                    continue;
                }
            }
            if (to < 0) {
                failed = 1;
                break;
            }
            q->n_computed = to;
        }
        count_spans(s, q, hits, queries);
        if (failed) {
            kv_truncate(&c->kv, q->slot, 0);
            req_finish(s, q, WICK_FINISH_ERROR, e.msg); /* removes running[i] */
            restart = true;
        }
        if (restart) i = -1; /* the running list changed */
    }
}

int spans_job_rows(wick_sched *s, int n) {
    wick_context *c = s->c;
    sched_batch *b = &s->batch;
    const sched_req *q = s->job_owner;
    const int at = kv_seq_len(&c->kv, c->span_iso), total = q->plan->n_anchor + s->job_seg->len;
    const int jt = total - at < s->budget - n ? total - at : s->budget - n;
    for (int k = 0; k < jt; k++) {
        b->tok[n] = span_job_token(q->plan, s->job_seg, at + k);
        b->pos[n] = b->rope[n] = at + k;
        b->seq[n] = c->span_iso;
        b->want[n] = false;
        n++;
    }
    return jt;
}

void spans_finish_job(wick_sched *s) {
    wick_context *c = s->c;
    sched_req *q = s->job_owner;
    if (!q || kv_seq_len(&c->kv, c->span_iso) < q->plan->n_anchor + s->job_seg->len) return;
    wick_error e;
    int hits = 0, queries = 0;
    span_seg *g = s->job_seg;
    s->job_owner = NULL;
    s->job_seg = NULL;
    const int to = span_job_finish(c, q->plan, g, q->slot, &hits, &queries, &e);
    count_spans(s, q, hits, queries);
    if (to < 0) {
        kv_truncate(&c->kv, q->slot, 0);
        req_finish(s, q, WICK_FINISH_ERROR, e.msg);
        return;
    }
    q->n_computed = to;
}

void spans_drop_job(wick_sched *s, const sched_req *q) {
    if (s->job_owner != q) return;
    span_job_abort(s->c);
    s->job_owner = NULL;
    s->job_seg = NULL;
}
