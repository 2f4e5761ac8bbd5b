/* generate.c — wick_generate: one request through the scheduler (the same
 * path `wick serve` runs many through), stepped on the calling thread. The
 * scheduler reuses the longest common prefix of what sequence 0 holds and
 * prefills only the rest, in chunks; streamed text is UTF-8-complete, with
 * stop strings held back, optionally gathered `stream_every` tokens at a time.
 * n_predict 0 only prefills (so wick_logits gives the prompt's last logits);
 * a negative one runs until the context is full (request_clamp_predict). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "engine/context.h"
#include "engine/request.h"

bool wick_token_is_eog(const wick_model *m, int32_t id) {
    for (int i = 0; i < m->n_eog; i++)
        if (m->eog[i] == id) return true;
    return false;
}

/* What the request's callbacks gather for wick_generate. */
typedef struct gen_state {
    const wick_generate_params *p;
    int32_t *out;
    int n_out;
    char *batch; /* text held for stream_every > 1 */
    size_t n_batch, cap_batch;
    int n_batched;
    int32_t last;
    bool done, stop_cb;
    wick_request_result res;
    char error[256];
} gen_state;

static bool deliver(gen_state *g, const char *text, size_t len, bool force) {
    const wick_generate_params *p = g->p;
    if (!p->on_token || g->stop_cb) return !g->stop_cb;
    if (p->stream_every <= 1) return len ? p->on_token(g->last, text, len, p->user) : true;
    if (len > SIZE_MAX - g->n_batch || !GROW_ARRAY(g->batch, g->n_batch + len, &g->cap_batch)) return false;
    memcpy(g->batch + g->n_batch, text, len);
    g->n_batch += len;
    if (!force && ++g->n_batched < p->stream_every) return true;
    bool go_on = g->n_batch ? p->on_token(g->last, g->batch, g->n_batch, p->user) : true;
    g->n_batch = 0;
    g->n_batched = 0;
    return go_on;
}

static bool gen_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    gen_state *g = user;
    g->out[g->n_out++] = ti->id;
    g->last = ti->id;
    if (!deliver(g, text, len, false)) g->stop_cb = true;
    return !g->stop_cb;
}

static void gen_done(void *user, const wick_request_result *res) {
    gen_state *g = user;
    g->res = *res;
    if (res->error) snprintf(g->error, sizeof g->error, "%s", res->error);
    g->res.error = NULL;
    g->res.tail = NULL;
    if (res->finish != WICK_FINISH_ERROR && !g->stop_cb) deliver(g, res->tail, res->tail_len, true);
    g->done = true;
}

int wick_generate(wick_context *c, const int32_t *prompt, int n_prompt,
                  const wick_generate_params *p, int32_t **out_tokens, int *n_out,
                  wick_finish *finish, wick_timings *tm, wick_error *err) {
    wick_timings local_tm;
    if (!tm) tm = &local_tm;
    memset(tm, 0, sizeof *tm);
    if (out_tokens) *out_tokens = NULL;
    if (n_out) *n_out = 0;
    if (p->spans) { /* the prompt is the span request's segments laid out */
        n_prompt = p->spans->n_prefix + p->spans->n_suffix;
        for (int i = 0; i < p->spans->n_spans; i++) n_prompt += p->spans->span_len ? p->spans->span_len[i] : 0;
    }
    if (n_prompt > c->n_ctx)
        return wick_fail_code(err, WICK_E_TOO_LONG, "prompt is %d tokens but the context holds %d (use a larger --ctx)",
                              n_prompt, c->n_ctx);
    const int n_predict = request_clamp_predict(p->n_predict, c->n_ctx, n_prompt);
    if (p->n_predict > n_predict)
        return wick_fail_code(err, WICK_E_TOO_LONG, "-n %d is more than the %d tokens left in the context after the %d-token prompt",
                              p->n_predict, n_predict, n_prompt);
    gen_state g = {.p = p, .out = malloc(((size_t)n_predict + 1) * sizeof *g.out)};
    wick_sched *s = g.out ? wick_sched_new(c, NULL, err) : NULL;
    if (!s) {
        free(g.out);
        return g.out ? -1 : wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    wick_request r = {.prompt = prompt, .n_prompt = n_prompt, .n_predict = n_predict, .sampling = p->sampling,
                      .stop = p->stop, .n_stop = p->n_stop, .new_message = p->new_message, .logprobs = -1,
                      .spans = p->spans, .grammar = p->grammar,
                      .on_token = gen_token, .on_done = gen_done, .user = &g};
    int rc = p->spec && wick_sched_set_spec(s, p->spec, err) < 0 ? -1 : 0;
    if (rc == 0) rc = wick_sched_submit(s, &r, err) < 0 ? -1 : 0;
    while (rc == 0 && !g.done)
        if (wick_sched_step(s, err) < 0) rc = -1;
    wick_sched_free(s);
    free(g.batch);
    if (rc == 0 && g.res.finish == WICK_FINISH_ERROR) rc = wick_fail(err, "%s", g.error);
    if (rc < 0) {
        free(g.out);
        return -1;
    }
    tm->prompt_tokens = n_prompt;
    tm->prefill_tokens = n_prompt - g.res.cached_tokens;
    tm->cached_tokens = g.res.cached_tokens;
    tm->span_cached_tokens = g.res.span_cached_tokens;
    tm->prefill_ms = g.res.ttft_ms;
    tm->ttft_ms = g.res.ttft_ms;
    tm->decode_ms = g.res.decode_ms;
    tm->generated_tokens = g.n_out;
    tm->draft_tokens = g.res.draft_tokens;
    tm->accepted_tokens = g.res.accepted_tokens;
    tm->spec_passes = g.res.spec_passes;
    /* A callback that asked to stop ends the text as a stop string would. */
    if (finish) *finish = g.res.finish == WICK_FINISH_LENGTH ? WICK_FINISH_LENGTH : WICK_FINISH_STOP;
    if (n_out) *n_out = g.n_out;
    if (out_tokens)
        *out_tokens = g.out;
    else
        free(g.out);
    return 0;
}
