/* test_spec_decode.c — speculative decoding through the scheduler: greedy
 * output with every drafter is byte-identical to plain greedy decoding, and
 * the KV bookkeeping stays exact.
 *
 *   - random test models of every arch and weight type class (f32, f16,
 *     bf16, q8_0, q4_0, q6_k): greedy tokens, text,
 *     logprobs and finish reason with a draft model (another random model:
 *     mostly rejected drafts), the target itself as its draft (every draft
 *     accepted, runs up to draft_max), layer skipping and prompt lookup
 *     equal plain decoding's; also with stop strings, end-of-generation
 *     tokens and short n_predict limits (the first token that ends a request
 *     ends it, the drafts after it are dropped);
 *   - after every step: the KV pool's and prefix cache's invariants
 *     (kv_check), and every sequence holds exactly a prefix of its
 *     request's prompt + emitted tokens (no rejected draft left behind);
 *     at the end no block is held;
 *   - several requests at once on a small KV pool (preemption), each with
 *     its own method (off, draft model, layers, lookup, seeded sampling with
 *     a drafter): the greedy ones equal their solo plain runs;
 *   - stories260K (../shared): the reference story with each drafter;
 *     aidreams260K as a draft model is refused (different vocabulary);
 *   - errors: draft layers out of range, draft max out of range, a request
 *     asking for a drafter the scheduler lacks. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engine/context.h"
#include "kv/kv_check.h"
#include "cli/testmodel.h"
#include "wick.h"

#define MAX_OUT 200 /* tokens kept per request (sched_rec.h) */
#include "sched_rec.h"

/* Every sequence holds a prefix of the prompt + emitted tokens of the
 * request whose prompt it starts with (prompts start with distinct tokens). */
static void check_seqs(wick_context *c, out_rec *const *recs, int n_recs) {
    const kv_cache *kv = &c->kv;
    for (int s = 0; s < c->n_seq; s++) {
        const int len = kv_seq_len(kv, s);
        const int32_t *held = kv_seq_tokens(kv, s);
        if (len == 0) continue;
        for (int r = 0; r < n_recs; r++) {
            const out_rec *o = recs[r];
            if (held[0] != o->prompt[0]) continue;
            CHECK_MSG(len <= o->n_prompt + o->n, "sequence %d holds %d tokens, its request has %d", s, len,
                      o->n_prompt + o->n);
            bool same = true;
            for (int i = 0; i < len && i < o->n_prompt + o->n; i++)
                same &= held[i] == (i < o->n_prompt ? o->prompt[i] : o->ids[i - o->n_prompt]);
            CHECK_MSG(same, "sequence %d holds tokens its request never had", s);
        }
    }
}

static void run_checked_spec(wick_sched *s, out_rec *const *recs, int n_recs) {
    wick_error err;
    char msg[256];
    int left, guard = 0;
    wick_context *c = wick_sched_context(s);
    while ((left = wick_sched_step(s, &err)) > 0 && guard++ < 100000) {
        if (kv_check(&c->kv.pool, &c->kv.tab, msg, sizeof msg) < 0) {
            CHECK_MSG(false, "invariant: %s", msg);
            return;
        }
        check_seqs(c, recs, n_recs);
    }
    CHECK_MSG(left == 0, "step: %s", left < 0 ? err.msg : "did not finish");
    CHECK_MSG(kv_check(&c->kv.pool, &c->kv.tab, msg, sizeof msg) == 0, "invariant at rest: %s", msg);
    check_seqs(c, recs, n_recs);
    CHECK_INT(kv_blocks_used(&c->kv), 0);
}

typedef struct gen_opts {
    const wick_spec_params *spec; /* NULL = plain */
    int n_predict;
    const char *stop;
    bool ignore_eos;
    wick_sampling sampling;
    int n_seq, kv_blocks;
} gen_opts;

/* One request alone on a fresh context and scheduler. */
static void gen(wick_model *m, const int32_t *prompt, int n_prompt, const gen_opts *g, out_rec *o) {
    memset(o, 0, sizeof *o);
    o->prompt = prompt;
    o->n_prompt = n_prompt;
    wick_error err;
    wick_context_params cp = {.n_ctx = 320, .n_seq = 1, .n_threads = 2, .prefill_chunk = 64};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    if (!c) return;
    wick_sched *s = wick_sched_new(c, NULL, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (g->spec) CHECK_MSG(wick_sched_set_spec(s, g->spec, &err) == 0, "%s", err.msg);
    const char *stops[1] = {g->stop};
    wick_request r = {.prompt = prompt, .n_prompt = n_prompt, .n_predict = g->n_predict, .sampling = g->sampling,
                      .stop = stops, .n_stop = g->stop ? 1 : 0, .ignore_eos = g->ignore_eos, .logprobs = 0,
                      .on_token = on_token, .on_done = on_done, .user = o};
    CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
    out_rec *recs[1] = {o};
    run_checked_spec(s, recs, 1);
    wick_sched_free(s);
    wick_context_free(c);
}

static void same_output(const out_rec *a, const out_rec *b, const char *label) {
    int d = 0;
    while (d < a->n && d < b->n && a->ids[d] == b->ids[d]) d++;
    CHECK_MSG(a->n == b->n && d == a->n, "%s: %d tokens vs %d of plain decoding, first difference at %d", label,
              b->n, a->n, d);
    CHECK_MSG(a->n_text == b->n_text && memcmp(a->text, b->text, a->n_text) == 0, "%s: text differs", label);
    CHECK_MSG(memcmp(a->logprob, b->logprob, sizeof(float) * (size_t)(d < a->n ? d : a->n)) == 0,
              "%s: logprobs differ", label);
    CHECK_MSG(a->res.finish == b->res.finish, "%s: finish %d vs %d", label, (int)b->res.finish, (int)a->res.finish);
    CHECK_MSG(b->res.accepted_tokens <= b->res.draft_tokens, "%s: %d accepted of %d drafted", label,
              b->res.accepted_tokens, b->res.draft_tokens);
    /* the accepted drafts were emitted (one may have been the end-of-generation token that ended it) */
    CHECK_MSG(b->res.accepted_tokens <= b->n + 1, "%s: %d accepted but %d emitted", label, b->res.accepted_tokens,
              b->n);
}

static char tmpdir[64];

static wick_model *make_model(const char *arch, const char *dtype, const char *shape, uint64_t seed) {
    char path[160];
    snprintf(path, sizeof path, "%s/%s-%s-%llu.gguf", tmpdir, arch, dtype, (unsigned long long)seed);
    wick_error err;
    test_model_params p = {.arch = arch, .format = "gguf", .shape = shape, .dtype = dtype, .seed = seed, .out = path};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", path, err.msg);
    unlink(path);
    return m;
}

/* A prompt of n tokens whose second half repeats its first (lookup finds matches). */
static void make_prompt(int32_t *p, int n, int salt, int n_vocab) {
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(salt + 1);
    for (int k = 0; k < n; k++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        p[k] = k >= n / 2 ? p[k - n / 2] : (int32_t)((x * 0x2545F4914F6CDD1Dull >> 33) % (uint64_t)(n_vocab - 3)) + 3;
    }
    p[0] = 3 + salt % (n_vocab - 3); /* distinct first tokens per request */
}

/* Every drafter on model m (draft: another model of the same vocabulary). */
static void drafters_equal_plain(wick_model *m, wick_model *other, const char *label, bool all_variants) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    int32_t prompt[40];
    make_prompt(prompt, 40, 1, info.n_vocab);
    const int half = info.n_layer / 2 > 0 ? info.n_layer / 2 : 1;
    const wick_spec_params specs[] = {
        {.draft_model = other, .draft_max = 5},
        {.draft_model = m, .draft_max = 8},
        {.draft_layers = half},
        {.draft_layers = info.n_layer - 1, .draft_max = 3},
        {.lookup = 3},
        {.lookup = 1, .draft_max = 32},
    };
    static const char *const NAMES[] = {"draft model", "self as draft", "layers n/2", "layers n-1", "lookup 3",
                                        "lookup 1 max 32"};
    out_rec plain, spec;
    char what[160];
    /* ignoring EOG for a long run; then stopping at EOG / a stop string / short limits */
    for (int variant = 0; variant < 4; variant++) {
        if (!all_variants && (variant == 1 || variant == 3)) continue;
        gen_opts g = {.n_predict = variant == 0 ? 90 : variant == 3 ? 2 : 40, .ignore_eos = variant == 0};
        gen(m, prompt, 40, &g, &plain);
        if (variant == 2 && plain.n > 12) { /* a stop string from the middle of the plain text */
            static char stop[32];
            const size_t at = plain.n_text / 2, len = plain.n_text - at < 4 ? plain.n_text - at : 4;
            memcpy(stop, plain.text + at, len);
            stop[len] = 0;
            g.stop = stop;
            gen(m, prompt, 40, &g, &plain);
        }
        for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
            if (specs[k].draft_layers >= info.n_layer || (specs[k].draft_layers == 0 && k == 2 && info.n_layer < 2))
                continue;
            g.spec = &specs[k];
            gen(m, prompt, 40, &g, &spec);
            snprintf(what, sizeof what, "%s, %s, variant %d", label, NAMES[k], variant);
            same_output(&plain, &spec, what);
            if (k == 1 && variant == 0)
                CHECK_MSG(spec.res.accepted_tokens == spec.res.draft_tokens && spec.res.draft_tokens > 0,
                          "%s: self-drafting accepted %d of %d", what, spec.res.accepted_tokens,
                          spec.res.draft_tokens);
            g.spec = NULL;
        }
    }
}

static void test_random_models(void) {
    static const char *const ARCHS[] = {"llama", "mistral", "qwen2", "qwen3", "granite", "gemma2",
                                        "gemma3", "phi3", "qwen2moe", "qwen3moe", "mixtral"};
    static const char *const DTYPES[] = {"f32", "q8_0", "f16", "bf16", "q4_0", "q6_k"};
    for (size_t a = 0; a < sizeof ARCHS / sizeof ARCHS[0]; a++)
        for (size_t d = 0; d < 6; d++) {
            const char *shape = d == 5 ? "tiny256" : "tiny";
            wick_model *m = make_model(ARCHS[a], DTYPES[d], shape, 21 + a);
            wick_model *other = make_model(ARCHS[a], DTYPES[d], shape, 77 + a);
            char label[64];
            snprintf(label, sizeof label, "%s %s", ARCHS[a], DTYPES[d]);
            /* every variant on llama and on F32/Q8_0, the long run and a stop string on the rest */
            if (m && other) drafters_equal_plain(m, other, label, a == 0 || d < 2);
            wick_model_free(other);
            wick_model_free(m);
        }
}

/* Several requests at once on a pool too small for all: preemption, mixed methods. */
static void test_concurrent(void) {
    wick_model *m = make_model("llama", "q8_0", "tiny", 5), *other = make_model("llama", "q8_0", "tiny", 6);
    if (!m || !other) return;
    wick_model_info info;
    wick_model_get_info(m, &info);
    enum { N = 8 };
    static int32_t prompts[N][160];
    int n_prompt[N];
    out_rec solo[N], conc[N];
    static const wick_spec_method METHOD[N] = {WICK_SPEC_OFF,    WICK_SPEC_DRAFT,  WICK_SPEC_LAYERS, WICK_SPEC_LOOKUP,
                                               WICK_SPEC_LOOKUP, WICK_SPEC_DRAFT, WICK_SPEC_DEFAULT, WICK_SPEC_LAYERS};
    for (int i = 0; i < N; i++) {
        n_prompt[i] = 20 + (i * 37) % 130;
        make_prompt(prompts[i], n_prompt[i], i, info.n_vocab);
        gen_opts g = {.n_predict = 30 + (i * 13) % 60, .ignore_eos = true};
        gen(m, prompts[i], n_prompt[i], &g, &solo[i]);
    }
    wick_error err;
    wick_context_params cp = {.n_ctx = 320, .n_seq = 4, .n_threads = 2, .prefill_chunk = 48, .kv_blocks = 5};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    wick_sched *s = wick_sched_new(c, NULL, &err);
    wick_spec_params sp = {.draft_model = other, .draft_layers = 1, .lookup = 2, .draft_max = 6,
                           .default_method = WICK_SPEC_LOOKUP};
    CHECK_MSG(wick_sched_set_spec(s, &sp, &err) == 0, "%s", err.msg);
    out_rec *recs[N];
    for (int i = 0; i < N; i++) {
        memset(&conc[i], 0, sizeof conc[i]);
        conc[i].prompt = prompts[i];
        conc[i].n_prompt = n_prompt[i];
        recs[i] = &conc[i];
        wick_request r = {.prompt = prompts[i], .n_prompt = n_prompt[i], .n_predict = 30 + (i * 13) % 60,
                          .ignore_eos = true, .logprobs = 0, .on_token = on_token, .on_done = on_done,
                          .user = &conc[i], .spec = {.method = METHOD[i]}};
        if (i == 4) r.sampling = (wick_sampling){.temperature = 0.8f, .top_k = 20, .seed = 3};
        if (i == 5) r.sampling = (wick_sampling){.temperature = 1.0f, .top_p = 0.9f, .seed = 4};
        CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
    }
    run_checked_spec(s, recs, N);
    wick_sched_stats st;
    wick_sched_get_stats(s, &st);
    CHECK(st.preemptions > 0);
    CHECK(st.spec_draft_tokens > 0 && st.spec_accepted_tokens <= st.spec_draft_tokens);
    uint64_t drafted = 0, accepted = 0;
    for (int i = 0; i < N; i++) {
        char what[64];
        snprintf(what, sizeof what, "concurrent request %d", i);
        CHECK(conc[i].done);
        drafted += (uint64_t)conc[i].res.draft_tokens;
        accepted += (uint64_t)conc[i].res.accepted_tokens;
        if (i == 4 || i == 5) {
            CHECK_INT(conc[i].n, 30 + (i * 13) % 60);
            continue;
        }
        same_output(&solo[i], &conc[i], what);
    }
    CHECK_INT(drafted, st.spec_draft_tokens);
    CHECK_INT(accepted, st.spec_accepted_tokens);
    wick_sched_free(s);
    wick_context_free(c);
    wick_model_free(other);
    wick_model_free(m);
}

static void test_stories(void) {
    const char *path = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!path) SKIP("../shared/models/stories260K not found");
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    if (!m) return;
    static const int32_t prompt[] = {1, 403, 407, 261, 378};
    static const int32_t expect[40] = {432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396,
                                       267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385,
                                       328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426};
    const wick_spec_params specs[] = {{.draft_model = m}, {.draft_layers = 1}, {.draft_layers = 2},
                                      {.draft_layers = 3}, {.draft_layers = 4}, {.lookup = 3}, {.lookup = 2}};
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++) {
        out_rec o;
        gen_opts g = {.n_predict = 40, .spec = &specs[k]};
        gen(m, prompt, 5, &g, &o);
        CHECK_MSG(o.n == 40 && memcmp(o.ids, expect, sizeof expect) == 0, "stories260K, drafter %zu: other tokens",
                  k);
    }
    const char *other = shared_path("models/aidreams260K/aidreams260K-f32.gguf");
    if (other) {
        wick_model *a = wick_model_load(other, NULL, &err);
        CHECK_MSG(a != NULL, "%s", err.msg);
        wick_context_params cp = {.n_ctx = 64};
        wick_context *c = wick_context_new(m, &cp, &err);
        wick_sched *s = wick_sched_new(c, NULL, &err);
        wick_spec_params sp = {.draft_model = a};
        CHECK(wick_sched_set_spec(s, &sp, &err) < 0);
        CHECK_MSG(strstr(err.msg, "vocabular") != NULL, "%s", err.msg);
        wick_sched_free(s);
        wick_context_free(c);
        wick_model_free(a);
    } else {
        SKIP_PART("a draft model of another vocabulary: models/aidreams260K not found in the shared folder");
    }
    wick_model_free(m);
}

static void test_errors(void) {
    wick_model *m = make_model("llama", "f32", "tiny", 9);
    if (!m) return;
    wick_model_info info;
    wick_model_get_info(m, &info);
    wick_error err;
    wick_context_params cp = {.n_ctx = 64};
    wick_context *c = wick_context_new(m, &cp, &err);
    wick_sched *s = wick_sched_new(c, NULL, &err);
    wick_spec_params bad[] = {{.draft_layers = info.n_layer}, {.draft_layers = -1}, {.lookup = 3, .draft_max = 33},
                              {.lookup = -2}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK(wick_sched_set_spec(s, &bad[i], &err) < 0);
    int32_t prompt[4] = {1, 5, 6, 7};
    out_rec o = {0};
    wick_request r = {.prompt = prompt, .n_prompt = 4, .n_predict = 4, .on_done = on_done, .user = &o,
                      .spec = {.method = WICK_SPEC_DRAFT}};
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    CHECK_MSG(strstr(err.msg, "draft model") != NULL, "%s", err.msg);
    r.spec = (wick_spec_request){.method = WICK_SPEC_LOOKUP, .draft_max = 40};
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    wick_sched_free(s);
    wick_context_free(c);
    wick_model_free(m);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-spec-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_errors);
    RUN(test_stories);
    RUN(test_concurrent);
    RUN(test_random_models);
    rmdir(tmpdir);
    return check_summary("test_spec_decode");
}
