/* sched_internal.h — what the scheduler's files share: a request's state
 * (sched_req), the scheduler's (struct wick_sched) and the calls between
 * them. The API is in wick.h ("scheduler"); how a step goes is told in
 * scheduler.c. The files:
 *   request.c     a request's life cycle: submit checks, its copy, the n_predict
 *                 clamp, its sampling state (knobs, logits processors, PRNG),
 *                 taking tokens in (text, stop strings, callbacks), its result
 *   scheduler.c   queues, admission, preemption, the step loop
 *   batch.c       building one forward batch (decode tokens, prefill chunks)
 *   spec.c        speculative decoding: drafting, verification, acceptance
 *   sched_masks.c grammar masks computed while the forward pass runs
 *   sched_spans.c span requests: placing spans, the span job
 *   sched_shift.c context shift: a full sequence drops tokens and goes on
 * Only the stepping thread touches waiting/running, the batch and the KV
 * cache; incoming, the cancel flags and the stats are under mu. */
#ifndef WICK_ENGINE_SCHED_INTERNAL_H
#define WICK_ENGINE_SCHED_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "engine/context.h"
#include "engine/draft.h"
#include "engine/sampler.h"
#include "engine/spans.h"
#include "engine/text_out.h"
#include "kv/kv_cache.h"
#include "wick.h"

typedef struct sched_req sched_req;
typedef struct sched_masks sched_masks;
struct sched_req {
    int64_t id;
    wick_request r;          /* prompt and stop point at the copies below */
    int32_t *tokens;         /* [n_ctx]: prompt + generated */
    int n_tokens, n_prompt, n_gen;
    int n_predict;           /* most tokens it generates: n_prompt + n_predict <= n_ctx (request_clamp_predict) */
    int n_computed;          /* tokens of `tokens` in the slot's KV cache */
    kv_key root;             /* its prefix-cache chain root (model, KV, cache salt) */
    span_plan *plan;         /* a span request's layout (NULL: an ordinary prompt) */
    int span_hits, span_queries; /* placed span tokens found in / looked up in the span cache */
    int slot;                /* -1 while waiting */
    int64_t admit_seq;       /* admission order: the newest is preempted first */
    sampler_rng rng;         /* its own PRNG: every draw for it (drafts included) advances it */
    sampler_cfg cfg;         /* its knobs (r.sampling) and logits processors (its logit biases first) */
    char **stops;
    wick_logit_bias *bias; /* the request's logit biases (r.sampling points here) */
    text_out text;
    bool cancelled, ever_admitted, stopped;
    int cached_tokens, preemptions;
    int progress_at;         /* prompt tokens last reported to on_progress (a preempted prompt never goes back) */
    int ctx_shifts, ctx_dropped; /* times its context was shifted and the tokens dropped (sched_shift.c) */
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
    /* structured output (NULL = none): its matcher, and the mask of the
     * tokens it allows next, the last of cfg's processors */
    wick_grammar_matcher *gm;
    token_mask gmask;
    /* a lazily started grammar: its matcher until a trigger token is
     * sampled (then it becomes gm), and the triggers */
    wick_grammar_matcher *gm_lazy;
    int32_t triggers[WICK_MAX_GRAMMAR_TRIGGERS];
    int n_triggers;
    const char *fail; /* why req_emit ended q with WICK_FINISH_ERROR */
    bool mask_ready, mask_ok; /* gmask computed for the next token (sched_masks.c), and its result */
    sched_req *next;
};

typedef struct slot_info {
    sched_req *owner;
} slot_info;

/* One forward batch (batch.c): its token rows and the requests in it. */
typedef struct sched_batch {
    int32_t *tok, *pos, *seq, *rope; /* [budget] */
    bool *want;                      /* [budget] */
    sched_req **order, **in;         /* [n_seq]: running requests in batch order; those in the batch */
    int *counts;                     /* [n_seq]: tokens each of `in` adds */
    int n, n_in;                     /* token rows; requests in it */
    int job_n;                       /* rows of the span job (sched_spans.c) among them */
} sched_batch;

struct wick_sched {
    wick_context *c;
    int budget, max_queue;
    slot_info *slots;
    /* the stepping thread's; waiting and running change under mu (cancel reads them) */
    sched_req *waiting;      /* FIFO (head first) */
    sched_req **running;     /* [n_seq], admission order not kept: see admit_seq */
    int n_running;
    int64_t admit_counter;
    sched_batch batch;
    /* the span being computed in isolation (one at a time; engine/spans.h):
     * its request, which waits at that span's placed run, and the span */
    sched_req *job_owner;
    span_seg *job_seg;
    /* speculative decoding: a drafter per method (NULL = not configured) */
    drafter *drafters[WICK_SPEC_LOOKUP + 1];
    int spec_default, draft_max, lookup;
    float *pbuf;             /* [n_vocab] the acceptance rule's scratch */
    sched_masks *masks;      /* grammar masks computed during the forward pass (NULL until needed) */
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


static inline int sched_blocks_for(int n) { return (n + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE; }

/* ---- request.c ---- */

/* req_emit's "q goes on" (else it returns the wick_finish that ends q). */
enum { REQ_GO_ON = -1 };

void req_free(sched_req *q);
/* Stream token id of q, sampled from logits: REQ_GO_ON, or why q ends (the
 * caller finishes it). */
int req_emit(wick_sched *s, sched_req *q, int32_t id, const float *logits);
/* Bring q's grammar mask to the position after its tokens so far: false
 * when the grammar allows nothing there (q->fail says why). */
bool req_grammar_mask(sched_req *q);
/* Sample the next token of q from logits and stream it. Returns whether q
 * goes on (else it has been finished). */
bool req_advance(wick_sched *s, sched_req *q, const float *logits);
/* End q: its slot (if any) is let go, on_done gets the result, q is freed. */
void req_finish(wick_sched *s, sched_req *q, wick_finish why, const char *error);

/* ---- scheduler.c ---- */

/* Queue q (complete but for its id): its id, or -1 with err (queue full; q is freed). */
int64_t sched_enqueue(wick_sched *s, sched_req *q, wick_error *err);
/* q (running) lets go of its slot and leaves the running list. */
void sched_release(wick_sched *s, sched_req *q);
/* Put q back at the front of the waiting queue, holding nothing. */
void sched_preempt(wick_sched *s, sched_req *q);
/* The most recently admitted running request (n_running > 0): the one to preempt. */
sched_req *sched_newest_running(const wick_sched *s);

/* ---- batch.c ---- */

int sched_batch_init(sched_batch *b, int budget, int n_seq);
void sched_batch_free(sched_batch *b);
/* Build this step's batch into s->batch; its token count (0: none could go). */
int sched_batch_build(wick_sched *s);

/* ---- spec.c ---- */

/* The scheduler's drafting state: prompt lookup set up, the defaults. 0 or -1. */
int spec_init(wick_sched *s);
void spec_free(wick_sched *s);
/* q's method, draft length and lookup n-gram from its request (r) and the
 * scheduler's defaults: 0, or -1 with err when the method is not set up. */
int spec_req_init(const wick_sched *s, sched_req *q, const wick_spec_request *r, wick_error *err);
/* Every decoding request with a drafter proposes this step's drafts. */
void spec_draft_all(wick_sched *s);
/* q's last token and its n_draft drafts went through the target, whose logit
 * rows from `row` on give the distributions at each: keep the accepted run
 * and stream it and the token after it. */
void spec_advance(wick_sched *s, sched_req *q, int row);

/* ---- sched_masks.c ---- */

/* Before the forward pass: the masks of this step's sampling grammar
 * requests go to the worker thread (started on first use). */
void sched_masks_start(wick_sched *s);
/* After it: every mask handed out is done (those not taken yet computed here). */
void sched_masks_wait(wick_sched *s);
void sched_masks_free(wick_sched *s);

/* ---- sched_shift.c ---- */

/* Every running request that shifts its context and whose history fills
 * the context drops tokens (wick_request.ctx_shift) before the batch is built. */
void sched_shift_full(wick_sched *s);

/* ---- sched_spans.c ---- */

/* Span requests whose prefill reached a placed span: place it, or start the span job. */
void spans_place(wick_sched *s);
/* The span job's tokens that fit in s->batch after n rows: appended, their count. */
int spans_job_rows(wick_sched *s, int n);
/* After a step with span-job rows: once the span is computed, place it. */
void spans_finish_job(wick_sched *s);
/* q lets go of its slot: a span job of its is dropped. */
void spans_drop_job(wick_sched *s, const sched_req *q);

#endif
