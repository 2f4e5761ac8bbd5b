/* scheduler.c — continuous batching over one context's sequences (the API is
 * in wick.h, "scheduler"): the queues, admission, preemption and the step
 * loop. A request's own life cycle is request.c's, building the batch
 * batch.c's, speculation spec.c's, span placement sched_spans.c's (shared
 * state in sched_internal.h).
 *
 * A request holds its token history (prompt, then every generated token) and
 * how much of it the KV cache of its sequence holds (n_computed). Each step:
 *   1. take in submitted requests and cancellations (under the mutex);
 *   2. admit waiting requests, first come first served (a preempted request
 *      goes back to the front), while a sequence is free and the KV pool has
 *      blocks for the request's whole history: the prefix cache
 *      (kv/prefix_cache.c) gives it every cached block of its prompt, and
 *      only the rest is computed; cached blocks no sequence holds are
 *      evicted, least recently used first, when blocks are needed;
 *   3. make sure every running request has a KV block for the tokens it adds
 *      this step; when the pool is out, preempt the newest running request
 *      (let go of its blocks, requeue it at the front with its history,
 *      recomputed on readmission where the cache no longer has it; its PRNG
 *      state stays in the request);
 *   3b. a request that shifts its context (opt-in) and whose history fills
 *      it drops tokens and recomputes what it keeps (sched_shift.c);
 *   4. build ONE batch: the next token of every decoding request (followed
 *      by its drafts when it speculates: spec_draft_all asks its drafter, within
 *      the logit rows, tokens and free KV blocks left), then prefill chunks of
 *      the others in admission order, within the token budget;
 *   5. run the forward pass, put the blocks it filled in the prefix cache,
 *      then sample each request whose chunk reached the end of its history,
 *      stream the token, and end requests that are done (their blocks stay
 *      cached, the partly filled last one included); a speculating request
 *      instead keeps its accepted drafts (engine/spec_accept.h), drops the
 *      rejected ones' KV before its blocks reach the prefix cache, and
 *      streams the accepted tokens and the next one (spec_advance).
 * The kernels are batch-invariant (a token's logits do not depend on what
 * else is in the batch, on chunking or on the thread count), so a request's
 * output is the same as alone, preempted or not.
 *
 * Invariants: a request is in exactly one of incoming / waiting / running;
 * between steps a running request's sequence holds tokens[0, n_computed) and
 * nothing else (no draft outlives the step that verified it);
 * a running request owns exactly one sequence (slot) and a slot at most one
 * request; a waiting request owns no slot and no block; 1 <= n_tokens -
 * n_computed while running (the last token's logits give the next token).
 * Only the stepping thread touches waiting/running and the KV cache;
 * incoming, the cancel flags and the stats are under the mutex. Callbacks
 * run on the stepping thread without the mutex held. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "engine/sched_internal.h"

/* ---- creation ---- */

wick_sched *wick_sched_new(wick_context *c, const wick_sched_params *p, wick_error *err) {
    wick_sched_params def = {0};
    if (!p) p = &def;
    if (p->step_tokens < 0 || p->max_queue < 0) {
        wick_fail(err, "scheduler parameters must not be negative");
        return NULL;
    }
    wick_sched *s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->c = c;
    s->budget = p->step_tokens && p->step_tokens < c->fs.max_tokens ? p->step_tokens : c->fs.max_tokens;
    if (s->budget < c->n_seq) s->budget = c->n_seq < c->fs.max_tokens ? c->n_seq : c->fs.max_tokens;
    s->max_queue = p->max_queue;
    s->next_id = 1;
    const size_t N = (size_t)c->n_seq;
    s->slots = calloc(N, sizeof *s->slots);
    s->running = calloc(N, sizeof *s->running);
    const int ok_batch = sched_batch_init(&s->batch, s->budget, c->n_seq);
    const int ok_spec = spec_init(s);
    if (!s->slots || !s->running || ok_batch < 0 || ok_spec < 0) {
        wick_sched_free(s);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    s->st.n_seq = c->n_seq;
    s->st.kv_block_size = KV_BLOCK_SIZE;
    s->st.kv_blocks_total = kv_blocks_total(&c->kv);
    return s;
}

wick_context *wick_sched_context(wick_sched *s) { return s->c; }

/* ---- queues ---- */

int64_t sched_enqueue(wick_sched *s, sched_req *q, wick_error *err) {
    pthread_mutex_lock(&s->mu);
    if (s->max_queue && s->n_incoming_waiting >= s->max_queue) {
        pthread_mutex_unlock(&s->mu);
        req_free(q);
        return wick_fail_code(err, WICK_E_QUEUE_FULL, "queue full: %d requests are waiting", s->max_queue);
    }
    q->id = s->next_id++;
    if (s->incoming_tail) s->incoming_tail->next = q;
    else s->incoming = q;
    s->incoming_tail = q;
    s->n_incoming_waiting++;
    int64_t id = q->id;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return id;
}

/* Cancel flags live in the requests; the mutex guards them. To find a
 * request by id we walk incoming, waiting and running: all short lists. The
 * stepping thread changes waiting/running only with the mutex held. */
void wick_sched_cancel(wick_sched *s, int64_t id) {
    pthread_mutex_lock(&s->mu);
    for (sched_req *q = s->incoming; q; q = q->next)
        if (q->id == id) q->cancelled = true;
    for (sched_req *q = s->waiting; q; q = q->next)
        if (q->id == id) q->cancelled = true;
    for (int i = 0; i < s->n_running; i++)
        if (s->running[i]->id == id) s->running[i]->cancelled = true;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* The slot's blocks go to the prefix cache (what it computed stays
 * reusable until evicted) or back to the pool. */
static void release_slot(wick_sched *s, sched_req *q) {
    if (q->slot < 0) return;
    spans_drop_job(s, q); /* its span computation is dropped */
    kv_release(&s->c->kv, q->slot, KV_NO_LIMIT, false);
    pthread_mutex_lock(&s->mu);
    s->slots[q->slot].owner = NULL;
    pthread_mutex_unlock(&s->mu);
    q->slot = -1;
}

static void remove_running(wick_sched *s, sched_req *q) {
    pthread_mutex_lock(&s->mu);
    for (int i = 0; i < s->n_running; i++)
        if (s->running[i] == q) {
            s->running[i] = s->running[--s->n_running];
            break;
        }
    pthread_mutex_unlock(&s->mu);
}

void sched_release(wick_sched *s, sched_req *q) {
    release_slot(s, q);
    remove_running(s, q);
}

/* ---- KV blocks ---- */

/* What q computed stays in the prefix cache, found again on readmission
 * unless evicted by then. */
void sched_preempt(wick_sched *s, sched_req *q) {
    sched_release(s, q);
    q->n_computed = 0;
    q->n_draft = 0;
    q->preemptions++;
    pthread_mutex_lock(&s->mu);
    q->next = s->waiting;
    s->waiting = q;
    s->n_incoming_waiting++;
    s->st.preemptions++;
    pthread_mutex_unlock(&s->mu);
}

/* Admit waiting requests while a sequence is free and blocks can be had for
 * the request's whole history: its cached prefix is taken from the prefix
 * cache and only the rest needs blocks. A request that could never fit the
 * pool ends with an error. */
static void admit(wick_sched *s) {
    wick_context *c = s->c;
    kv_cache *kv = &c->kv;
    while (s->waiting) {
        sched_req *q = s->waiting;
        if (q->r.forget_prefix) { /* takes no sequence: done at its turn */
            kv_forget(kv, q->root, q->tokens, q->n_tokens);
            pthread_mutex_lock(&s->mu);
            s->waiting = q->next;
            s->n_incoming_waiting--;
            pthread_mutex_unlock(&s->mu);
            req_finish(s, q, WICK_FINISH_STOP, NULL);
            continue;
        }
        if (s->n_running >= c->n_seq) break;
        int slot = 0;
        while (s->slots[slot].owner) slot++;
        /* at least the last token is computed: its logits give the next one;
         * of a span request only the prefix is an ordinary prefix */
        const int reusable = q->plan && q->plan->n_prefix < q->n_tokens - 1 ? q->plan->n_prefix : q->n_tokens - 1;
        const int keep = kv_attach(kv, slot, q->root, q->tokens, reusable, q->plan ? q->plan->n_prefix : KV_NO_LIMIT);
        /* a span request also needs room to compute its spans */
        const int need = sched_blocks_for(q->n_tokens) - kv_seq_blocks(kv, slot) + (q->plan ? span_blocks_needed(q->plan, keep) : 0);
        if (need > kv_blocks_available(kv)) {
            kv_release(kv, slot, KV_NO_LIMIT, false);
            if (s->n_running > 0) return; /* wait for running requests to give blocks back */
            /* Nothing runs and every cached block could be evicted: it can never fit. */
            pthread_mutex_lock(&s->mu);
            s->waiting = q->next;
            s->n_incoming_waiting--;
            pthread_mutex_unlock(&s->mu);
            req_finish(s, q, WICK_FINISH_ERROR, "the request needs more KV blocks than the pool has (raise the KV budget)");
            continue;
        }
        wick_error e;
        if (kv_reserve(kv, slot, q->n_tokens, &e) < 0) { /* cannot happen: blocks were counted */
            kv_release(kv, slot, KV_NO_LIMIT, false);
            return;
        }
        pthread_mutex_lock(&s->mu);
        s->waiting = q->next;
        q->next = NULL;
        s->n_incoming_waiting--;
        q->slot = slot;
        s->slots[slot].owner = q;
        s->running[s->n_running++] = q;
        q->admit_seq = s->admit_counter++;
        q->n_computed = keep;
        const bool first = !q->ever_admitted;
        if (!q->ever_admitted) {
            q->ever_admitted = true;
            q->t_admit = wick_now_ms();
            q->cached_tokens = keep;
            if (!q->r.prompt_shared) {
                s->st.prompt_tokens += (uint64_t)q->n_prompt;
                s->st.prefix_queries += (uint64_t)(q->plan ? q->plan->n_prefix : q->n_prompt);
                s->st.prefix_hits += (uint64_t)keep;
            }
        }
        pthread_mutex_unlock(&s->mu);
        if (first && q->r.on_progress && !q->plan) {
            q->progress_at = keep;
            q->r.on_progress(q->r.user, keep, keep, q->n_prompt);
        }
    }
}

sched_req *sched_newest_running(const wick_sched *s) {
    sched_req *newest = s->running[0];
    for (int k = 1; k < s->n_running; k++)
        if (s->running[k]->admit_seq > newest->admit_seq) newest = s->running[k];
    return newest;
}

/* Every running request gets blocks for the tokens it adds this step
 * (decoders: one; prefill was reserved at admission). Preempts the newest
 * when the pool is out. */
static void ensure_decode_blocks(wick_sched *s) {
    kv_cache *kv = &s->c->kv;
    for (int i = 0; i < s->n_running; i++) {
        sched_req *q = s->running[i];
        int need = sched_blocks_for(q->n_tokens) - kv_seq_blocks(kv, q->slot);
        if (need <= 0) continue;
        if (kv_blocks_available(kv) < need) {
            sched_preempt(s, sched_newest_running(s));
            i = -1; /* the running list changed: start over */
            continue;
        }
        wick_error e;
        kv_reserve(kv, q->slot, q->n_tokens, &e); /* cannot fail: the blocks are free */
    }
}

/* ---- the step ---- */

/* Move submitted requests to the waiting queue and end cancelled ones. */
static void take_in(wick_sched *s) {
    pthread_mutex_lock(&s->mu);
    sched_req *in = s->incoming;
    s->incoming = s->incoming_tail = NULL;
    sched_req **tail = &s->waiting;
    while (*tail) tail = &(*tail)->next;
    *tail = in;
    pthread_mutex_unlock(&s->mu);
    /* Cancelled waiting requests. */
    for (sched_req **pp = &s->waiting; *pp;) {
        sched_req *q = *pp;
        pthread_mutex_lock(&s->mu);
        bool cancelled = q->cancelled;
        if (cancelled) {
            *pp = q->next;
            s->n_incoming_waiting--;
        }
        pthread_mutex_unlock(&s->mu);
        if (cancelled) req_finish(s, q, WICK_FINISH_CANCELLED, NULL);
        else pp = &q->next;
    }
    /* Cancelled running requests: their KV stays as an idle prefix. */
    for (int i = 0; i < s->n_running;) {
        sched_req *q = s->running[i];
        pthread_mutex_lock(&s->mu);
        bool cancelled = q->cancelled;
        pthread_mutex_unlock(&s->mu);
        if (cancelled) req_finish(s, q, WICK_FINISH_CANCELLED, NULL); /* removes running[i] */
        else i++;
    }
}

/* Publish the block counts (the stepping thread owns the KV cache; stats
 * readers see these copies). Call with mu held. */
static void publish_blocks(wick_sched *s) {
    s->st.kv_blocks_used = kv_blocks_used(&s->c->kv);
    s->st.kv_blocks_cached = kv_blocks_cached(&s->c->kv);
    s->st.prefix_blocks = kv_prefix_blocks(&s->c->kv);
}

/* Requests queued or running, after publishing the stats. */
static int pending(wick_sched *s) {
    pthread_mutex_lock(&s->mu);
    publish_blocks(s);
    int n = s->n_running + s->n_incoming_waiting;
    pthread_mutex_unlock(&s->mu);
    return n;
}

static int step_inner(wick_sched *s, wick_error *err) {
    wick_context *c = s->c;
    take_in(s);
    admit(s);
    ensure_decode_blocks(s);
    spans_place(s);
    if (s->n_running == 0) {
        admit(s);
        if (s->n_running == 0) return pending(s);
    }
    sched_shift_full(s);
    spec_draft_all(s);

    sched_batch *bt = &s->batch;
    const int n = sched_batch_build(s);
    if (n == 0) {
        /* Every running request is a span request waiting for blocks to
         * compute its span: the newest gives its blocks back. */
        sched_preempt(s, sched_newest_running(s));
        return pending(s);
    }
    wick_batch b = {.n = n, .tokens = bt->tok, .pos = bt->pos, .seq = bt->seq, .want_logits = bt->want,
                    .rope_pos = bt->rope};
    wick_error e;
    const fwd_capture cap = bt->job_n ? span_job_capture(c, s->job_owner->plan) : (fwd_capture){-1, 0, -1};
    sched_masks_start(s);
    const int rc = context_decode_any(c, &b, bt->job_n ? &cap : NULL, &e);
    sched_masks_wait(s);
    if (rc < 0) {
        /* The KV of the batch's sequences is in doubt: drop it. */
        for (int i = 0; i < bt->n_in; i++) {
            kv_truncate(&c->kv, bt->in[i]->slot, 0);
            req_finish(s, bt->in[i], WICK_FINISH_ERROR, e.msg);
        }
        if (err) *err = e;
        return -1;
    }
    pthread_mutex_lock(&s->mu);
    s->st.steps++;
    s->st.step_tokens += (uint64_t)n;
    pthread_mutex_unlock(&s->mu);
    int row = 0;
    for (int i = 0; i < bt->n_in; i++) {
        sched_req *q = bt->in[i];
        const bool in_prompt = q->n_gen == 0 && q->n_computed < q->n_prompt;
        q->n_computed += bt->counts[i];
        const int done = q->n_computed < q->n_prompt ? q->n_computed : q->n_prompt;
        if (in_prompt && q->r.on_progress && !q->plan && done > q->progress_at) {
            q->progress_at = done;
            q->r.on_progress(q->r.user, q->cached_tokens, done, q->n_prompt);
        }
        if (q->n_draft > 0) { /* verify its drafts */
            const int r0 = row;
            row += 1 + q->n_draft;
            spec_advance(s, q, r0);
            continue;
        }
        kv_commit(&c->kv, q->slot);
        if (q->n_computed == q->n_tokens) req_advance(s, q, wick_logits(c, row++));
    }
    if (bt->job_n) spans_finish_job(s);
    return pending(s);
}

/* One step, then the prefix cache's events of it go out as one batch. */
static int step(wick_sched *s, wick_error *err) {
    int rc = step_inner(s, err);
    kv_flush_events(&s->c->kv);
    return rc;
}

int wick_sched_step(wick_sched *s, wick_error *err) {
    if (s->started) return wick_fail(err, "the scheduler runs on its own thread");
    return step(s, err);
}

static void *sched_thread(void *arg) {
    wick_sched *s = arg;
    for (;;) {
        pthread_mutex_lock(&s->mu);
        while (!s->stop && !s->incoming && s->n_incoming_waiting == 0 && s->n_running == 0)
            pthread_cond_wait(&s->cv, &s->mu);
        bool stop = s->stop;
        pthread_mutex_unlock(&s->mu);
        if (stop) break;
        if (step(s, NULL) < 0) continue; /* the batch's requests got the error */
    }
    return NULL;
}

int wick_sched_start(wick_sched *s, wick_error *err) {
    if (s->started) return 0;
    if (pthread_create(&s->thread, NULL, sched_thread, s) != 0) return wick_fail_code(err, WICK_E_INTERNAL, "cannot start the scheduler thread");
    s->started = true;
    return 0;
}

void wick_sched_get_stats(wick_sched *s, wick_sched_stats *out) {
    pthread_mutex_lock(&s->mu);
    *out = s->st;
    out->running = s->n_running;
    out->waiting = s->n_incoming_waiting;

    pthread_mutex_unlock(&s->mu);
}

void wick_sched_free(wick_sched *s) {
    if (!s) return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->stop = true;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
        s->started = false;
    }
    if (s->slots && s->running) { /* end every request */
        take_in(s);
        while (s->n_running) req_finish(s, s->running[0], WICK_FINISH_CANCELLED, NULL);
        while (s->waiting) {
            sched_req *q = s->waiting;
            s->waiting = q->next;
            s->n_incoming_waiting--;
            req_finish(s, q, WICK_FINISH_CANCELLED, NULL);
        }
    }
    sched_masks_free(s);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->slots);
    free(s->running);
    sched_batch_free(&s->batch);
    spec_free(s);
    free(s);
}
