/* test_ctx_shift.c — the scheduler's context shift (wick_request.ctx_shift)
 * on stories260K with a 160-token context: a request generates far past its
 * context; after a shift its output is exactly that of a fresh request whose
 * prompt is the kept tokens (first n_keep, then what follows the dropped
 * run); shifting requests run together on a KV pool too small for all of
 * them (preempted and recomputed) give the same tokens as run alone, greedy
 * and seeded sampling alike; speculation before the first shift leaves
 * greedy tokens unchanged; without the option nothing changes (n_predict
 * past the room is refused, a full context ends the request). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wick.h"

#define MAX_OUT 512
#include "sched_rec.h"

#define N_CTX 160 /* two KV blocks of 128 positions: a sequence that grows past one needs another */

static wick_context *new_ctx(wick_model *m, int n_seq, int kv_blocks) {
    wick_error err;
    wick_context_params cp = {.n_ctx = N_CTX, .n_seq = n_seq, .n_threads = 1, .prefill_chunk = 7, .kv_blocks = kv_blocks};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    return c;
}

static void submit(wick_sched *s, const int32_t *prompt, int n, int n_predict, wick_ctx_shift cs, float temp,
                   out_rec *o) {
    wick_error err;
    wick_request r = {.prompt = prompt, .n_prompt = n, .n_predict = n_predict, .logprobs = -1, .ignore_eos = true,
                      .ctx_shift = cs, .on_token = on_token, .on_done = on_done, .user = o};
    r.sampling.temperature = temp;
    r.sampling.top_k = temp > 0 ? 20 : 0;
    r.sampling.seed = 1234;
    CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
}

static void run_until_done(wick_sched *s) {
    wick_error err;
    int left, guard = 0;
    while ((left = wick_sched_step(s, &err)) > 0 && guard++ < 100000) {
    }
    CHECK_MSG(left == 0, "step: %s", left < 0 ? err.msg : "did not finish");
}

/* One request alone on a fresh one-sequence context. */
static void solo(wick_model *m, const int32_t *p, int n, int n_predict, wick_ctx_shift cs, float temp, out_rec *o) {
    memset(o, 0, sizeof *o);
    wick_context *c = new_ctx(m, 1, 0);
    wick_error err;
    wick_sched *s = wick_sched_new(c, NULL, &err);
    submit(s, p, n, n_predict, cs, temp, o);
    run_until_done(s);
    wick_sched_free(s);
    wick_context_free(c);
}

static void shift_is_exact(wick_model *m) {
    wick_error err;
    int32_t p[64];
    const char *text = "Once upon a time, there was a little dog";
    const int n = wick_tokenize(m, text, strlen(text), true, p, 64, &err);
    CHECK(n > 4);
    /* n_keep 3, n_discard 0 (half): the first shift comes when the history is N_CTX long */
    const wick_ctx_shift cs = {.on = true, .n_keep = 3};
    static out_rec a, b;
    solo(m, p, n, 400, cs, 0, &a);
    CHECK_INT(a.res.generated_tokens, 400);
    CHECK_INT(a.res.prompt_tokens, n);
    CHECK(a.res.ctx_shifts >= 3);
    CHECK(a.res.ctx_dropped >= 3 * 70);
    CHECK(n + 400 - a.res.ctx_dropped <= N_CTX); /* what the context holds at the end */
    CHECK_INT(a.res.finish, WICK_FINISH_LENGTH);
    /* the history at the first shift, cut as the scheduler cuts it */
    int32_t hist[N_CTX], kept[N_CTX];
    memcpy(hist, p, sizeof *p * (size_t)n);
    const int first = N_CTX - n;
    memcpy(hist + n, a.ids, sizeof *hist * (size_t)first);
    const int n_past = N_CTX - 1, d = (n_past - cs.n_keep) / 2;
    memcpy(kept, hist, sizeof *kept * (size_t)cs.n_keep);
    memcpy(kept + cs.n_keep, hist + cs.n_keep + d, sizeof *kept * (size_t)(N_CTX - cs.n_keep - d));
    const int n_kept = N_CTX - d;
    solo(m, kept, n_kept, 400 - first, cs, 0, &b);
    CHECK_INT(b.n, 400 - first);
    CHECK_MSG(memcmp(b.ids, a.ids + first, sizeof *b.ids * (size_t)b.n) == 0,
              "the output after a shift differs from a fresh request of the kept tokens");
    /* n_discard given: 10 tokens a shift, so many more shifts */
    const wick_ctx_shift c10 = {.on = true, .n_keep = 1, .n_discard = 10};
    solo(m, p, n, 400, c10, 0, &a);
    CHECK_INT(a.res.generated_tokens, 400);
    CHECK(a.res.ctx_shifts >= (400 - first) / 10);
    CHECK_INT(a.res.ctx_dropped, 10 * a.res.ctx_shifts);
    memcpy(kept, hist, sizeof *kept);
    memcpy(kept + 1, hist + 11, sizeof *kept * (size_t)(N_CTX - 11));
    solo(m, kept, N_CTX - 10, 400 - first, c10, 0, &b);
    CHECK_MSG(memcmp(b.ids, a.ids + first, sizeof *b.ids * (size_t)(400 - first)) == 0,
              "n_discard 10: the output after a shift differs from a fresh request of the kept tokens");
}

/* Shifting requests together, preempted on a small pool: same tokens as alone. */
static void together_equals_solo(wick_model *m) {
    wick_error err;
    enum { N = 4 };
    static int32_t p[N][N_CTX];
    int n[N];
    const char *texts[N] = {"Once upon a time", "The cat sat on the mat and looked at the", "Lily and Ben went to the park",
                            "One day, a big red ball"};
    for (int i = 0; i < N; i++) n[i] = wick_tokenize(m, texts[i], strlen(texts[i]), true, p[i], N_CTX, &err);
    const wick_ctx_shift cs[N] = {{.on = true}, {.on = true, .n_keep = 5}, {.on = true, .n_discard = 7},
                                  {.on = true, .n_keep = 2, .n_discard = 30}};
    static out_rec alone[N], all[N];
    for (int i = 0; i < N; i++) solo(m, p[i], n[i], 300 + 10 * i, cs[i], i % 2 ? 0.8f : 0, &alone[i]);
    memset(all, 0, sizeof all);
    wick_context *c = new_ctx(m, N, 3); /* 3 blocks for 4 sequences of 2 */
    wick_sched *s = wick_sched_new(c, NULL, &err);
    for (int i = 0; i < N; i++) submit(s, p[i], n[i], 300 + 10 * i, cs[i], i % 2 ? 0.8f : 0, &all[i]);
    run_until_done(s);
    int pre = 0;
    for (int i = 0; i < N; i++) {
        CHECK_INT(all[i].n, 300 + 10 * i);
        CHECK(all[i].res.ctx_shifts > 0);
        CHECK_MSG(all[i].n == alone[i].n && memcmp(all[i].ids, alone[i].ids, sizeof *all[i].ids * (size_t)all[i].n) == 0,
                  "request %d: together differs from alone", i);
        pre += all[i].res.preemptions;
    }
    CHECK_MSG(pre > 0, "expected preemptions with a 3-block pool");
    wick_sched_free(s);
    wick_context_free(c);
}

/* Speculating (self-speculation with one layer, prompt lookup) up to the
 * first shift, plain after it: greedy tokens as without speculation, drafts
 * never past the context. */
static void speculation_unchanged(wick_model *m) {
    wick_error err;
    int32_t p[N_CTX];
    const char *text = "Once upon a time, there was a little girl named Lily. She loved to play";
    const int n = wick_tokenize(m, text, strlen(text), true, p, N_CTX, &err);
    const wick_ctx_shift cs = {.on = true, .n_keep = 4};
    static out_rec plain, spec;
    solo(m, p, n, 300, cs, 0, &plain);
    const wick_spec_params sp[2] = {{.draft_layers = 2, .draft_max = 8}, {.lookup = 3, .draft_max = 16}};
    for (int k = 0; k < 2; k++) {
        memset(&spec, 0, sizeof spec);
        wick_context *c = new_ctx(m, 1, 0);
        wick_sched *s = wick_sched_new(c, NULL, &err);
        CHECK_MSG(wick_sched_set_spec(s, &sp[k], &err) == 0, "%s", err.msg);
        submit(s, p, n, 300, cs, 0, &spec);
        run_until_done(s);
        CHECK_INT(spec.n, 300);
        CHECK_MSG(memcmp(spec.ids, plain.ids, sizeof *spec.ids * 300) == 0, "speculation %d changed the output", k);
        CHECK(spec.res.draft_tokens > 0);
        wick_sched_free(s);
        wick_context_free(c);
    }
}

/* Without the option: the room is a hard limit, as before. */
static void off_changes_nothing(wick_model *m) {
    wick_error err;
    int32_t p[16];
    const int n = wick_tokenize(m, "Once upon a time", 16, true, p, 16, &err);
    wick_context *c = new_ctx(m, 1, 0);
    wick_sched *s = wick_sched_new(c, NULL, &err);
    static out_rec o;
    memset(&o, 0, sizeof o);
    wick_request r = {.prompt = p, .n_prompt = n, .n_predict = N_CTX, .on_token = on_token, .on_done = on_done,
                      .user = &o, .ignore_eos = true, .logprobs = -1};
    CHECK(wick_sched_submit(s, &r, &err) < 0); /* past the room */
    r.n_predict = -1;
    CHECK(wick_sched_submit(s, &r, &err) > 0);
    run_until_done(s);
    CHECK_INT(o.res.generated_tokens, N_CTX - n);
    CHECK_INT(o.res.ctx_shifts, 0);
    /* with the option, -1 still ends at the full context (no shift) */
    static out_rec o2;
    memset(&o2, 0, sizeof o2);
    r.user = &o2;
    r.ctx_shift = (wick_ctx_shift){.on = true};
    CHECK(wick_sched_submit(s, &r, &err) > 0);
    run_until_done(s);
    CHECK_INT(o2.res.generated_tokens, N_CTX - n);
    CHECK_MSG(memcmp(o.ids, o2.ids, sizeof *o.ids * (size_t)o.n) == 0, "the option alone changed the output");
    r.ctx_shift = (wick_ctx_shift){.on = true, .n_keep = -1};
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    wick_sched_free(s);
    wick_context_free(c);
}

static void stories(void) {
    const char *path = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!path) SKIP("stories260K not found in the shared folder");
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    if (!m) return;
    shift_is_exact(m);
    together_equals_solo(m);
    off_changes_nothing(m);
    speculation_unchanged(m);
    wick_model_free(m);
}

int main(void) {
    RUN(stories);
    return check_summary("test_ctx_shift");
}
