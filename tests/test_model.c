/* test_model.c — the real stories260K model through the library API: exact
 * greedy ids from both formats, prefill chunking and batching invariance,
 * KV prefix reuse, and the context/prompt limits. */
#include <stdlib.h>

#include "check.h"
#include "wick.h"

/* From ../shared/README.md: BOS + "Once upon a time" + 40 greedy tokens. */
static const int32_t STORY[] = {1,   403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317,
                                426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295,
                                433, 426, 385, 328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426};
#define N_PROMPT 5
#define N_GEN 40

static const char *model_path(int hf) {
    return shared_path(hf ? "models/stories260K/hf" : "models/stories260K/stories260K-f32.gguf");
}

static wick_context *new_ctx(wick_model *m, int chunk, int n_seq) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 128, .n_seq = n_seq, .n_threads = 2, .prefill_chunk = chunk};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    return c;
}

static void greedy_story(int hf) {
    const char *path = model_path(hf);
    if (!path) SKIP("stories260K not found in the shared folder");
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    if (!m) return;
    int32_t ids[64];
    int n = wick_tokenize(m, "Once upon a time", 16, true, ids, 64, &err);
    CHECK_INT(n, N_PROMPT);
    for (int i = 0; i < N_PROMPT && i < n; i++) CHECK_INT(ids[i], STORY[i]);
    int chunks[] = {-1, 0, 1, 2, 3};
    for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
        wick_context *c = new_ctx(m, chunks[k], 1);
        if (!c) break;
        wick_generate_params gp = {.n_predict = N_GEN};
        int32_t *out = NULL;
        int n_out = 0;
        wick_finish fin;
        wick_timings tm;
        int rc = wick_generate(c, STORY, N_PROMPT, &gp, &out, &n_out, &fin, &tm, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        CHECK_INT(n_out, N_GEN);
        CHECK_INT(fin, WICK_FINISH_LENGTH);
        int mismatch = -1;
        for (int i = 0; i < n_out && i < N_GEN; i++)
            if (out[i] != STORY[N_PROMPT + i] && mismatch < 0) mismatch = i;
        CHECK_MSG(mismatch < 0, "chunk %d: first mismatch at generated token %d", chunks[k], mismatch);
        /* A second run with the same prompt reuses all but the last prompt token. */
        free(out);
        rc = wick_generate(c, STORY, N_PROMPT, &gp, &out, &n_out, &fin, &tm, &err);
        CHECK(rc == 0);
        CHECK_INT(tm.prefill_tokens, 1);
        CHECK(n_out == N_GEN && out[N_GEN - 1] == STORY[N_PROMPT + N_GEN - 1]);
        free(out);
        /* The cache now holds the prompt and 39 generated tokens (the last
         * generated token is never fed back). Continuing the story with two
         * more tokens prefills exactly the 3 tokens not cached. */
        int32_t longer[N_PROMPT + N_GEN + 2];
        memcpy(longer, STORY, sizeof STORY);
        longer[N_PROMPT + N_GEN] = 261;
        longer[N_PROMPT + N_GEN + 1] = 378;
        gp.n_predict = 4;
        rc = wick_generate(c, longer, N_PROMPT + N_GEN + 2, &gp, &out, &n_out, &fin, &tm, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        CHECK_INT(tm.prefill_tokens, 3);
        CHECK_INT(n_out, 4);
        free(out);
        wick_context_free(c);
    }
    wick_model_free(m);
}

static void story_gguf(void) { greedy_story(0); }
static void story_hf(void) { greedy_story(1); }

/* Two sequences decoded in one batch give the same logits as each alone. */
static void batched_sequences(void) {
    const char *path = model_path(0);
    if (!path) SKIP("stories260K not found in the shared folder");
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    if (!m) return;
    wick_context *c = new_ctx(m, 0, 2), *solo = new_ctx(m, 0, 1);
    if (!c || !solo) return;
    /* seq 0: STORY[0..5), seq 1: STORY[0..9), in one batch. */
    int32_t tok[14], pos[14], seq[14];
    bool want[14] = {0};
    for (int i = 0; i < 5; i++) tok[i] = STORY[i], pos[i] = i, seq[i] = 0;
    for (int i = 0; i < 9; i++) tok[5 + i] = STORY[i], pos[5 + i] = i, seq[5 + i] = 1;
    want[4] = want[13] = true;
    wick_batch b = {.n = 14, .tokens = tok, .pos = pos, .seq = seq, .want_logits = want};
    CHECK_MSG(wick_decode(c, &b, &err) == 0, "%s", err.msg);
    int lens[2] = {5, 9};
    int32_t zeros[9] = {0};
    wick_model_info info;
    wick_model_get_info(m, &info);
    for (int s = 0; s < 2; s++) {
        wick_seq_truncate(solo, 0, 0);
        wick_batch bs = {.n = lens[s], .tokens = STORY, .pos = pos + 5, .seq = zeros, .want_logits = NULL};
        CHECK_MSG(wick_decode(solo, &bs, &err) == 0, "%s", err.msg);
        const float *a = wick_logits(c, s), *r = wick_logits(solo, 0);
        CHECK(a && r);
        if (!a || !r) break;
        double maxd = 0;
        for (int i = 0; i < info.n_vocab; i++) maxd = fmax(maxd, fabs(a[i] - r[i]));
        CHECK_MSG(maxd < 1e-4, "sequence %d max diff %g", s, maxd);
    }
    CHECK_INT(wick_seq_len(c, 0), 5);
    CHECK_INT(wick_seq_len(c, 1), 9);
    /* Malformed batches are errors. */
    int32_t bad_pos = 7, s0 = 0, t0 = 1;
    wick_batch bad = {.n = 1, .tokens = &t0, .pos = &bad_pos, .seq = &s0};
    CHECK(wick_decode(c, &bad, &err) < 0);
    int32_t bad_tok = 100000, p5 = 5;
    wick_batch bad2 = {.n = 1, .tokens = &bad_tok, .pos = &p5, .seq = &s0};
    CHECK(wick_decode(c, &bad2, &err) < 0);
    wick_context_free(c);
    wick_context_free(solo);
    wick_model_free(m);
}

static void limits(void) {
    const char *path = model_path(0);
    if (!path) SKIP("stories260K not found in the shared folder");
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    if (!m) return;
    wick_context_params cp = {.n_ctx = 16, .n_seq = 1, .n_threads = 1, .prefill_chunk = 4};
    wick_context *c = wick_context_new(m, &cp, &err);
    int32_t prompt[20];
    for (int i = 0; i < 20; i++) prompt[i] = STORY[i];
    wick_generate_params gp = {.n_predict = 4};
    CHECK(wick_generate(c, prompt, 20, &gp, NULL, NULL, NULL, NULL, &err) < 0);
    CHECK(strstr(err.msg, "context") != NULL);
    gp.n_predict = 12;
    CHECK(wick_generate(c, prompt, 5, &gp, NULL, NULL, NULL, NULL, &err) < 0);
    gp.n_predict = 11;
    int n_out = 0;
    CHECK_MSG(wick_generate(c, prompt, 5, &gp, NULL, &n_out, NULL, NULL, &err) == 0, "%s", err.msg);
    CHECK_INT(n_out, 11);
    gp.n_predict = -1; /* until the context is full */
    CHECK(wick_generate(c, prompt, 5, &gp, NULL, &n_out, NULL, NULL, &err) == 0);
    CHECK_INT(n_out, 11);
    wick_context_free(c);
    wick_model_free(m);
}

int main(void) {
    RUN(story_gguf);
    RUN(story_hf);
    RUN(batched_sequences);
    RUN(limits);
    return check_summary("test_model");
}
