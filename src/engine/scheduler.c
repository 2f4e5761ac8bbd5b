/* scheduler.c — continuous batching over one context's sequences (the API is
 * in wick.h, "scheduler").
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
 *   4. build ONE batch: the next token of every decoding request (followed
 *      by its drafts when it speculates: draft_all asks its drafter, within
 *      the logit rows, tokens and free KV blocks left), then prefill chunks of
 *      the others in admission order, within the token budget;
 *   5. run the forward pass, put the blocks it filled in the prefix cache,
 *      then sample each request whose chunk reached the end of its history,
 *      stream the token, and end requests that are done (their blocks stay
 *      cached, the partly filled last one included); a speculating request
 *      instead keeps its accepted drafts (engine/spec_accept.h), drops the
 *      rejected ones' KV before its blocks reach the prefix cache, and
 *      streams the accepted tokens and the next one (advance_spec).
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
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "engine/context.h"
#include "engine/draft.h"
#include "engine/spans.h"
#include "engine/spec_accept.h"
#include "engine/text_out.h"
#include "kv/kv_cache.h"

typedef struct sched_req sched_req;
struct sched_req {
    int64_t id;
    wick_request r;          /* prompt and stop point at the copies below */
    int32_t *tokens;         /* [n_ctx]: prompt + generated */
    int n_tokens, n_prompt, n_gen, n_predict;
    int n_computed;          /* tokens of `tokens` in the slot's KV cache */
    kv_key root;             /* its prefix-cache chain root (model, KV, cache salt) */
    span_plan *plan;         /* a span request's layout (NULL: an ordinary prompt) */
    int span_hits, span_queries; /* placed span tokens found in / looked up in the span cache */
    int slot;                /* -1 while waiting */
    int64_t admit_seq;       /* admission order: the newest is preempted first */
    uint64_t rng[4];
    char **stops;
    wick_logit_bias *bias; /* the request's logit biases (r.sampling points here) */
    text_out text;
    bool cancelled, ever_admitted, stopped;
    int cached_tokens, preemptions;
    double t_submit, t_admit, t_first;
    /* speculative decoding (engine/spec_accept.h): the drafter's method
     * (WICK_SPEC_OFF = none), this step's drafts (tokens[n_tokens,
     * n_tokens + n_draft), with q their drafter's distributions when
     * sampling), and the acceptance so far: acc / rej decay per verification,
     * their ratio sets the next draft length */
    int spec_method, draft_max, lookup, n_draft;
    float *q;
    double acc, rej;
    int draft_tokens, accepted_tokens, spec_passes;
    sched_req *next;
};

typedef struct slot_info {
    sched_req *owner;
} slot_info;

struct wick_sched {
    wick_context *c;
    int budget, max_queue;
    slot_info *slots;
    /* the stepping thread's; waiting and running change under mu (cancel reads them) */
    sched_req *waiting;      /* FIFO (head first) */
    sched_req **running;     /* [n_seq], admission order not kept: see admit_seq */
    int n_running;
    int64_t admit_counter;
    int32_t *b_tok, *b_pos, *b_seq, *b_rope; /* [budget] batch buffers */
    /* the span being computed in isolation (one at a time; engine/spans.h):
     * its request, which waits at that span's placed run, and the span */
    sched_req *job_owner;
    span_seg *job_seg;
    bool *b_want;
    sched_req **order, **in_batch; /* [n_seq]: requests in batch order */
    int *counts;             /* [n_seq]: tokens each adds this step */
    /* speculative decoding: a drafter per method (NULL = not configured) */
    drafter *drafters[WICK_SPEC_LOOKUP + 1];
    int spec_default, draft_max, lookup;
    float *pbuf;             /* [n_vocab] the acceptance rule's scratch */
    /* under mu */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sched_req *incoming, *incoming_tail;
    int n_incoming_waiting;  /* incoming + waiting, for max_queue and stats */
    int64_t next_id;
    bool stop, started;
    pthread_t thread;
    wick_sched_stats st;
};

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

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
        wick_fail(err, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    s->c = c;
    s->budget = p->step_tokens && p->step_tokens < c->fs.max_tokens ? p->step_tokens : c->fs.max_tokens;
    if (s->budget < c->n_seq) s->budget = c->n_seq < c->fs.max_tokens ? c->n_seq : c->fs.max_tokens;
    s->max_queue = p->max_queue;
    s->next_id = 1;
    const size_t B = (size_t)s->budget, N = (size_t)c->n_seq;
    s->slots = calloc(N, sizeof *s->slots);
    s->running = calloc(N, sizeof *s->running);
    s->b_tok = malloc(B * sizeof *s->b_tok);
    s->b_pos = malloc(B * sizeof *s->b_pos);
    s->b_seq = malloc(B * sizeof *s->b_seq);
    s->b_rope = malloc(B * sizeof *s->b_rope);
    s->b_want = malloc(B * sizeof *s->b_want);
    s->order = malloc(N * sizeof *s->order);
    s->in_batch = malloc(N * sizeof *s->in_batch);
    s->counts = malloc(N * sizeof *s->counts);
    s->pbuf = malloc((size_t)c->m->hp.n_vocab * sizeof *s->pbuf);
    s->drafters[WICK_SPEC_LOOKUP] = draft_lookup_new(NULL);
    s->spec_default = WICK_SPEC_OFF;
    s->draft_max = 8;
    s->lookup = 3;
    if (!s->slots || !s->running || !s->b_tok || !s->b_pos || !s->b_seq || !s->b_rope || !s->b_want || !s->order ||
        !s->in_batch || !s->counts || !s->pbuf || !s->drafters[WICK_SPEC_LOOKUP]) {
        wick_sched_free(s);
        wick_fail(err, "out of memory");
        return NULL;
    }
    s->st.n_seq = c->n_seq;
    s->st.kv_block_size = KV_BLOCK_SIZE;
    s->st.kv_blocks_total = kv_blocks_total(&c->kv);
    return s;
}

wick_context *wick_sched_context(wick_sched *s) { return s->c; }

int wick_sched_set_spec(wick_sched *s, const wick_spec_params *p, wick_error *err) {
    wick_context *c = s->c;
    const int draft_max = p->draft_max ? p->draft_max : 8;
    if (draft_max < 1 || draft_max > WICK_DRAFT_MAX_LIMIT)
        return wick_fail(err, "draft max must be in [1, %d], not %d", WICK_DRAFT_MAX_LIMIT, p->draft_max);
    if (p->lookup < 0 || p->lookup > 64) return wick_fail(err, "lookup n-gram must be in [1, 64], not %d", p->lookup);
    if (p->draft_layers < 0 || (p->draft_layers > 0 && p->draft_layers >= c->m->hp.n_layer))
        return wick_fail(err, "draft layers must be in [1, %d) for this %d-layer model, not %d", c->m->hp.n_layer,
                         c->m->hp.n_layer, p->draft_layers);
    if (p->default_method < WICK_SPEC_DEFAULT || p->default_method > WICK_SPEC_LOOKUP)
        return wick_fail(err, "unknown speculative method %d", (int)p->default_method);
    if (s->started || s->st.steps) return wick_fail(err, "speculation is set before the scheduler runs");
    const int kv_type = c->kv.pool.type == WICK_F16 ? 1 : 0;
    const int chunk = c->fs.max_tokens;
    if (p->draft_model && !s->drafters[WICK_SPEC_DRAFT] &&
        !(s->drafters[WICK_SPEC_DRAFT] = draft_model_new(c->m, p->draft_model, c->n_seq, c->n_ctx, chunk, c->pool,
                                                         kv_type, err)))
        return -1;
    if (p->draft_layers && !s->drafters[WICK_SPEC_LAYERS] &&
        !(s->drafters[WICK_SPEC_LAYERS] =
              draft_layers_new(c->m, p->draft_layers, c->n_seq, c->n_ctx, chunk, c->pool, kv_type, err)))
        return -1;
    /* a logit row per drafted token and one more per sequence */
    if (context_reserve_logits(c, c->n_seq * (1 + draft_max), err) < 0) return -1;
    s->draft_max = draft_max;
    if (p->lookup) s->lookup = p->lookup;
    s->spec_default = p->default_method ? (int)p->default_method
                      : p->draft_model   ? WICK_SPEC_DRAFT
                      : p->draft_layers  ? WICK_SPEC_LAYERS
                      : p->lookup        ? WICK_SPEC_LOOKUP
                                         : WICK_SPEC_OFF;
    if (s->spec_default != WICK_SPEC_OFF && !s->drafters[s->spec_default])
        return wick_fail(err, "the default speculative method has no drafter configured");
    return 0;
}

/* ---- requests ---- */

static void req_free(sched_req *q) {
    if (!q) return;
    text_out_free(&q->text);
    if (q->stops)
        for (int i = 0; i < q->r.n_stop; i++) free(q->stops[i]);
    free(q->stops);
    free(q->bias);
    free(q->tokens);
    free(q->q);
    span_plan_free(q->plan);
    free(q);
}

/* The seeding wick_generate has always used (sampler_seed), kept per request. */
static void seed_rng(uint64_t rng[4], uint64_t seed) {
    sampler tmp = {0};
    sampler_seed(&tmp, seed);
    memcpy(rng, tmp.rng, sizeof tmp.rng);
}

static int submit_checks(const wick_context *c, const wick_request *r, const int32_t *prompt, int n_prompt, int room,
                         wick_error *err);
static int64_t submit_queue(wick_sched *s, sched_req *q, const wick_request *r, const int32_t *prompt, int n_prompt,
                            int room, wick_error *err);

int64_t wick_sched_submit(wick_sched *s, const wick_request *r, wick_error *err) {
    wick_context *c = s->c;
    if (!r || !r->on_done) return wick_fail(err, "a request needs an on_done callback");
    int32_t *laid = NULL; /* a span request's tokens, laid out */
    span_plan *plan = NULL;
    int n_prompt = r->n_prompt;
    if (r->spans) {
        if (!(laid = malloc((size_t)c->n_ctx * sizeof *laid))) return wick_fail(err, "out of memory");
        if (!(plan = span_plan_new(c, r->spans, r->cache_salt, laid, &n_prompt, err))) {
            free(laid);
            return -1;
        }
    } else {
        if (n_prompt <= 0 || !r->prompt) return wick_fail(err, "the prompt is empty (no tokens)");
        if (n_prompt > c->n_ctx)
            return wick_fail(err, "prompt is %d tokens but the context holds %d", n_prompt, c->n_ctx);
    }
    const int32_t *prompt = laid ? laid : r->prompt;
    int room = c->n_ctx - n_prompt;
    int rc = submit_checks(c, r, prompt, n_prompt, room, err);
    if (rc < 0) {
        free(laid);
        span_plan_free(plan);
        return -1;
    }
    sched_req *q = calloc(1, sizeof *q);
    if (!q) {
        free(laid);
        span_plan_free(plan);
        return wick_fail(err, "out of memory");
    }
    q->plan = plan;
    q->tokens = laid;
    return submit_queue(s, q, r, prompt, n_prompt, room, err);
}

static int submit_checks(const wick_context *c, const wick_request *r, const int32_t *prompt, int n_prompt, int room,
                         wick_error *err) {
    if (r->n_predict > room)
        return wick_fail(err, "%d new tokens requested but only %d fit in the context after the %d-token prompt",
                         r->n_predict, room, n_prompt);
    if (r->n_predict < -1) return wick_fail(err, "n_predict must be -1 or more, not %d", r->n_predict);
    if (r->logprobs > WICK_MAX_TOP_LOGPROBS)
        return wick_fail(err, "at most %d top logprobs, not %d", WICK_MAX_TOP_LOGPROBS, r->logprobs);
    if (r->n_stop < 0 || (r->n_stop > 0 && !r->stop)) return wick_fail(err, "bad stop list");
    if (r->spec.method < WICK_SPEC_DEFAULT || r->spec.method > WICK_SPEC_LOOKUP)
        return wick_fail(err, "unknown speculative method %d", (int)r->spec.method);
    if (r->spec.draft_max < 0 || r->spec.draft_max > WICK_DRAFT_MAX_LIMIT)
        return wick_fail(err, "draft max must be in [1, %d], not %d", WICK_DRAFT_MAX_LIMIT, r->spec.draft_max);
    if (r->spec.lookup < 0 || r->spec.lookup > 64)
        return wick_fail(err, "lookup n-gram must be in [1, 64], not %d", r->spec.lookup);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= c->m->hp.n_vocab)
            return wick_fail(err, "prompt token %d out of range [0, %d)", prompt[i], c->m->hp.n_vocab);
    const wick_sampling *p = &r->sampling;
    if (p->n_logit_bias < 0 || (p->n_logit_bias > 0 && !p->logit_bias)) return wick_fail(err, "bad logit bias list");
    for (int i = 0; i < p->n_logit_bias; i++) {
        if (p->logit_bias[i].token < 0 || p->logit_bias[i].token >= c->m->hp.n_vocab)
            return wick_fail(err, "logit bias for token %d, out of range [0, %d)", p->logit_bias[i].token,
                             c->m->hp.n_vocab);
        if (isnan(p->logit_bias[i].bias) || p->logit_bias[i].bias == INFINITY)
            return wick_fail(err, "the logit bias of token %d must be a number or -infinity (never)",
                             p->logit_bias[i].token);
    }
    return 0;
}

/* Copy the rest of r into q (which may already hold its tokens) and queue it. */
static int64_t submit_queue(wick_sched *s, sched_req *q, const wick_request *r, const int32_t *prompt, int n_prompt,
                            int room, wick_error *err) {
    wick_context *c = s->c;
    q->r = *r;
    q->r.spans = NULL;
    if (!q->tokens) q->tokens = malloc((size_t)c->n_ctx * sizeof *q->tokens);
    q->stops = r->n_stop ? calloc((size_t)r->n_stop, sizeof *q->stops) : NULL;
    const int nb = r->sampling.n_logit_bias;
    q->bias = nb ? malloc((size_t)nb * sizeof *q->bias) : NULL;
    if (q->bias) memcpy(q->bias, r->sampling.logit_bias, (size_t)nb * sizeof *q->bias);
    q->r.sampling.logit_bias = q->bias;
    bool ok = q->tokens && (!r->n_stop || q->stops) && (!nb || q->bias);
    for (int i = 0; ok && i < r->n_stop; i++) ok = (q->stops[i] = strdup(r->stop[i] ? r->stop[i] : "")) != NULL;
    if (!ok) {
        req_free(q);
        return wick_fail(err, "out of memory");
    }
    q->r.stop = (const char *const *)q->stops;
    if (text_out_init(&q->text, c->m, q->r.stop, r->n_stop, r->new_message, err) < 0) {
        req_free(q);
        return -1;
    }
    if (prompt != q->tokens) memcpy(q->tokens, prompt, (size_t)n_prompt * sizeof *q->tokens);
    q->r.prompt = q->tokens;
    q->r.n_prompt = n_prompt;
    q->n_tokens = q->n_prompt = n_prompt;
    q->n_predict = r->n_predict < 0 ? room : r->n_predict;
    q->slot = -1;
    q->root = kv_root(&c->kv, r->cache_salt);
    q->spec_method = r->spec.method == WICK_SPEC_DEFAULT ? s->spec_default : (int)r->spec.method;
    if (q->spec_method != WICK_SPEC_OFF && !s->drafters[q->spec_method]) {
        req_free(q);
        return wick_fail(err, "speculative decoding with %s is not set up here",
                         r->spec.method == WICK_SPEC_DRAFT ? "a draft model" : "layer skipping");
    }
    q->draft_max = r->spec.draft_max ? r->spec.draft_max : s->draft_max;
    q->lookup = r->spec.lookup ? r->spec.lookup : s->lookup;
    q->acc = 4, q->rej = 1; /* a prior of 80% acceptance */
    seed_rng(q->rng, r->sampling.seed);
    q->t_submit = now_ms();

    pthread_mutex_lock(&s->mu);
    if (s->max_queue && s->n_incoming_waiting >= s->max_queue) {
        pthread_mutex_unlock(&s->mu);
        req_free(q);
        return wick_fail(err, "queue full: %d requests are waiting", s->max_queue);
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

/* ---- ending requests ---- */

/* The slot's blocks go to the prefix cache (what it computed stays
 * reusable until evicted) or back to the pool. */
static void release_slot(wick_sched *s, sched_req *q) {
    if (q->slot < 0) return;
    if (s->job_owner == q) { /* its span computation is dropped */
        span_job_abort(s->c);
        s->job_owner = NULL;
        s->job_seg = NULL;
    }
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

static void finish(wick_sched *s, sched_req *q, wick_finish why, const char *error) {
    bool was_running = q->slot >= 0;
    release_slot(s, q);
    if (was_running) remove_running(s, q);
    wick_request_result res = {.finish = why, .error = error};
    if (why != WICK_FINISH_ERROR && why != WICK_FINISH_CANCELLED && !q->stopped) res.tail_len = text_out_finish(&q->text, &res.tail);
    if (!res.tail) res.tail = "";
    double t = now_ms();
    res.prompt_tokens = q->n_prompt;
    res.cached_tokens = q->cached_tokens + q->span_hits;
    res.span_cached_tokens = q->span_hits;
    res.generated_tokens = q->n_gen;
    res.preemptions = q->preemptions;
    res.draft_tokens = q->draft_tokens;
    res.accepted_tokens = q->accepted_tokens;
    res.spec_passes = q->spec_passes;
    res.queue_ms = q->ever_admitted ? q->t_admit - q->t_submit : t - q->t_submit;
    if (q->n_gen > 0 || q->t_first > 0) {
        res.ttft_ms = q->t_first - q->t_submit;
        res.prefill_ms = q->t_first - q->t_admit;
        res.decode_ms = t - q->t_first;
    }
    res.total_ms = t - q->t_submit;
    pthread_mutex_lock(&s->mu);
    s->st.requests_finished++;
    pthread_mutex_unlock(&s->mu);
    q->r.on_done(q->r.user, &res);
    req_free(q);
}

/* ---- KV blocks ---- */

static int blocks_for(int n) { return (n + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE; }

/* Put q back at the front of the waiting queue, holding nothing (what it
 * computed stays in the prefix cache, found again on readmission unless
 * evicted by then). */
static void preempt(wick_sched *s, sched_req *q) {
    release_slot(s, q);
    remove_running(s, q);
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
    while (s->waiting && s->n_running < c->n_seq) {
        sched_req *q = s->waiting;
        int slot = 0;
        while (s->slots[slot].owner) slot++;
        /* at least the last token is computed: its logits give the next one;
         * of a span request only the prefix is an ordinary prefix */
        const int reusable = q->plan && q->plan->n_prefix < q->n_tokens - 1 ? q->plan->n_prefix : q->n_tokens - 1;
        const int keep = kv_attach(kv, slot, q->root, q->tokens, reusable, q->plan ? q->plan->n_prefix : KV_NO_LIMIT);
        /* a span request also needs room to compute its spans */
        const int need = blocks_for(q->n_tokens) - kv_seq_blocks(kv, slot) + (q->plan ? span_blocks_needed(q->plan, keep) : 0);
        if (need > kv_blocks_available(kv)) {
            kv_release(kv, slot, KV_NO_LIMIT, false);
            if (s->n_running > 0) return; /* wait for running requests to give blocks back */
            /* Nothing runs and every cached block could be evicted: it can never fit. */
            pthread_mutex_lock(&s->mu);
            s->waiting = q->next;
            s->n_incoming_waiting--;
            pthread_mutex_unlock(&s->mu);
            finish(s, q, WICK_FINISH_ERROR, "the request needs more KV blocks than the pool has (raise the KV budget)");
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
        if (!q->ever_admitted) {
            q->ever_admitted = true;
            q->t_admit = now_ms();
            q->cached_tokens = keep;
            s->st.prompt_tokens += (uint64_t)q->n_prompt;
            s->st.prefix_queries += (uint64_t)(q->plan ? q->plan->n_prefix : q->n_prompt);
            s->st.prefix_hits += (uint64_t)keep;
        }
        pthread_mutex_unlock(&s->mu);
    }
}

/* The most recently admitted running request (n_running > 0): the one to preempt. */
static sched_req *newest_running(const wick_sched *s) {
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
        int need = blocks_for(q->n_tokens) - kv_seq_blocks(kv, q->slot);
        if (need <= 0) continue;
        if (kv_blocks_available(kv) < need) {
            preempt(s, newest_running(s));
            i = -1; /* the running list changed: start over */
            continue;
        }
        wick_error e;
        kv_reserve(kv, q->slot, q->n_tokens, &e); /* cannot fail: the blocks are free */
    }
}

/* ---- sampling ---- */

/* Log-softmax of the raw logits at the sampled id, and the top n. */
static void logprobs(const float *logits, int n_vocab, wick_token_info *ti, int n_top) {
    float mx = -INFINITY;
    for (int i = 0; i < n_vocab; i++)
        if (logits[i] > mx) mx = logits[i];
    double sum = 0;
    for (int i = 0; i < n_vocab; i++) sum += exp((double)logits[i] - mx);
    const double lse = mx + log(sum);
    ti->logprob = (float)(logits[ti->id] - lse);
    ti->n_top = 0;
    for (int i = 0; i < n_vocab && n_top > 0; i++) {
        float v = logits[i];
        if (ti->n_top == n_top && !(v > ti->top_logprobs[n_top - 1])) continue;
        int k = ti->n_top < n_top ? ti->n_top++ : n_top - 1;
        while (k > 0 && v > ti->top_logprobs[k - 1]) {
            ti->top_logprobs[k] = ti->top_logprobs[k - 1];
            ti->top_ids[k] = ti->top_ids[k - 1];
            k--;
        }
        ti->top_logprobs[k] = v;
        ti->top_ids[k] = i;
    }
    for (int k = 0; k < ti->n_top; k++) ti->top_logprobs[k] = (float)(ti->top_logprobs[k] - lse);
}

enum { GO_ON = -1 };

/* Stream token id of q, sampled from logits: GO_ON, or why q ends (the
 * caller finishes it). */
static int emit(wick_sched *s, sched_req *q, int32_t id, const float *logits) {
    wick_context *c = s->c;
    if (q->r.on_logits) q->r.on_logits(q->r.user, logits, c->m->hp.n_vocab);
    if (q->n_gen == 0) q->t_first = now_ms();
    if (!q->r.ignore_eos && wick_token_is_eog(c->m, id)) return WICK_FINISH_STOP;
    q->tokens[q->n_tokens++] = id;
    q->n_gen++;
    pthread_mutex_lock(&s->mu);
    s->st.generation_tokens++;
    pthread_mutex_unlock(&s->mu);
    const char *text;
    size_t len;
    bool stopped = text_out_token(&q->text, id, &text, &len);
    bool go_on = true;
    if (q->r.on_token) {
        wick_token_info ti = {.id = id, .index = q->n_gen - 1};
        if (q->r.logprobs >= 0) logprobs(logits, c->m->hp.n_vocab, &ti, q->r.logprobs);
        go_on = q->r.on_token(q->r.user, &ti, text, len);
    }
    if (stopped) {
        q->stopped = true; /* the text before the stop string went out; nothing is held */
        return WICK_FINISH_STOP;
    }
    if (!go_on) return WICK_FINISH_CANCELLED;
    if (q->n_gen >= q->n_predict || q->n_tokens >= c->n_ctx) return WICK_FINISH_LENGTH;
    return GO_ON;
}

/* Sample the next token of q from logits and stream it. Returns whether q
 * goes on (else it has been finished). */
static bool advance(wick_sched *s, sched_req *q, const float *logits) {
    wick_context *c = s->c;
    if (q->n_predict == 0) { /* prefill only */
        finish(s, q, WICK_FINISH_LENGTH, NULL);
        return false;
    }
    const double ts = c->fs.prof ? now_ms() : 0;
    memcpy(c->smp.rng, q->rng, sizeof q->rng);
    int32_t id = sampler_sample(&c->smp, &q->r.sampling, logits, q->tokens, q->n_tokens);
    memcpy(q->rng, c->smp.rng, sizeof q->rng);
    if (c->fs.prof) c->prof.ms[WICK_OP_SAMPLING] += now_ms() - ts;
    const int why = emit(s, q, id, logits);
    if (why != GO_ON) {
        finish(s, q, why, NULL);
        return false;
    }
    return true;
}

/* ---- speculative decoding ---- */

/* The next draft length: the run of accepted drafts expected at the recent
 * acceptance rate a (a / (1 - a)), plus one; 1 .. draft_max. */
static int draft_len(const sched_req *q) {
    double a = q->acc / (q->acc + q->rej);
    if (a > 0.95) a = 0.95;
    int k = 1 + (int)lround(a / (1 - a));
    return k < q->draft_max ? k : q->draft_max;
}

/* Every decoding request with a drafter proposes this step's drafts, within
 * the logit rows and batch tokens left beyond one per running request, the
 * tokens it may still generate and the context; then the KV blocks for them
 * are reserved where the pool has them (drafts never preempt anyone). */
static void draft_all(wick_sched *s) {
    wick_context *c = s->c;
    kv_cache *kv = &c->kv;
    const int V = c->m->hp.n_vocab;
    int rows_left = c->fs.max_logits - s->n_running, tok_left = s->budget;
    for (int i = 0; i < s->n_running; i++) tok_left -= s->running[i]->n_tokens - s->running[i]->n_computed == 1;
    for (int i = 0; i < s->n_running; i++) {
        sched_req *q = s->running[i];
        q->n_draft = 0;
        if (q->spec_method == WICK_SPEC_OFF || q->n_tokens - q->n_computed != 1 || q->n_predict == 0) continue;
        drafter *d = s->drafters[q->spec_method];
        int k = draft_len(q);
        const int left = q->n_predict - q->n_gen - 1, room = c->n_ctx - q->n_tokens;
        if (k > left) k = left;
        if (k > room) k = room;
        if (k > rows_left) k = rows_left;
        if (k > tok_left) k = tok_left;
        if (k < 1) continue;
        const bool want_q = !d->point_mass && !spec_greedy(&q->r.sampling);
        if (want_q && !q->q && !(q->q = malloc((size_t)q->draft_max * (size_t)V * sizeof *q->q))) continue;
        draft_call dc = {.seq = q->slot, .tokens = q->tokens, .n_tokens = q->n_tokens, .k = k, .lookup = q->lookup,
                         .sampling = &q->r.sampling, .smp = &c->smp, .out = q->tokens + q->n_tokens,
                         .q = want_q ? q->q : NULL};
        wick_error e;
        memcpy(c->smp.rng, q->rng, sizeof q->rng);
        const int got = d->ops->propose(d, &dc, &e); /* a drafter that fails drafts nothing */
        memcpy(q->rng, c->smp.rng, sizeof q->rng);
        if (got <= 0) continue;
        /* blocks for the drafts, as far as the pool has them */
        const int have = kv_seq_blocks(kv, q->slot) + kv_blocks_available(kv);
        int n_draft = got;
        if (blocks_for(q->n_tokens + n_draft) > have) n_draft = have * KV_BLOCK_SIZE - q->n_tokens;
        if (n_draft < 1) continue;
        wick_error re;
        if (kv_reserve(kv, q->slot, q->n_tokens + n_draft, &re) < 0) continue;
        q->n_draft = n_draft;
        rows_left -= n_draft;
        tok_left -= n_draft;
    }
}

/* q's last token and its n_draft drafts went through the target, whose logit
 * rows from `row` on give the distributions at each: keep the accepted run,
 * drop the rest's KV, and stream the accepted tokens and the one after them
 * (each checked as a sampled token is: the first that ends q ends it, and
 * q's KV then holds what plain decoding's would). */
static void advance_spec(wick_sched *s, sched_req *q, int row) {
    wick_context *c = s->c;
    const int n = q->n_tokens, k = q->n_draft, V = c->m->hp.n_vocab;
    drafter *d = s->drafters[q->spec_method];
    const float *rows = wick_logits(c, row);
    const double ts = c->fs.prof ? now_ms() : 0;
    spec_verify v = {.sampling = &q->r.sampling, .rows = rows, .hist = q->tokens, .n_hist = n, .k = k,
                     .q = d->point_mass ? NULL : q->q, .pbuf = s->pbuf};
    int32_t next;
    memcpy(c->smp.rng, q->rng, sizeof q->rng);
    const int j = spec_accept(&c->smp, &v, &next);
    memcpy(q->rng, c->smp.rng, sizeof q->rng);
    if (c->fs.prof) c->prof.ms[WICK_OP_SAMPLING] += now_ms() - ts;
    q->n_draft = 0;
    q->acc = 0.8 * q->acc + j;
    q->rej = 0.8 * q->rej + (j < k);
    /* the KV keeps the last token and the accepted drafts */
    kv_truncate(&c->kv, q->slot, n + j);
    q->n_computed = n + j;
    if (d->ops->rollback) d->ops->rollback(d, q->slot, n + j);
    int e = 0, why = GO_ON;
    for (; e <= j && why == GO_ON; e++) why = emit(s, q, e < j ? q->tokens[n + e] : next, rows + (size_t)e * V);
    /* accepted drafts that were used: all, or those up to the token that ended q */
    const int used = e - 1 < j ? e : j;
    q->draft_tokens += k;
    q->accepted_tokens += used;
    q->spec_passes++;
    pthread_mutex_lock(&s->mu);
    s->st.spec_draft_tokens += (uint64_t)k;
    s->st.spec_accepted_tokens += (uint64_t)used;
    s->st.spec_passes++;
    pthread_mutex_unlock(&s->mu);
    if (why != GO_ON) {
        kv_truncate(&c->kv, q->slot, n + e - 1); /* what plain decoding's KV would hold */
        q->n_computed = n + e - 1;
        finish(s, q, why, NULL);
        return;
    }
    kv_commit(&c->kv, q->slot);
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
        if (cancelled) finish(s, q, WICK_FINISH_CANCELLED, NULL);
        else pp = &q->next;
    }
    /* Cancelled running requests: their KV stays as an idle prefix. */
    for (int i = 0; i < s->n_running;) {
        sched_req *q = s->running[i];
        pthread_mutex_lock(&s->mu);
        bool cancelled = q->cancelled;
        pthread_mutex_unlock(&s->mu);
        if (cancelled) finish(s, q, WICK_FINISH_CANCELLED, NULL); /* removes running[i] */
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

static void count_spans(wick_sched *s, sched_req *q, int hits, int queries) {
    q->span_hits += hits;
    q->span_queries += queries;
    pthread_mutex_lock(&s->mu);
    s->st.span_queries += (uint64_t)queries;
    s->st.span_hits += (uint64_t)hits;
    pthread_mutex_unlock(&s->mu);
}

/* Span requests whose prefill reached a placed span: place it from the span
 * cache, and every one that follows at once; a span the cache lacks starts
 * the span job (its tokens then ride in the batches) or, while another
 * request's job runs, waits. */
static void place_spans(wick_sched *s) {
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
                    sched_req *newest = newest_running(s);
                    preempt(s, newest);
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
            finish(s, q, WICK_FINISH_ERROR, e.msg); /* removes running[i] */
            restart = true;
        }
        if (restart) i = -1; /* the running list changed */
    }
}

/* After a step with span-job tokens: once the span is computed, place it. */
static void finish_job(wick_sched *s) {
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
        finish(s, q, WICK_FINISH_ERROR, e.msg);
        return;
    }
    q->n_computed = to;
}

static int step_inner(wick_sched *s, wick_error *err) {
    wick_context *c = s->c;
    take_in(s);
    admit(s);
    ensure_decode_blocks(s);
    place_spans(s);
    if (s->n_running == 0) {
        admit(s);
        if (s->n_running == 0) return pending(s);
    }
    draft_all(s);

    /* Decoders first (one token each), then prefill chunks in admission order. */
    int n = 0, n_order = 0;
    sched_req **order = s->order;
    for (int i = 0; i < s->n_running; i++)
        if (s->running[i]->n_tokens - s->running[i]->n_computed == 1) order[n_order++] = s->running[i];
    int n_dec = n_order;
    for (int i = 0; i < s->n_running; i++)
        if (s->running[i]->n_tokens - s->running[i]->n_computed > 1) order[n_order++] = s->running[i];
    /* Prefill in admission order. */
    for (int i = n_dec + 1; i < n_order; i++)
        for (int k = i; k > n_dec && order[k]->admit_seq < order[k - 1]->admit_seq; k--) {
            sched_req *t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    int n_in = 0, *counts = s->counts, job_n = 0;
    sched_req **in_batch = s->in_batch;
    for (int i = 0; i < n_order && n < s->budget; i++) {
        sched_req *q = order[i];
        int take = q->n_tokens - q->n_computed + q->n_draft; /* a decoder's drafts follow its last token */
        if (take > s->budget - n) take = s->budget - n;
        if (q->plan) { /* up to the next placed span */
            const int placed = span_next_placed(q->plan, q->n_computed);
            if (placed - q->n_computed < take) take = placed - q->n_computed;
        }
        if (q->n_draft > take - 1) q->n_draft = take > 0 ? take - 1 : 0; /* (never, by draft_all's count) */
        for (int k = 0; k < take; k++) {
            int p = q->n_computed + k;
            s->b_tok[n] = q->tokens[p];
            s->b_pos[n] = p;
            s->b_rope[n] = q->plan ? span_rope_pos(q->plan, p) : p;
            s->b_seq[n] = q->slot;
            s->b_want[n] = p >= q->n_tokens - 1;
            n++;
        }
        if (q == s->job_owner) { /* its span job's tokens: A ++ S in the span sequence */
            const int at = kv_seq_len(&c->kv, c->span_iso), total = q->plan->n_anchor + s->job_seg->len;
            const int jt = total - at < s->budget - n ? total - at : s->budget - n;
            for (int k = 0; k < jt; k++) {
                s->b_tok[n] = span_job_token(q->plan, s->job_seg, at + k);
                s->b_pos[n] = s->b_rope[n] = at + k;
                s->b_seq[n] = c->span_iso;
                s->b_want[n] = false;
                n++;
            }
            job_n = jt;
        }
        in_batch[n_in] = q;
        counts[n_in++] = take;
    }
    if (n == 0) {
        /* Every running request is a span request waiting for blocks to
         * compute its span: the newest gives its blocks back. */
        preempt(s, newest_running(s));
        return pending(s);
    }
    wick_batch b = {.n = n, .tokens = s->b_tok, .pos = s->b_pos, .seq = s->b_seq, .want_logits = s->b_want,
                    .rope_pos = s->b_rope};
    wick_error e;
    const fwd_capture cap = s->job_owner ? span_job_capture(c, s->job_owner->plan) : (fwd_capture){-1, 0, -1};
    c->fs.capture = job_n ? &cap : NULL;
    const int rc = context_decode_any(c, &b, &e);
    c->fs.capture = NULL;
    if (rc < 0) {
        /* The KV of the batch's sequences is in doubt: drop it. */
        for (int i = 0; i < n_in; i++) {
            kv_truncate(&c->kv, in_batch[i]->slot, 0);
            finish(s, in_batch[i], WICK_FINISH_ERROR, e.msg);
        }
        if (err) *err = e;
        return -1;
    }
    pthread_mutex_lock(&s->mu);
    s->st.steps++;
    s->st.step_tokens += (uint64_t)n;
    pthread_mutex_unlock(&s->mu);
    int row = 0;
    for (int i = 0; i < n_in; i++) {
        sched_req *q = in_batch[i];
        q->n_computed += counts[i];
        if (q->n_draft > 0) { /* verify its drafts */
            const int r0 = row;
            row += 1 + q->n_draft;
            advance_spec(s, q, r0);
            continue;
        }
        kv_commit(&c->kv, q->slot);
        if (q->n_computed == q->n_tokens) advance(s, q, wick_logits(c, row++));
    }
    if (job_n) finish_job(s);
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
    if (pthread_create(&s->thread, NULL, sched_thread, s) != 0) return wick_fail(err, "cannot start the scheduler thread");
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
        while (s->n_running) finish(s, s->running[0], WICK_FINISH_CANCELLED, NULL);
        while (s->waiting) {
            sched_req *q = s->waiting;
            s->waiting = q->next;
            s->n_incoming_waiting--;
            finish(s, q, WICK_FINISH_CANCELLED, NULL);
        }
    }
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s->slots);
    free(s->running);
    free(s->b_tok);
    free(s->b_pos);
    free(s->b_seq);
    free(s->b_rope);
    free(s->b_want);
    free(s->order);
    free(s->in_batch);
    free(s->counts);
    free(s->pbuf);
    for (int i = 0; i <= WICK_SPEC_LOOKUP; i++) drafter_free(s->drafters[i]);
    free(s);
}
