/* test_scheduler.c — the continuous-batching scheduler through the public
 * API: every request run concurrently (mixed prompt lengths and limits,
 * chunked prefill mixed with decode, greedy and seeded sampling) gives the
 * same tokens as run alone; a KV pool too small for everyone preempts and
 * recomputes without changing any output; cancelling frees the blocks;
 * prompt progress reports (at admission, then per prefill chunk);
 * prefix reuse across requests; stop strings and logprobs; the limits and
 * errors; the scheduler's own thread. Models: random test models of every
 * weight type and the mixture-of-experts archs (made here) and the real
 * stories260K when ../shared has it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/testmodel.h"
#include "tools/quantize.h"
#include "wick.h"

#include "sched_rec.h"

typedef struct req_spec {
    int n_prompt, n_predict;
    float temperature;
    uint64_t seed;
} req_spec;

/* Deterministic prompt of n tokens for request i (ids within the vocabulary). */
static void make_prompt(int32_t *p, int n, int i, int n_vocab) {
    uint64_t x = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
    for (int k = 0; k < n; k++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        p[k] = (int32_t)((x * 0x2545F4914F6CDD1Dull >> 33) % (uint64_t)(n_vocab - 3)) + 3;
    }
    if (i % 3 == 0 && n > 8) memset(p, 0, 0); /* some share nothing */
    if (i % 3 == 1 && n > 8)
        for (int k = 0; k < 8; k++) p[k] = 5 + k; /* some share a short prefix */
}

static wick_context *new_ctx(wick_model *m, int n_seq, int threads, int chunk, int kv_blocks, int max_batch) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 512, .n_seq = n_seq, .n_threads = threads, .prefill_chunk = chunk,
                              .kv_blocks = kv_blocks, .max_batch = max_batch};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    return c;
}

static void submit(wick_sched *s, const int32_t *prompt, const req_spec *sp, out_rec *o, int logprobs) {
    wick_error err;
    wick_request r = {.prompt = prompt, .n_prompt = sp->n_prompt, .n_predict = sp->n_predict, .logprobs = logprobs,
                      .on_token = on_token, .on_done = on_done, .user = o, .ignore_eos = true};
    r.sampling.temperature = sp->temperature;
    r.sampling.top_k = sp->temperature > 0 ? 20 : 0;
    r.sampling.seed = sp->seed;
    int64_t id = wick_sched_submit(s, &r, &err);
    CHECK_MSG(id > 0, "%s", err.msg);
}

static void run_until_done(wick_sched *s) {
    wick_error err;
    int left, guard = 0;
    while ((left = wick_sched_step(s, &err)) > 0 && guard++ < 100000) {
    }
    CHECK_MSG(left == 0, "step: %s", left < 0 ? err.msg : "did not finish");
}

#define N_REQ 12

/* Every request alone (one sequence), then all together on n_seq sequences
 * with the given pool and budget: same tokens. Returns the preemptions seen. */
static uint64_t concurrent_equals_solo(wick_model *m, const char *label, int n_seq, int kv_blocks, int max_batch,
                                       int threads) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    static int32_t prompts[N_REQ][200];
    req_spec specs[N_REQ];
    for (int i = 0; i < N_REQ; i++) {
        specs[i].n_prompt = 1 + (i * 37) % 150;
        specs[i].n_predict = 8 + (i * 13) % 60;
        specs[i].temperature = i % 4 == 3 ? 0.9f : 0.0f;
        specs[i].seed = 1000 + (uint64_t)i;
        make_prompt(prompts[i], specs[i].n_prompt, i, info.n_vocab);
    }
    static out_rec solo[N_REQ], both[N_REQ];
    memset(solo, 0, sizeof solo);
    memset(both, 0, sizeof both);
    wick_error err;
    for (int i = 0; i < N_REQ; i++) {
        wick_context *c = new_ctx(m, 1, 1, 0, 0, 0); /* whole prompt in one pass, one thread */
        wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
        if (!s) {
            wick_context_free(c);
            return 0;
        }
        submit(s, prompts[i], &specs[i], &solo[i], -1);
        run_until_done(s);
        wick_sched_free(s);
        wick_context_free(c);
    }
    wick_context *c = new_ctx(m, n_seq, threads, 16, kv_blocks, max_batch);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) {
        wick_context_free(c);
        return 0;
    }
    /* Submit in two waves so late requests join a running batch. */
    for (int i = 0; i < N_REQ / 2; i++) submit(s, prompts[i], &specs[i], &both[i], -1);
    for (int k = 0; k < 5; k++) wick_sched_step(s, &err);
    for (int i = N_REQ / 2; i < N_REQ; i++) submit(s, prompts[i], &specs[i], &both[i], -1);
    run_until_done(s);
    wick_sched_stats st;
    wick_sched_get_stats(s, &st);
    CHECK_INT(st.running, 0);
    CHECK_INT(st.waiting, 0);
    CHECK_INT(st.requests_finished, N_REQ);
    for (int i = 0; i < N_REQ; i++) {
        CHECK_MSG(both[i].done && solo[i].done, "%s: request %d not done", label, i);
        CHECK_MSG(both[i].n == specs[i].n_predict && solo[i].n == specs[i].n_predict,
                  "%s: request %d: %d / %d tokens, expected %d", label, i, both[i].n, solo[i].n, specs[i].n_predict);
        int mism = -1;
        for (int k = 0; k < both[i].n && k < solo[i].n; k++)
            if (both[i].ids[k] != solo[i].ids[k] && mism < 0) mism = k;
        CHECK_MSG(mism < 0, "%s: request %d (prompt %d, temp %.1f): first differing token at %d", label, i,
                  specs[i].n_prompt, specs[i].temperature, mism);
        CHECK_INT(both[i].res.finish, WICK_FINISH_LENGTH);
    }
    uint64_t pre = st.preemptions;
    wick_sched_free(s);
    wick_context_free(c);
    return pre;
}

static wick_model *make_model(const char *arch, const char *dtype, const char *shape, char *dir) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s-%s.gguf", dir, arch, dtype);
    wick_error err;
    /* "phi3+longrope": phi3 with LongRoPE scaling */
    const bool longrope = strcmp(arch, "phi3+longrope") == 0;
    test_model_params p = {.arch = longrope ? "phi3" : arch, .format = "gguf", .shape = shape, .dtype = dtype,
                           .rope_scaling = longrope ? "longrope" : NULL, .seed = 7, .out = path};
    CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    return m;
}

static void every_weight_type(void) {
    char dir[] = "/tmp/wick-sched-XXXXXX";
    if (!mkdtemp(dir)) return;
    const char *dtypes[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q6_k", "q8_0", "f16", "bf16", "q4_0", "f32",
                            "q4_0", "q8_0", "bf16"};
    const char *archs[] = {"llama",   "qwen2",  "qwen3",  "mistral", "qwen3",         "qwen2",    "granite",
                           "gemma2",  "gemma3", "phi3",   "phi3+longrope", "qwen3moe", "qwen2moe", "mixtral"};
    for (int i = 0; i < (int)(sizeof archs / sizeof archs[0]); i++) {
        wick_model *m = make_model(archs[i], dtypes[i], "tiny256", dir);
        if (!m) continue;
        char label[64];
        snprintf(label, sizeof label, "%s %s", archs[i], dtypes[i]);
        concurrent_equals_solo(m, label, 6, 0, 40, 2);
        wick_model_free(m);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* Other weight types (a K-quant, a 32-block type), and a llama-quantize mix
 * (Q4_K_M by wick quantize): concurrent requests equal each run alone. (Every
 * type's batch invariance is test_batch_invariance's.) */
static void more_weight_types(void) {
    char dir[] = "/tmp/wick-sched-XXXXXX";
    if (!mkdtemp(dir)) return;
    const char *dtypes[] = {"q4_k", "q5_0"};
    const char *archs[] = {"llama", "qwen2"};
    const char *shapes[] = {"tiny256", "tiny"};
    for (int i = 0; i < 2; i++) {
        wick_model *m = make_model(archs[i], dtypes[i], shapes[i], dir);
        if (!m) continue;
        char label[64];
        snprintf(label, sizeof label, "%s %s", archs[i], dtypes[i]);
        concurrent_equals_solo(m, label, 4, 0, 16, 2);
        wick_model_free(m);
    }
    char src[300], mixed[300];
    snprintf(src, sizeof src, "%s/qwen3-f32.gguf", dir);
    snprintf(mixed, sizeof mixed, "%s/qwen3-q4_k_m.gguf", dir);
    wick_model *f = make_model("qwen3", "f32", "tiny256", dir);
    wick_model_free(f);
    wick_error err;
    quantize_params qp = {.type = "Q4_K_M"};
    CHECK_MSG(model_quantize(src, mixed, &qp, NULL, &err) == 0, "%s", err.msg);
    wick_model *m = wick_model_load(mixed, NULL, &err);
    CHECK_MSG(m != NULL, "%s", m ? "" : err.msg);
    if (m) concurrent_equals_solo(m, "qwen3 Q4_K_M", 4, 0, 16, 2);
    wick_model_free(m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* A pool of 6 blocks (768 positions) for 6 sequences of up to ~220 tokens:
 * the scheduler must preempt, and nothing may change. */
static void preemption_changes_nothing(void) {
    char dir[] = "/tmp/wick-sched-XXXXXX";
    if (!mkdtemp(dir)) return;
    wick_model *m = make_model("qwen3", "q8_0", "tiny256", dir);
    if (m) {
        uint64_t pre = concurrent_equals_solo(m, "preempting", 6, 6, 64, 2);
        CHECK_MSG(pre > 0, "expected preemptions with a 6-block pool, saw none");
        /* Three threads, a different budget. */
        concurrent_equals_solo(m, "3 threads", 4, 0, 23, 3);
        wick_model_free(m);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

static void stories_text(void) {
    const char *path = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!path) SKIP("stories260K not found in the shared folder");
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s", err.msg);
    if (!m) return;
    concurrent_equals_solo(m, "stories260K", 8, 0, 0, 2);
    /* The README's story, three times at once, with a stop string in one. */
    wick_context *c = new_ctx(m, 4, 2, 3, 0, 0);
    wick_sched *s = wick_sched_new(c, NULL, &err);
    int32_t ids[16];
    int n = wick_tokenize(m, "Once upon a time", 16, true, ids, 16, &err);
    static out_rec o[3];
    memset(o, 0, sizeof o);
    const char *stop[] = {"Lily."};
    for (int i = 0; i < 3; i++) {
        wick_request r = {.prompt = ids, .n_prompt = n, .n_predict = 40, .logprobs = i == 1 ? 3 : -1,
                          .on_token = on_token, .on_done = on_done, .user = &o[i]};
        if (i == 2) r.stop = stop, r.n_stop = 1;
        CHECK(wick_sched_submit(s, &r, &err) > 0);
    }
    run_until_done(s);
    const char *story = ", there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.";
    for (int i = 0; i < 2; i++) {
        o[i].text[o[i].n_text] = 0;
        CHECK_STR(o[i].text, story);
        CHECK_INT(o[i].res.prompt_tokens, n);
        CHECK_INT(o[i].res.generated_tokens, 40);
    }
    o[2].text[o[2].n_text] = 0;
    CHECK_STR(o[2].text, ", there was a little girl named ");
    CHECK_INT(o[2].res.finish, WICK_FINISH_STOP);
    for (int k = 0; k < o[1].n; k++) {
        CHECK(o[1].logprob[k] <= 0.0f);
        CHECK_INT(o[1].top1[k], o[1].ids[k]); /* greedy: the sampled token is the most likely */
    }
    /* The same prompt again: the idle sequence's KV is reused but for the last token. */
    static out_rec again;
    memset(&again, 0, sizeof again);
    wick_request r = {.prompt = ids, .n_prompt = n, .n_predict = 4, .logprobs = -1, .on_token = on_token,
                      .on_done = on_done, .user = &again};
    CHECK(wick_sched_submit(s, &r, &err) > 0);
    run_until_done(s);
    CHECK_INT(again.res.cached_tokens, n - 1);
    wick_sched_stats st;
    wick_sched_get_stats(s, &st);
    CHECK(st.prefix_hits >= (uint64_t)(n - 1));
    wick_sched_free(s);
    wick_context_free(c);
    wick_model_free(m);
}

static void cancel_and_errors(void) {
    char dir[] = "/tmp/wick-sched-XXXXXX";
    if (!mkdtemp(dir)) return;
    wick_model *m = make_model("llama", "f32", "tiny", dir);
    if (!m) return;
    wick_error err;
    wick_context *c = new_ctx(m, 2, 2, 16, 0, 0);
    wick_sched_params sp = {.max_queue = 3};
    wick_sched *s = wick_sched_new(c, &sp, &err);
    int32_t p[600];
    for (int i = 0; i < 600; i++) p[i] = 3 + i % 50;
    static out_rec o[6];
    memset(o, 0, sizeof o);
    /* Errors at submit. */
    wick_request r = {.prompt = p, .n_prompt = 600, .n_predict = 1, .logprobs = -1, .on_done = on_done, .user = &o[0]};
    CHECK(wick_sched_submit(s, &r, &err) < 0); /* longer than the context */
    CHECK_INT(err.code, WICK_E_TOO_LONG);
    r.n_prompt = 500, r.n_predict = 100;
    CHECK(wick_sched_submit(s, &r, &err) < 0); /* more than the room left */
    CHECK_INT(err.code, WICK_E_TOO_LONG);
    r.n_prompt = 0;
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    CHECK_INT(err.code, WICK_E_INVALID);
    int32_t bad = 1 << 30;
    r.prompt = &bad, r.n_prompt = 1, r.n_predict = 1;
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    CHECK_INT(err.code, WICK_E_INVALID);
    r.prompt = p, r.n_prompt = 10, r.n_predict = 1, r.logprobs = 21;
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    /* Queue limit: 3 waiting, the fourth refused. */
    r.logprobs = -1, r.n_predict = 200, r.ignore_eos = true, r.on_token = on_token;
    int64_t ids[4];
    for (int i = 0; i < 3; i++) {
        r.user = &o[i];
        ids[i] = wick_sched_submit(s, &r, &err);
        CHECK(ids[i] > 0);
    }
    r.user = &o[3];
    CHECK(wick_sched_submit(s, &r, &err) < 0);
    CHECK(strncmp(err.msg, "queue full", 10) == 0);
    CHECK_INT(err.code, WICK_E_QUEUE_FULL);
    /* Run a few steps, cancel one running and one waiting request. */
    for (int k = 0; k < 6; k++) wick_sched_step(s, &err);
    wick_sched_stats st;
    wick_sched_get_stats(s, &st);
    CHECK_INT(st.running, 2);
    CHECK_INT(st.waiting, 1);
    wick_sched_cancel(s, ids[0]);
    wick_sched_cancel(s, ids[2]);
    wick_sched_cancel(s, 12345); /* unknown: ignored */
    wick_sched_step(s, &err);
    CHECK(o[0].done && o[2].done);
    CHECK_INT(o[0].res.finish, WICK_FINISH_CANCELLED);
    CHECK_INT(o[2].res.finish, WICK_FINISH_CANCELLED);
    /* A callback that returns false cancels too. */
    o[4].cancel_after = 3;
    r.user = &o[4];
    CHECK(wick_sched_submit(s, &r, &err) > 0);
    run_until_done(s);
    CHECK_INT(o[4].res.finish, WICK_FINISH_CANCELLED);
    CHECK_INT(o[4].n, 3);
    CHECK_INT(o[1].res.finish, WICK_FINISH_LENGTH);
    CHECK_INT(o[1].n, 200);
    wick_sched_get_stats(s, &st);
    CHECK_INT(st.running, 0);
    /* The KV left is only what idle sequences keep as prefixes. */
    CHECK_INT(st.kv_blocks_used, 0);
    CHECK(st.kv_blocks_cached > 0 && st.kv_blocks_cached <= 2 * ((210 + st.kv_block_size - 1) / st.kv_block_size));
    /* Freeing with requests in flight cancels them. */
    r.user = &o[5];
    CHECK(wick_sched_submit(s, &r, &err) > 0);
    wick_sched_free(s);
    CHECK_INT(o[5].res.finish, WICK_FINISH_CANCELLED);
    wick_context_free(c);
    wick_model_free(m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* The scheduler's own thread: requests submitted from another thread. */
typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    out_rec rec[4];
} waiter;

static waiter W = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static void on_done_signal(void *user, const wick_request_result *res) {
    on_done(user, res);
    pthread_mutex_lock(&W.mu);
    W.done++;
    pthread_cond_broadcast(&W.cv);
    pthread_mutex_unlock(&W.mu);
}

static void own_thread(void) {
    char dir[] = "/tmp/wick-sched-XXXXXX";
    if (!mkdtemp(dir)) return;
    wick_model *m = make_model("qwen2", "f16", "tiny", dir);
    if (!m) return;
    wick_error err;
    wick_context *c = new_ctx(m, 2, 2, 8, 0, 0);
    wick_sched *s = wick_sched_new(c, NULL, &err);
    CHECK(wick_sched_start(s, &err) == 0);
    CHECK(wick_sched_step(s, &err) < 0); /* not while the thread runs */
    int32_t p[20];
    for (int i = 0; i < 20; i++) p[i] = 3 + i;
    for (int i = 0; i < 4; i++) {
        wick_request r = {.prompt = p, .n_prompt = 5 + i * 5, .n_predict = 16, .logprobs = -1, .ignore_eos = true,
                          .on_token = on_token, .on_done = on_done_signal, .user = &W.rec[i]};
        CHECK(wick_sched_submit(s, &r, &err) > 0);
    }
    pthread_mutex_lock(&W.mu);
    while (W.done < 4) pthread_cond_wait(&W.cv, &W.mu);
    pthread_mutex_unlock(&W.mu);
    for (int i = 0; i < 4; i++) CHECK_INT(W.rec[i].n, 16);
    wick_sched_free(s);
    wick_context_free(c);
    wick_model_free(m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

/* on_progress: a record at admission (processed = cached), then one per
 * forward pass of prompt tokens (the chunk's size) up to the whole prompt;
 * the same prompt again starts from the cache. */
typedef struct prog_rec {
    out_rec o; /* first: on_token / on_done take the same user */
    int v[16][3];
    int n;
} prog_rec;

static void on_prog(void *user, int n_cached, int n_processed, int n_prompt) {
    prog_rec *p = user;
    if (p->n < 16) {
        p->v[p->n][0] = n_cached, p->v[p->n][1] = n_processed, p->v[p->n][2] = n_prompt;
        p->n++;
    }
    CHECK(p->o.n == 0); /* before the first token */
}

static void prompt_progress(void) {
    char dir[] = "/tmp/wick-sched-XXXXXX";
    if (!mkdtemp(dir)) return;
    wick_model *m = make_model("qwen3", "q8_0", "tiny256", dir);
    wick_context *c = m ? new_ctx(m, 1, 1, 16, 0, 0) : NULL;
    wick_error err;
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (s) {
        wick_model_info info;
        wick_model_get_info(m, &info);
        int32_t prompt[50];
        make_prompt(prompt, 50, 0, info.n_vocab);
        static prog_rec p[2];
        memset(p, 0, sizeof p);
        for (int k = 0; k < 2; k++) {
            wick_request r = {.prompt = prompt, .n_prompt = 50, .n_predict = 3, .on_token = on_token, .on_done = on_done,
                              .on_progress = on_prog, .user = &p[k], .ignore_eos = true, .logprobs = -1};
            CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
            run_until_done(s);
        }
        static const int want0[][3] = {{0, 0, 50}, {0, 16, 50}, {0, 32, 50}, {0, 48, 50}, {0, 50, 50}};
        CHECK_MSG(p[0].n == 5, "first run: %d progress records", p[0].n);
        for (int i = 0; i < p[0].n && i < 5; i++)
            CHECK_MSG(!memcmp(p[0].v[i], want0[i], sizeof want0[i]), "record %d: %d %d %d", i, p[0].v[i][0], p[0].v[i][1],
                      p[0].v[i][2]);
        /* again: everything but the last token from the cache, then that token */
        CHECK_MSG(p[1].n == 2 && p[1].v[0][0] == 49 && p[1].v[0][1] == 49 && p[1].v[1][0] == 49 && p[1].v[1][1] == 50,
                  "second run: %d records, first %d %d", p[1].n, p[1].v[0][0], p[1].v[0][1]);
        CHECK(p[0].o.n == 3 && p[1].o.n == 3);
    }
    wick_sched_free(s);
    wick_context_free(c);
    wick_model_free(m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void) {
    RUN(prompt_progress);
    RUN(cancel_and_errors);
    RUN(own_thread);
    RUN(stories_text);
    RUN(preemption_changes_nothing);
    RUN(every_weight_type);
    RUN(more_weight_types);
    return check_summary("test_scheduler");
}
