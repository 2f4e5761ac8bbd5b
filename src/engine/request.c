/* request.c — a scheduler request's life cycle (wick_sched_submit, the
 * scheduler's internals in sched_internal.h): the checks at submit, the
 * request's own copy of everything it was given, the one clamp of a
 * generation length to the context (request.h), its sampling state (its
 * knobs, its logits processors with its logit biases first, its own PRNG,
 * seeded from its seed and kept across preemption), taking each new token
 * in (history, text with stop strings held back, callbacks, logprobs), and
 * its result when it ends. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/error.h"
#include "engine/grammar.h"
#include "engine/request.h"
#include "engine/sched_internal.h"

void req_free(sched_req *q) {
    if (!q) return;
    text_out_free(&q->text);
    if (q->stops)
        for (int i = 0; i < q->r.n_stop; i++) free(q->stops[i]);
    free(q->stops);
    free(q->bias);
    free(q->tokens);
    free(q->q);
    wick_grammar_matcher_free(q->gm);
    wick_grammar_matcher_free(q->gm_lazy);
    token_mask_free(&q->gmask);
    span_plan_free(q->plan);
    free(q);
}

/* The one clamp of a generation length to the context. A request's
 * n_predict goes through it at submit (after the check that it is -1 or at
 * most the room), so n_prompt + n_predict <= n_ctx: a request never outgrows
 * its context, and nothing downstream checks that again (a request that
 * shifts its context drops tokens before its history outgrows it:
 * sched_shift.c). */
int request_clamp_predict(long long n_predict, int n_ctx, int n_prompt) {
    const int room = n_ctx > n_prompt ? n_ctx - n_prompt : 0;
    return n_predict < 0 || n_predict > room ? room : (int)n_predict;
}

static int submit_checks(const wick_context *c, const wick_request *r, const int32_t *prompt, int n_prompt,
                         wick_error *err) {
    const int most = request_clamp_predict(r->n_predict, c->n_ctx, n_prompt);
    if (r->ctx_shift.on && (r->ctx_shift.n_keep < 0 || r->ctx_shift.n_discard < 0))
        return wick_fail(err, "context shift: n_keep and n_discard must not be negative");
    if (r->ctx_shift.on && r->spans) return wick_fail(err, "context shift does not apply to span requests");
    if (r->n_predict > most && !r->ctx_shift.on)
        return wick_fail_code(err, WICK_E_TOO_LONG,
                              "%d new tokens requested but only %d fit in the context after the %d-token prompt",
                              r->n_predict, most, n_prompt);
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
    if (r->forget_prefix && (r->spans || r->grammar))
        return wick_fail(err, "a forget_prefix request has no spans and no grammar");
    if (r->n_grammar_triggers < 0 || r->n_grammar_triggers > WICK_MAX_GRAMMAR_TRIGGERS ||
        (r->n_grammar_triggers > 0 && (!r->grammar_triggers || !r->grammar)))
        return wick_fail(err, "grammar triggers need a grammar and are at most %d tokens", WICK_MAX_GRAMMAR_TRIGGERS);
    for (int i = 0; i < r->n_grammar_triggers; i++)
        if (r->grammar_triggers[i] < 0 || r->grammar_triggers[i] >= c->m->hp.n_vocab)
            return wick_fail(err, "grammar trigger token %d out of range [0, %d)", r->grammar_triggers[i], c->m->hp.n_vocab);
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

/* Copy the rest of r into q (which may already hold its tokens): 0, or -1
 * with err (q is freed). */
static int req_copy(wick_sched *s, sched_req *q, const wick_request *r, const int32_t *prompt, int n_prompt,
                    wick_error *err) {
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
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
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
    /* a shifting request may generate past the context (-1: until it is full) */
    q->n_predict = r->ctx_shift.on && r->n_predict >= 0 ? r->n_predict : request_clamp_predict(r->n_predict, c->n_ctx, n_prompt);
    q->slot = -1;
    q->root = kv_root(&c->kv, r->cache_salt);
    if (spec_req_init(s, q, &r->spec, err) < 0) {
        req_free(q);
        return -1;
    }
    sampler_cfg_init(&q->cfg, &q->r.sampling);
    if (r->grammar) {
        if (grammar_model(r->grammar) != c->m) {
            req_free(q);
            return wick_fail(err, "the grammar was compiled for another model");
        }
        if (!(q->gm = wick_grammar_matcher_new(r->grammar, err)) || token_mask_init(&q->gmask, c->m->hp.n_vocab, err) < 0 ||
            sampler_cfg_add(&q->cfg, logits_proc_mask(&q->gmask)) < 0) {
            req_free(q);
            return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        }
        if (r->n_grammar_triggers > 0) { /* lazy: the mask joins the processors at the trigger */
            memcpy(q->triggers, r->grammar_triggers, (size_t)r->n_grammar_triggers * sizeof *q->triggers);
            q->n_triggers = r->n_grammar_triggers;
            q->gm_lazy = q->gm;
            q->gm = NULL;
            q->cfg.n_procs--;
            q->spec_method = WICK_SPEC_OFF; /* drafts past a trigger would skip the grammar */
        }
    }
    sampler_rng_seed(&q->rng, r->sampling.seed);
    q->t_submit = wick_now_ms();
    return 0;
}

int64_t wick_sched_submit(wick_sched *s, const wick_request *r, wick_error *err) {
    wick_context *c = s->c;
    if (!r || !r->on_done) return wick_fail(err, "a request needs an on_done callback");
    int32_t *laid = NULL; /* a span request's tokens, laid out */
    span_plan *plan = NULL;
    int n_prompt = r->n_prompt;
    if (r->spans) {
        if (!(laid = malloc((size_t)c->n_ctx * sizeof *laid))) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        if (!(plan = span_plan_new(c, r->spans, r->cache_salt, laid, &n_prompt, err))) {
            free(laid);
            return -1;
        }
    } else {
        if (n_prompt <= 0 || !r->prompt) return wick_fail(err, "the prompt is empty (no tokens)");
        if (n_prompt > c->n_ctx)
            return wick_fail_code(err, WICK_E_TOO_LONG, "prompt is %d tokens but the context holds %d", n_prompt, c->n_ctx);
    }
    const int32_t *prompt = laid ? laid : r->prompt;
    if (submit_checks(c, r, prompt, n_prompt, err) < 0) {
        free(laid);
        span_plan_free(plan);
        return -1;
    }
    sched_req *q = calloc(1, sizeof *q);
    if (!q) {
        free(laid);
        span_plan_free(plan);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    q->plan = plan;
    q->tokens = laid;
    if (req_copy(s, q, r, prompt, n_prompt, err) < 0) return -1;
    return sched_enqueue(s, q, err);
}

/* ---- tokens in ---- */

static bool is_trigger(const sched_req *q, int32_t id) {
    for (int i = 0; i < q->n_triggers; i++)
        if (q->triggers[i] == id) return true;
    return false;
}

int req_emit(wick_sched *s, sched_req *q, int32_t id, const float *logits) {
    wick_context *c = s->c;
    if (q->r.on_logits) q->r.on_logits(q->r.user, logits, c->m->hp.n_vocab);
    if (q->n_gen == 0) q->t_first = wick_now_ms();
    const bool eog = wick_token_is_eog(c->m, id);
    if (eog && (!q->r.ignore_eos || q->gm)) return WICK_FINISH_STOP; /* a grammar allows it only where complete */
    wick_token_info ti = {.id = id, .index = q->n_gen};
    if (q->r.on_token && q->r.logprobs >= 0 && q->r.post_sampling_probs) { /* before the grammar takes id */
        if (q->gm) (void)wick_grammar_matcher_mask(q->gm, q->gmask.bits); /* this position's (speculation moved on) */
        sampler_post_probs(&c->smp, &q->cfg, logits, q->tokens, q->n_tokens, &ti, q->r.logprobs);
    }
    if (q->gm_lazy && is_trigger(q, id)) { /* the grammar starts: with this token where it writes it, else after it */
        q->gm = q->gm_lazy;
        q->gm_lazy = NULL;
        sampler_cfg_add(&q->cfg, logits_proc_mask(&q->gmask)); /* (room kept at submit) */
        (void)wick_grammar_matcher_accept(q->gm, id);
    } else if (q->gm && !wick_grammar_matcher_accept(q->gm, id)) {
        q->fail = "the grammar refused the sampled token";
        return WICK_FINISH_ERROR;
    }
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
        if (q->r.logprobs >= 0 && !q->r.post_sampling_probs) sampler_logprobs(logits, c->m->hp.n_vocab, &ti, q->r.logprobs);
        go_on = q->r.on_token(q->r.user, &ti, text, len);
    }
    if (stopped) {
        q->stopped = true; /* the text before the stop string went out; nothing is held */
        return WICK_FINISH_STOP;
    }
    if (!go_on) return WICK_FINISH_CANCELLED;
    if (q->n_gen >= q->n_predict) return WICK_FINISH_LENGTH; /* (the context is full at the latest, unless it shifts) */
    return REQ_GO_ON;
}

bool req_advance(wick_sched *s, sched_req *q, const float *logits) {
    wick_context *c = s->c;
    if (q->n_predict == 0) { /* prefill only */
        req_finish(s, q, WICK_FINISH_LENGTH, NULL);
        return false;
    }
    const double ts = c->profiling ? wick_now_ms() : 0;
    const bool mask_ok = q->mask_ready ? q->mask_ok : q->gm ? req_grammar_mask(q) : true; /* (sched_masks.c) */
    q->mask_ready = false;
    if (!mask_ok) {
        req_finish(s, q, q->fail ? WICK_FINISH_ERROR : WICK_FINISH_STOP, NULL);
        return false;
    }
    int32_t id = sampler_sample(&c->smp, &q->cfg, logits, q->tokens, q->n_tokens, &q->rng);
    if (c->profiling) c->prof.ms[WICK_OP_SAMPLING] += wick_now_ms() - ts;
    const int why = req_emit(s, q, id, logits);
    if (why != REQ_GO_ON) {
        req_finish(s, q, why, NULL);
        return false;
    }
    return true;
}

bool req_grammar_mask(sched_req *q) {
    if (wick_grammar_matcher_mask(q->gm, q->gmask.bits) > 0) return true;
    /* nothing allowed: the end of a complete output for a model without an
     * end-of-generation token, else a grammar no token can continue */
    if (!wick_grammar_matcher_complete(q->gm)) q->fail = "the grammar allows no token here (no token of the vocabulary continues it)";
    return false;
}

/* ---- the end ---- */

void req_finish(wick_sched *s, sched_req *q, wick_finish why, const char *error) {
    if (q->slot >= 0) sched_release(s, q);
    if (why == WICK_FINISH_ERROR && !error) error = q->fail ? q->fail : "internal error";
    wick_grammar_matcher_free(q->gm); /* before on_done: the grammar need not outlive that call */
    wick_grammar_matcher_free(q->gm_lazy);
    q->gm = q->gm_lazy = NULL;
    wick_request_result res = {.finish = why, .error = error};
    if (why != WICK_FINISH_ERROR && why != WICK_FINISH_CANCELLED && !q->stopped) res.tail_len = text_out_finish(&q->text, &res.tail);
    if (!res.tail) res.tail = "";
    double t = wick_now_ms();
    res.prompt_tokens = q->n_prompt;
    res.cached_tokens = q->cached_tokens + q->span_hits;
    res.span_cached_tokens = q->span_hits;
    res.generated_tokens = q->n_gen;
    res.preemptions = q->preemptions;
    res.ctx_shifts = q->ctx_shifts;
    res.ctx_dropped = q->ctx_dropped;
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
