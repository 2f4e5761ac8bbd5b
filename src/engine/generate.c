/* generate.c — wick_generate: reuse the cached prefix of sequence 0, prefill
 * the rest of the prompt in chunks, then sample token by token, streaming
 * UTF-8-complete text to the caller's callback. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "engine/context.h"
#include "text/utf8_stream.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Decode tokens [from, to) of `ids` into sequence 0 at their positions,
 * `chunk` at a time (0 = all at once); logits for the last token only. */
static int prefill(wick_context *c, const int32_t *ids, int from, int to, wick_error *err) {
    int chunk = c->prefill_chunk > 0 ? c->prefill_chunk : to - from;
    if (chunk > c->fs.max_tokens) chunk = c->fs.max_tokens;
    int32_t *pos = malloc((size_t)chunk * sizeof *pos);
    int32_t *seq = calloc((size_t)chunk, sizeof *seq);
    if (!pos || !seq) {
        free(pos);
        free(seq);
        return wick_fail(err, "out of memory");
    }
    int rc = 0;
    for (int p = from; p < to && rc == 0; p += chunk) {
        int n = to - p < chunk ? to - p : chunk;
        for (int i = 0; i < n; i++) pos[i] = p + i;
        wick_batch b = {.n = n, .tokens = ids + p, .pos = pos, .seq = seq, .want_logits = NULL};
        rc = wick_decode(c, &b, err);
    }
    free(pos);
    free(seq);
    return rc;
}

static bool is_eog(const wick_model *m, int32_t id) {
    for (int i = 0; i < m->n_eog; i++)
        if (m->eog[i] == id) return true;
    return false;
}

bool wick_token_is_eog(const wick_model *m, int32_t id) { return is_eog(m, id); }

/* Pass a token's bytes through the UTF-8 stream to the callback. */
static bool emit(const wick_model *m, utf8_stream *u, const wick_generate_params *p, int32_t id) {
    char piece[256];
    int len = tok_piece(m->tok, id, piece, sizeof piece);
    if (len < 0) len = 0;
    if (len > (int)sizeof piece) len = sizeof piece; /* pieces are short; never overflow */
    size_t n = utf8_stream_push(u, piece, (size_t)len);
    return p->on_token ? p->on_token(id, u->out, n, p->user) : true;
}

int wick_generate(wick_context *c, const int32_t *prompt, int n_prompt,
                  const wick_generate_params *p, int32_t **out_tokens, int *n_out,
                  wick_finish *finish, wick_timings *tm, wick_error *err) {
    double t0 = now_ms();
    wick_timings local_tm;
    if (!tm) tm = &local_tm;
    memset(tm, 0, sizeof *tm);
    if (out_tokens) *out_tokens = NULL;
    if (n_out) *n_out = 0;
    if (n_prompt <= 0) return wick_fail(err, "the prompt is empty (no tokens)");
    if (n_prompt > c->n_ctx)
        return wick_fail(err, "prompt is %d tokens but the context holds %d (use a larger --ctx)",
                         n_prompt, c->n_ctx);
    int room = c->n_ctx - n_prompt;
    int n_predict = p->n_predict < 0 ? room : p->n_predict;
    if (n_predict > room)
        return wick_fail(err, "-n %d is more than the %d tokens left in the context after the %d-token prompt",
                         n_predict, room, n_prompt);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= c->m->hp.n_vocab)
            return wick_fail(err, "prompt token %d out of range [0, %d)", prompt[i], c->m->hp.n_vocab);

    /* Keep the longest common prefix with what sequence 0 holds, checked
     * token by token; at least the last prompt token is recomputed so its
     * logits exist. */
    const int32_t *cached = kv_seq_tokens(&c->kv, 0);
    int keep = 0;
    while (keep < c->kv.len[0] && keep < n_prompt - 1 && cached[keep] == prompt[keep]) keep++;
    kv_truncate(&c->kv, 0, keep);

    int32_t *out = malloc(((size_t)n_predict + 1) * sizeof *out);
    if (!out) return wick_fail(err, "out of memory");
    tm->prompt_tokens = n_prompt;
    tm->prefill_tokens = n_prompt - keep;
    if (prefill(c, prompt, keep, n_prompt, err) < 0) {
        free(out);
        return -1;
    }
    double t1 = now_ms();
    tm->prefill_ms = t1 - t0;

    sampler_seed(&c->smp, p->sampling.seed);
    utf8_stream u;
    utf8_stream_init(&u);
    wick_finish why = WICK_FINISH_LENGTH;
    int n = 0, rc = 0;
    int32_t seq0 = 0;
    while (n < n_predict) {
        int32_t id = sampler_sample(&c->smp, &p->sampling, wick_logits(c, 0));
        if (n == 0) tm->ttft_ms = now_ms() - t0;
        if (is_eog(c->m, id)) {
            why = WICK_FINISH_STOP;
            break;
        }
        out[n++] = id;
        if (!emit(c->m, &u, p, id)) {
            why = WICK_FINISH_STOP;
            break;
        }
        if (n == n_predict) break; /* the last token needs no forward pass */
        int32_t pos = c->kv.len[0];
        wick_batch b = {.n = 1, .tokens = &id, .pos = &pos, .seq = &seq0, .want_logits = NULL};
        if ((rc = wick_decode(c, &b, err)) < 0) break;
    }
    size_t tail = utf8_stream_finish(&u);
    if (tail && p->on_token) p->on_token(-1, u.out, tail, p->user);
    tm->decode_ms = now_ms() - t1;
    tm->generated_tokens = n;
    if (rc < 0) {
        free(out);
        return -1;
    }
    if (finish) *finish = why;
    if (n_out) *n_out = n;
    if (out_tokens)
        *out_tokens = out;
    else
        free(out);
    return 0;
}
