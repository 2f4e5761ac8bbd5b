/* test_spans.c — span requests (engine/spans.c) through the scheduler.
 *
 * - The semantics against an independent oracle: with F32 KV, one span
 *   anchored on the prefix at sequential positions is an ordinary prefill of
 *   P ++ S ++ Q, so its logits equal an ordinary request's bit for bit (the
 *   same for an empty prefix with no anchor); blend K >= every span's length
 *   equals the ordinary prefill of P ++ S1..SN ++ Q with several spans.
 * - Every anchor × positions × blend: the span cache cold, warm, off, partly
 *   evicted and restored from disk give the same logits (hashed) and greedy
 *   tokens; warm runs report their span tokens as cached.
 * - Shared positions: every order of the spans gives the same bits.
 * - Span and ordinary requests running together equal each run alone.
 * - Bad span requests are refused at submit with a clear message.
 * The pool's and the cache's invariants hold after every step, and every
 * block is free or cached once the requests end. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sched_check.h"
#include "engine/context.h"
#include "kv/kv_cache.h"
#include "cli/testmodel.h"
#include "wick.h"

#define MAX_OUT 8
#define MAX_SPANS 4
#define MAX_SPAN 300

typedef struct out_rec {
    int32_t ids[MAX_OUT];
    uint64_t hash[MAX_OUT]; /* of each token's logits */
    int n, n_logits;
    bool done;
    wick_request_result res;
} out_rec;

typedef struct sreq {
    int32_t prefix[200], suffix[40], spans[MAX_SPANS][MAX_SPAN];
    int np, nq, sl[MAX_SPANS], ns;
    wick_span_anchor anchor;
    wick_span_positions positions;
    int blend, n_predict;
    const char *salt;
} sreq;

static uint64_t hash_bytes(const void *p, size_t n) {
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static bool on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    (void)text, (void)len;
    out_rec *o = user;
    if (o->n < MAX_OUT) o->ids[o->n++] = ti->id;
    return true;
}

static void on_logits(void *user, const float *logits, int n_vocab) {
    out_rec *o = user;
    if (o->n_logits < MAX_OUT) o->hash[o->n_logits++] = hash_bytes(logits, sizeof *logits * (size_t)n_vocab);
}

static void on_done(void *user, const wick_request_result *res) {
    out_rec *o = user;
    o->res = *res;
    o->res.error = NULL;
    o->res.tail = NULL;
    o->done = true;
}

static wick_context *new_ctx(wick_model *m, int n_seq, int kv_type, bool no_span, const char *dir) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 1024, .n_seq = n_seq, .n_threads = 2, .prefill_chunk = 48,
                              .kv_type = kv_type, .no_span_cache = no_span, .cache_dir = dir};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    return c;
}

/* Submit q (a span request, or with as_prompt its segments as one ordinary prompt). */
static int64_t submit(wick_sched *s, const sreq *q, bool as_prompt, out_rec *o, wick_error *err) {
    memset(o, 0, sizeof *o);
    const int32_t *sp[MAX_SPANS];
    for (int k = 0; k < q->ns; k++) sp[k] = q->spans[k];
    wick_spans spans = {.prefix = q->prefix, .n_prefix = q->np, .spans = sp, .span_len = q->sl, .n_spans = q->ns,
                        .suffix = q->suffix, .n_suffix = q->nq, .anchor = q->anchor, .positions = q->positions,
                        .blend_first_k = q->blend};
    static int32_t flat[200 + MAX_SPANS * MAX_SPAN + 40];
    int n = 0;
    memcpy(flat, q->prefix, sizeof *flat * (size_t)q->np), n += q->np;
    for (int k = 0; k < q->ns; k++) memcpy(flat + n, q->spans[k], sizeof *flat * (size_t)q->sl[k]), n += q->sl[k];
    memcpy(flat + n, q->suffix, sizeof *flat * (size_t)q->nq), n += q->nq;
    wick_request r = {.prompt = flat, .n_prompt = n, .n_predict = q->n_predict, .logprobs = -1,
                      .on_token = on_token, .on_logits = on_logits, .on_done = on_done, .user = o,
                      .ignore_eos = true, .cache_salt = q->salt, .spans = as_prompt ? NULL : &spans};
    return wick_sched_submit(s, &r, err);
}

/* Step until idle, checking the invariants after every step. */
static void run(wick_sched *s) { run_checked(s, 100000); }

static void run_one(wick_sched *s, const sreq *q, bool as_prompt, out_rec *o) {
    wick_error err;
    int64_t id = submit(s, q, as_prompt, o, &err);
    CHECK_MSG(id > 0, "%s", err.msg);
    if (id > 0) run(s);
    CHECK(o->done && o->res.finish == WICK_FINISH_LENGTH);
}

static bool same(const out_rec *a, const out_rec *b) {
    return a->done && b->done && a->n == b->n && a->n_logits == b->n_logits && a->n > 0 &&
           memcmp(a->ids, b->ids, sizeof a->ids[0] * (size_t)a->n) == 0 &&
           memcmp(a->hash, b->hash, sizeof a->hash[0] * (size_t)a->n_logits) == 0;
}

static void fill(int32_t *p, int n, uint64_t seed, int n_vocab) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int k = 0; k < n; k++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        p[k] = (int32_t)((x * 0x2545F4914F6CDD1Dull >> 33) % (uint64_t)(n_vocab - 3)) + 3;
    }
}

/* A request with prefix np, spans of the given lengths, suffix nq. */
static void make(sreq *q, int np, const int *lens, int ns, int nq, uint64_t seed, int V) {
    memset(q, 0, sizeof *q);
    q->np = np, q->nq = nq, q->ns = ns, q->n_predict = 4;
    fill(q->prefix, np, seed, V);
    fill(q->suffix, nq, seed + 1, V);
    for (int k = 0; k < ns; k++) {
        q->sl[k] = lens[k];
        fill(q->spans[k], lens[k], seed + 10 + (uint64_t)k, V);
    }
}

static int placed_tokens(const sreq *q) {
    int n = 0;
    for (int k = 0; k < q->ns; k++) n += q->sl[k] > q->blend ? q->sl[k] - q->blend : 0;
    return n;
}

/* The oracle: span requests that are ordinary prefills by definition. */
/* windowed: every layer of the model slides (phi3's 32-token test window over
 * its 2 layers), so the suffix cannot tell isolated spans from full attention. */
static void oracle(wick_model *m, const char *label, int V, bool windowed) {
    wick_error err;
    wick_context *c = new_ctx(m, 2, 0, false, NULL);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) {
        wick_context_free(c);
        return;
    }
    static sreq q;
    static out_rec a, b;
    const int one[] = {150}, three[] = {150, 40, 77};
    for (int blend = 0; blend <= 200; blend += 100) {
        make(&q, 30, one, 1, 9, 5, V);
        q.blend = blend;
        run_one(s, &q, false, &a);
        run_one(s, &q, true, &b);
        CHECK_MSG(same(&a, &b), "%s: one span anchored on the prefix (blend %d) differs from the ordinary prompt", label,
                  blend);
        run_one(s, &q, false, &a); /* warm */
        CHECK_MSG(same(&a, &b), "%s: warm, blend %d", label, blend);
    }
    make(&q, 0, one, 1, 9, 6, V);
    q.anchor = WICK_ANCHOR_NONE;
    run_one(s, &q, false, &a);
    run_one(s, &q, true, &b);
    CHECK_MSG(same(&a, &b), "%s: one span, no prefix, no anchor differs from the ordinary prompt", label);
    make(&q, 20, three, 3, 7, 7, V);
    q.blend = 150;
    run_one(s, &q, false, &a);
    run_one(s, &q, true, &b);
    CHECK_MSG(same(&a, &b), "%s: blend >= every span differs from the ordinary prompt", label);
    CHECK_INT(a.res.span_cached_tokens, 0);
    /* and a real difference: two spans do not see each other */
    q.blend = 0;
    run_one(s, &q, false, &a);
    CHECK_MSG(windowed || !same(&a, &b), "%s: isolated spans gave the same logits as full attention", label);
    wick_sched_free(s);
    wick_context_free(c);
}

/* Cold, warm, off, partly evicted, restored from disk: the same bits. */
static void modes(wick_model *m, const char *label, int V, int kv_type, const char *dir) {
    wick_error err;
    wick_context *on = new_ctx(m, 2, kv_type, false, dir), *off = new_ctx(m, 2, kv_type, true, NULL);
    wick_sched *s_on = on ? wick_sched_new(on, NULL, &err) : NULL, *s_off = off ? wick_sched_new(off, NULL, &err) : NULL;
    if (!s_on || !s_off) goto out;
    static sreq q;
    static out_rec ref, got;
    const int lens[] = {140, 33, 260};
    const wick_span_anchor anchors[] = {WICK_ANCHOR_PREFIX, WICK_ANCHOR_BOS, WICK_ANCHOR_NONE, WICK_ANCHOR_IDS};
    for (int ai = 0; ai < 4; ai++)
        for (int pos = 0; pos < 2; pos++)
            for (int blend = 0; blend <= 6; blend += 6) {
                make(&q, 25 + ai, lens, 3, 11, 100 + (uint64_t)(ai * 4 + pos * 2 + blend), V);
                q.anchor = anchors[ai];
                q.positions = pos ? WICK_POSITIONS_SHARED : WICK_POSITIONS_SEQUENTIAL;
                q.blend = blend;
                char what[200];
                snprintf(what, sizeof what, "%s, anchor %d, %s, blend %d", label, ai, pos ? "shared" : "sequential",
                         blend);
                run_one(s_off, &q, false, &ref);
                CHECK_MSG(ref.res.span_cached_tokens == 0, "%s: cache off reused spans", what);
                run_one(s_on, &q, false, &got);
                CHECK_MSG(same(&got, &ref), "%s: cold differs from cache off", what);
                run_one(s_on, &q, false, &got);
                CHECK_MSG(same(&got, &ref), "%s: warm differs from cache off", what);
                CHECK_MSG(got.res.span_cached_tokens == placed_tokens(&q), "%s: warm reused %d span tokens, expected %d",
                          what, got.res.span_cached_tokens, placed_tokens(&q));
                /* partly evicted: the least recently used cached blocks go */
                for (int e = 0; e < 3; e++) {
                    const int32_t b = bpool_evict_one(&on->kv.pool);
                    if (b >= 0) bpool_give_back(&on->kv.pool, b);
                }
                run_one(s_on, &q, false, &got);
                CHECK_MSG(same(&got, &ref), "%s: partly evicted differs from cache off", what);
                /* another order: with shared positions, the same bits */
                static sreq r;
                r = q;
                for (int k = 0; k < 3; k++) {
                    memcpy(r.spans[k], q.spans[2 - k], sizeof q.spans[0]);
                    r.sl[k] = q.sl[2 - k];
                }
                run_one(s_on, &r, false, &got);
                if (pos) CHECK_MSG(same(&got, &ref), "%s: another order of the spans differs", what);
                if (!pos) CHECK_MSG(got.res.span_cached_tokens == placed_tokens(&q), "%s: reordered spans missed", what);
            }
    if (dir) {
        /* a new context over the same folder finds the spans there */
        make(&q, 25, lens, 3, 11, 100, V);
        run_one(s_off, &q, false, &ref);
        wick_sched_free(s_on);
        wick_context_free(on);
        on = new_ctx(m, 2, kv_type, false, dir);
        s_on = on ? wick_sched_new(on, NULL, &err) : NULL;
        if (s_on) {
            run_one(s_on, &q, false, &got);
            CHECK_MSG(same(&got, &ref), "%s: restored from disk differs from cache off", label);
            CHECK_MSG(got.res.span_cached_tokens == placed_tokens(&q), "%s: restored %d span tokens, expected %d", label,
                      got.res.span_cached_tokens, placed_tokens(&q));
        }
    }
out:
    wick_sched_free(s_on);
    wick_sched_free(s_off);
    wick_context_free(on);
    wick_context_free(off);
}

/* Span and ordinary requests at once equal each alone; with kv_blocks, in a
 * pool too small for all of them (preemption, spans waiting for blocks). */
static void together(wick_model *m, const char *label, int V, int kv_blocks) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 1024, .n_seq = 3, .n_threads = 2, .prefill_chunk = 48, .kv_type = 1,
                              .kv_blocks = kv_blocks};
    wick_context *c = wick_context_new(m, &cp, &err), *solo = new_ctx(m, 1, 1, true, NULL);
    CHECK_MSG(c != NULL, "%s", err.msg);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL, *s1 = solo ? wick_sched_new(solo, NULL, &err) : NULL;
    static sreq q[5];
    static out_rec got[5], ref[5];
    const int lens[][2] = {{100, 200}, {200, 100}, {7, 129}, {60, 60}, {128, 1}};
    for (int i = 0; s && s1 && i < 5; i++) {
        make(&q[i], 10 + i, lens[i], 2, 5 + i, i < 3 ? 300 : 300 + (uint64_t)i, V);
        q[i].positions = i % 2 ? WICK_POSITIONS_SHARED : WICK_POSITIONS_SEQUENTIAL;
        q[i].blend = i == 2 ? 3 : 0;
        q[i].n_predict = 6;
        run_one(s1, &q[i], i == 4, &ref[i]);
    }
    for (int i = 0; s && s1 && i < 5; i++) {
        int64_t id = submit(s, &q[i], i == 4, &got[i], &err);
        CHECK_MSG(id > 0, "%s", err.msg);
    }
    if (s && s1) run(s);
    if (s && kv_blocks) { /* the small pool did make requests wait */
        wick_sched_stats st;
        wick_sched_get_stats(s, &st);
        CHECK_MSG(st.preemptions > 0, "%s: a pool of %d blocks preempted nothing", label, kv_blocks);
    }
    for (int i = 0; s && s1 && i < 5; i++)
        CHECK_MSG(same(&got[i], &ref[i]), "%s: request %d together (pool %d) differs from alone", label, i, kv_blocks);
    wick_sched_free(s);
    wick_sched_free(s1);
    wick_context_free(c);
    wick_context_free(solo);
}

/* A span request cancelled while its span job runs, and one whose client
 * stops it from the token callback: nothing is held afterwards, the cache
 * keeps no half-computed span, and the same request then runs as alone. */
static void cancelled(wick_model *m, const char *label, int V) {
    wick_error err;
    wick_context *c = new_ctx(m, 2, 1, false, NULL), *off = new_ctx(m, 1, 1, true, NULL);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL, *s_off = off ? wick_sched_new(off, NULL, &err) : NULL;
    static sreq q;
    static out_rec o, ref, other;
    const int lens[] = {290, 150};
    make(&q, 20, lens, 2, 6, 900, V);
    if (s && s_off) {
        int64_t id = submit(s, &q, false, &o, &err);
        CHECK_MSG(id > 0, "%s", err.msg);
        int64_t id2 = submit(s, &q, true, &other, &err); /* an ordinary request alongside */
        CHECK_MSG(id2 > 0, "%s", err.msg);
        for (int k = 0; k < 3; k++) wick_sched_step(s, &err); /* the first span's job is under way */
        wick_sched_cancel(s, id);
        run(s);
        CHECK_MSG(o.done && o.res.finish == WICK_FINISH_CANCELLED, "%s: cancelled span request finished %d", label,
                  (int)o.res.finish);
        CHECK(other.done && other.res.finish == WICK_FINISH_LENGTH);
        run_one(s_off, &q, false, &ref);
        run_one(s, &q, false, &o);
        CHECK_MSG(same(&o, &ref), "%s: after a cancelled span job the request differs from cache off", label);
    }
    wick_sched_free(s);
    wick_sched_free(s_off);
    wick_context_free(c);
    wick_context_free(off);
}

static void count_stored(void *user, const kv_event *ev) {
    if (ev->kind == KV_EVENT_STORED) ++*(int *)user;
}

/* A span's stored blocks are not prefix blocks: no KV event announces them
 * and kv_prefix_blocks leaves them out, while they serve the next request. */
static void silent(wick_model *m, const char *label, int V) {
    wick_error err;
    wick_context *c = new_ctx(m, 1, 1, false, NULL);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) {
        wick_context_free(c);
        return;
    }
    int stored = 0;
    kv_set_events(&c->kv, count_stored, &stored);
    static sreq q;
    static out_rec o;
    const int lens[] = {300, 260};
    make(&q, 9, lens, 2, 5, 77, V);
    run_one(s, &q, false, &o);
    run_one(s, &q, false, &o);
    CHECK_MSG(o.res.span_cached_tokens == 560, "%s: warm reused %d span tokens", label, o.res.span_cached_tokens);
    CHECK_MSG(stored == 0, "%s: %d KV events announced span blocks", label, stored);
    CHECK_MSG(kv_prefix_blocks(&c->kv) == 0, "%s: %d span blocks counted as prefix blocks", label,
              kv_prefix_blocks(&c->kv));
    wick_sched_free(s);
    wick_context_free(c);
}

static void refused(wick_model *m, int V) {
    wick_error err;
    wick_context *c = new_ctx(m, 1, 0, false, NULL);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) {
        wick_context_free(c);
        return;
    }
    static sreq q;
    static out_rec o;
    const int lens[] = {20, 0};
    make(&q, 5, lens, 2, 3, 1, V);
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "span 1 is empty"));
    make(&q, 5, lens, 1, 0, 1, V);
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "suffix"));
    const int longs[] = {300, 300, 300, 300};
    make(&q, 5, longs, 4, 3, 1, V);
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "context holds"));
    make(&q, 5, lens, 1, 3, 1, V);
    q.anchor = (wick_span_anchor)9;
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "anchor"));
    q.anchor = WICK_ANCHOR_PREFIX;
    q.positions = (wick_span_positions)5;
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "positions"));
    q.positions = WICK_POSITIONS_SEQUENTIAL;
    q.blend = -1;
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "blend"));
    q.blend = 0;
    q.spans[0][3] = V;
    CHECK(submit(s, &q, false, &o, &err) < 0 && strstr(err.msg, "out of range"));
    wick_sched_free(s);
    wick_context_free(c);
}

int main(void) {
    char dir[] = "/tmp/wick-spans-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    /* gemma3: placement rotates each layer's K with its RoPE set (local or
     * global); phi3 with LongRoPE: cos/sin carry its attention factor */
    const char *dtypes[] = {"f32", "q4_0", "f32", "q4_0"};
    const char *archs[] = {"qwen3", "llama", "gemma3", "phi3"};
    const char *ropes[] = {NULL, NULL, NULL, "longrope"};
    for (int i = 0; i < 4; i++) {
        char path[300], cache[320];
        snprintf(path, sizeof path, "%s/%s-%s.gguf", dir, archs[i], dtypes[i]);
        snprintf(cache, sizeof cache, "%s/cache-%d", dir, i);
        wick_error err;
        test_model_params p = {.arch = archs[i], .format = "gguf", .shape = "tiny256", .dtype = dtypes[i],
                               .rope_scaling = ropes[i], .seed = 11, .out = path};
        CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
        wick_model *m = wick_model_load(path, NULL, &err);
        CHECK_MSG(m != NULL, "%s", err.msg);
        if (!m) continue;
        wick_model_info info;
        wick_model_get_info(m, &info);
        char label[64];
        snprintf(label, sizeof label, "%s %s", archs[i], dtypes[i]);
        oracle(m, label, info.n_vocab, strcmp(archs[i], "phi3") == 0);
        modes(m, label, info.n_vocab, i % 2, cache); /* F32 or F16 KV */
        together(m, label, info.n_vocab, 0);
        together(m, label, info.n_vocab, 9);
        cancelled(m, label, info.n_vocab);
        silent(m, label, info.n_vocab);
        if (i == 0) refused(m, info.n_vocab);
        wick_model_free(m);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("test_spans");
}
