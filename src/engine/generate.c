/* generate.c — wick_generate: reuse the cached prefix of sequence 0, prefill
 * the rest of the prompt in chunks, then sample token by token, streaming
 * UTF-8-complete text to the caller's callback. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "engine/context.h"
#include "engine/stop.h"
#include "text/utf8_stream.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Decode tokens [from, to) of `ids` into sequence 0 at their positions,
 * `chunk` at a time (0 = all at once); logits for the last token only (the
 * chunks before the last compute none: no pass over the output matrix). */
static int prefill(wick_context *c, const int32_t *ids, int from, int to, wick_error *err) {
    int chunk = c->prefill_chunk > 0 ? c->prefill_chunk : to - from;
    if (chunk > c->fs.max_tokens) chunk = c->fs.max_tokens;
    int32_t *pos = malloc((size_t)chunk * sizeof *pos);
    int32_t *seq = calloc((size_t)chunk, sizeof *seq);
    bool *none = calloc((size_t)chunk, sizeof *none);
    if (!pos || !seq || !none) {
        free(pos);
        free(seq);
        free(none);
        return wick_fail(err, "out of memory");
    }
    int rc = 0;
    for (int p = from; p < to && rc == 0; p += chunk) {
        int n = to - p < chunk ? to - p : chunk;
        for (int i = 0; i < n; i++) pos[i] = p + i;
        wick_batch b = {.n = n, .tokens = ids + p, .pos = pos, .seq = seq, .want_logits = p + n < to ? none : NULL};
        rc = wick_decode(c, &b, err);
    }
    free(pos);
    free(seq);
    free(none);
    return rc;
}

static bool is_eog(const wick_model *m, int32_t id) {
    for (int i = 0; i < m->n_eog; i++)
        if (m->eog[i] == id) return true;
    return false;
}

bool wick_token_is_eog(const wick_model *m, int32_t id) { return is_eog(m, id); }

/* The text path from sampled tokens to the caller: token bytes → UTF-8
 * completion → stop-string matching → (optionally batched) callback. */
typedef struct text_out {
    const wick_model *m;
    const wick_generate_params *p;
    utf8_stream u;
    stop_matcher stop;
    char *batch; /* text held for stream_every > 1 */
    size_t n_batch, cap_batch;
    int n_batched;
    int32_t last;
    bool strip_space; /* drop one leading space of the next piece (SentencePiece, new message) */
} text_out;

static bool deliver(text_out *o, const char *text, size_t len, bool force) {
    const wick_generate_params *p = o->p;
    if (!p->on_token) return true;
    if (p->stream_every <= 1) return len ? p->on_token(o->last, text, len, p->user) : true;
    if (o->n_batch + len > o->cap_batch) {
        size_t cap = (o->cap_batch + len) * 2;
        char *b = realloc(o->batch, cap);
        if (!b) return false;
        o->batch = b;
        o->cap_batch = cap;
    }
    memcpy(o->batch + o->n_batch, text, len);
    o->n_batch += len;
    if (!force && ++o->n_batched < p->stream_every) return true;
    bool go_on = o->n_batch ? p->on_token(o->last, o->batch, o->n_batch, p->user) : true;
    o->n_batch = 0;
    o->n_batched = 0;
    return go_on;
}

/* Emit token `id`. Returns false when generation must end: a stop string
 * matched (*stopped = true) or the callback asked to stop. */
static bool emit(text_out *o, int32_t id, bool *stopped) {
    char piece[256];
    int len = tok_piece(o->m->tok, id, piece, sizeof piece);
    if (len < 0) len = 0;
    if (len > (int)sizeof piece) len = sizeof piece; /* pieces are short; never overflow */
    o->last = id;
    const char *bytes = piece;
    if (o->strip_space && len > 0) {
        if (piece[0] == ' ') bytes++, len--;
        o->strip_space = false;
    }
    size_t n = utf8_stream_push(&o->u, bytes, (size_t)len);
    const char *text;
    size_t n_text;
    *stopped = stop_feed(&o->stop, o->u.out, n, &text, &n_text);
    bool go_on = deliver(o, text, n_text, *stopped);
    return go_on && !*stopped;
}

/* End of generation by length or EOS: release held bytes. */
static void finish_text(text_out *o) {
    size_t n = utf8_stream_finish(&o->u);
    const char *text;
    size_t n_text;
    if (n && stop_feed(&o->stop, o->u.out, n, &text, &n_text)) {
        deliver(o, text, n_text, true);
        return;
    }
    if (n) deliver(o, text, n_text, false);
    n_text = stop_flush(&o->stop, &text);
    deliver(o, text, n_text, true);
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
    text_out o = {.m = c->m, .p = p, .strip_space = p->new_message && tok_get_kind(c->m->tok) == TOK_KIND_SPM};
    utf8_stream_init(&o.u);
    if (stop_init(&o.stop, p->stop, p->n_stop, sizeof o.u.out, err) < 0) {
        free(out);
        return -1;
    }
    wick_finish why = WICK_FINISH_LENGTH;
    int n = 0, rc = 0;
    int32_t seq0 = 0;
    bool stopped = false, ended = false;
    while (n < n_predict) {
        /* Every sampled token is decoded before the next draw, so the cache
         * holds the whole history the penalties look at. */
        const double ts = c->fs.prof ? now_ms() : 0; /* WICK_PROFILE: sampling time */
        int32_t id = sampler_sample(&c->smp, &p->sampling, wick_logits(c, 0), kv_seq_tokens(&c->kv, 0),
                                    c->kv.len[0]);
        if (c->fs.prof) c->prof.ms[WICK_OP_SAMPLING] += now_ms() - ts;
        if (n == 0) tm->ttft_ms = now_ms() - t0;
        if (is_eog(c->m, id)) {
            why = WICK_FINISH_STOP;
            break;
        }
        out[n++] = id;
        if (!emit(&o, id, &stopped)) {
            why = WICK_FINISH_STOP;
            ended = true;
            break;
        }
        if (n == n_predict) break; /* the last token needs no forward pass */
        int32_t pos = c->kv.len[0];
        wick_batch b = {.n = 1, .tokens = &id, .pos = &pos, .seq = &seq0, .want_logits = NULL};
        if ((rc = wick_decode(c, &b, err)) < 0) break;
    }
    if (!ended) finish_text(&o);
    stop_free(&o.stop);
    free(o.batch);
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
