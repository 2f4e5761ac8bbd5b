/* test_prefix_cache.c — the automatic prefix cache (kv/prefix_cache.c)
 * through the scheduler: a miss, a full hit, a partial hit reused to the
 * token, copy-on-write of a shared block by requests that diverge inside it,
 * eviction under a small pool, salts that keep requests apart, forgetting
 * a prompt's chain (forget_prefix) while a request holds it, and a
 * randomized run of hundreds of requests sharing prefixes under small
 * budgets. The cache folder (kv/block_disk.c): restored after a restart,
 * damaged files; a randomized run with the folder's budget full and
 * restarts; special files named like blocks (FIFO, directory, link, socket,
 * device); the folder's and files' permissions and leftover temporary files;
 * forged blocks rejected when read back; write failures counted. Every
 * output (tokens, and each token's logprob and top-5 logprobs, compared bit
 * for bit) equals the same request run alone with the cache off; the pool's
 * and the cache's invariants (kv_check) hold after every step; every
 * block is free or cached once all requests end. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <xxhash.h>

#include "check.h"
#include "sched_check.h"
#include "engine/context.h"
#include "kv/kv_cache.h"
#include "kv/kv_check.h"
#include "cli/testmodel.h"
#include "wick.h"

#define MAX_OUT 32
#define MAX_PROMPT 520
#define N_TOP 5

typedef struct out_rec {
    int32_t ids[MAX_OUT];
    float lp[MAX_OUT], top[MAX_OUT][N_TOP];
    int32_t top_ids[MAX_OUT][N_TOP];
    int n;
    bool done;
    wick_request_result res;
} out_rec;

typedef struct req {
    int32_t prompt[MAX_PROMPT];
    int n_prompt, n_predict;
    float temperature;
    uint64_t seed;
    const char *salt;
} req;

static bool on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    (void)text, (void)len;
    out_rec *o = user;
    if (o->n < MAX_OUT) {
        o->ids[o->n] = ti->id;
        o->lp[o->n] = ti->logprob;
        for (int k = 0; k < N_TOP; k++) {
            o->top[o->n][k] = k < ti->n_top ? ti->top_logprobs[k] : 0;
            o->top_ids[o->n][k] = k < ti->n_top ? ti->top_ids[k] : -1;
        }
        o->n++;
    }
    return true;
}

static void on_done(void *user, const wick_request_result *res) {
    out_rec *o = user;
    o->res = *res;
    o->res.error = NULL;
    o->res.tail = NULL;
    o->done = true;
}

static wick_context *new_ctx(wick_model *m, int n_seq, int kv_blocks, int cache_blocks, bool off, int chunk) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 640, .n_seq = n_seq, .n_threads = 2, .prefill_chunk = chunk,
                              .kv_blocks = kv_blocks, .cache_blocks = cache_blocks, .no_prefix_cache = off};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    return c;
}

static void submit(wick_sched *s, const req *q, out_rec *o) {
    wick_error err;
    memset(o, 0, sizeof *o);
    wick_request r = {.prompt = q->prompt, .n_prompt = q->n_prompt, .n_predict = q->n_predict,
                      .logprobs = N_TOP, .on_token = on_token, .on_done = on_done, .user = o,
                      .ignore_eos = true, .cache_salt = q->salt};
    r.sampling.temperature = q->temperature;
    r.sampling.top_k = q->temperature > 0 ? 20 : 0;
    r.sampling.seed = q->seed;
    int64_t id = wick_sched_submit(s, &r, &err);
    CHECK_MSG(id > 0, "%s", err.msg);
}

/* Queue a forget_prefix request of q's prompt (it is done in order). */
static void forget(wick_sched *s, const req *q) {
    static out_rec o;
    wick_error err;
    memset(&o, 0, sizeof o);
    wick_request r = {.prompt = q->prompt, .n_prompt = q->n_prompt, .logprobs = -1, .forget_prefix = true,
                      .on_done = on_done, .user = &o, .cache_salt = q->salt};
    CHECK_MSG(wick_sched_submit(s, &r, &err) > 0, "%s", err.msg);
}

/* Step until idle, checking the invariants after every step. */
static void run(wick_sched *s) { run_checked(s, 200000); }

/* The request alone, cache off. */
static void reference(wick_model *m, const req *q, out_rec *o) {
    wick_error err;
    wick_context *c = new_ctx(m, 1, 0, 0, true, 64);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (s) {
        submit(s, q, o);
        run(s);
        CHECK_INT(o->res.cached_tokens, 0);
    }
    wick_sched_free(s);
    wick_context_free(c);
}

static bool same(const out_rec *a, const out_rec *b) {
    return a->done && b->done && a->n == b->n && memcmp(a->ids, b->ids, sizeof a->ids[0] * (size_t)a->n) == 0 &&
           memcmp(a->lp, b->lp, sizeof a->lp[0] * (size_t)a->n) == 0 &&
           memcmp(a->top, b->top, sizeof a->top[0] * (size_t)a->n) == 0 &&
           memcmp(a->top_ids, b->top_ids, sizeof a->top_ids[0] * (size_t)a->n) == 0;
}

/* Run q on the cached scheduler s; check against the cache-off reference and
 * the expected number of reused tokens (-1 = do not check). */
static void expect(wick_model *m, wick_sched *s, const req *q, int cached, const char *label, const char *what) {
    static out_rec got, ref;
    submit(s, q, &got);
    run(s);
    reference(m, q, &ref);
    CHECK_MSG(same(&got, &ref), "%s: %s: output differs from the cache-off run", label, what);
    if (cached >= 0)
        CHECK_MSG(got.res.cached_tokens == cached, "%s: %s: %d cached tokens, expected %d", label, what,
                  got.res.cached_tokens, cached);
}

typedef struct rng_state {
    uint64_t x;
} rng_state;

static uint64_t rng_next(rng_state *r) {
    r->x ^= r->x << 13;
    r->x ^= r->x >> 7;
    r->x ^= r->x << 17;
    return r->x >> 11;
}

static void fill(int32_t *p, int n, uint64_t seed, int n_vocab) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int k = 0; k < n; k++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        p[k] = (int32_t)((x * 0x2545F4914F6CDD1Dull >> 33) % (uint64_t)(n_vocab - 3)) + 3;
    }
}

/* The cases one by one on one cached scheduler (the pool holds them all). */
static void cases(wick_model *m, const char *label) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    wick_error err;
    wick_context *c = new_ctx(m, 3, 0, 0, false, 48);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) {
        wick_context_free(c);
        return;
    }
    static req a, b, d, e;
    /* miss, then the same prompt: all but its last token is reused */
    a = (req){.n_prompt = 2 * B + 44, .n_predict = 6};
    fill(a.prompt, a.n_prompt, 1, V);
    expect(m, s, &a, 0, label, "miss");
    expect(m, s, &a, a.n_prompt - 1, label, "full hit");
    /* the same prompt sampled with a seed */
    a.temperature = 0.9f;
    a.seed = 77;
    expect(m, s, &a, a.n_prompt - 1, label, "full hit, sampled");
    a.temperature = 0;
    /* continuing the first answer: the cached tail holds prompt + answer */
    b = a;
    static out_rec first;
    submit(s, &a, &first);
    run(s);
    for (int k = 0; k < first.n - 1; k++) b.prompt[b.n_prompt++] = first.ids[k];
    b.prompt[b.n_prompt++] = 9;
    expect(m, s, &b, a.n_prompt + first.n - 1, label, "continuation");
    /* a partial hit: shares 1.5 blocks, then diverges */
    d = a;
    d.n_prompt = B + B / 2 + 30;
    fill(d.prompt + B + B / 2, 30, 2, V);
    expect(m, s, &d, B + B / 2, label, "partial hit to the token");
    /* copy-on-write: three requests at once share block 0 and diverge inside
     * block 1 at different places; the cached block 1 stays intact */
    static req cw[3];
    static out_rec cw_out[3], cw_ref[3];
    for (int i = 0; i < 3; i++) {
        cw[i] = a;
        cw[i].n_prompt = B + 10 + 20 * i + 8;
        fill(cw[i].prompt + B + 10 + 20 * i, 8, 100 + (uint64_t)i, V);
        cw[i].n_predict = 5 + i;
    }
    for (int i = 0; i < 3; i++) submit(s, &cw[i], &cw_out[i]);
    run(s);
    for (int i = 0; i < 3; i++) {
        reference(m, &cw[i], &cw_ref[i]);
        CHECK_MSG(same(&cw_out[i], &cw_ref[i]), "%s: copy-on-write request %d differs", label, i);
        CHECK_MSG(cw_out[i].res.cached_tokens == B + 10 + 20 * i, "%s: copy-on-write request %d reused %d", label, i,
                  cw_out[i].res.cached_tokens);
    }
    expect(m, s, &a, a.n_prompt - 1, label, "the shared block after copy-on-write");
    /* a salt keeps requests apart; the same salt shares */
    e = a;
    e.salt = "tenant-1";
    expect(m, s, &e, 0, label, "other salt");
    expect(m, s, &e, e.n_prompt - 1, label, "same salt");
    /* forgetting a prompt's chain: the next run computes it all, with the
     * same outputs; another salt's chain stays */
    forget(s, &a);
    expect(m, s, &a, 0, label, "after forgetting");
    expect(m, s, &e, e.n_prompt - 1, label, "another salt after forgetting");
    /* a forget between two requests of the same prompt: the running one
     * keeps the blocks it holds, the next one finds none */
    static out_rec held, after, ref_a;
    submit(s, &a, &held);
    forget(s, &a);
    submit(s, &a, &after);
    run(s);
    reference(m, &a, &ref_a);
    CHECK_MSG(same(&held, &ref_a) && same(&after, &ref_a), "%s: outputs around a forget differ", label);
    CHECK_MSG(held.res.cached_tokens == a.n_prompt - 1 && after.res.cached_tokens == 0,
              "%s: around a forget: %d and %d cached tokens", label, held.res.cached_tokens, after.res.cached_tokens);
    wick_sched_free(s);
    wick_context_free(c);

    /* eviction: a pool of 6 blocks, prompts of 2-3 blocks each */
    c = new_ctx(m, 2, 6, 0, false, 64);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) {
        wick_context_free(c);
        return;
    }
    expect(m, s, &a, -1, label, "before eviction");
    for (int i = 0; i < 4; i++) {
        d = (req){.n_prompt = 2 * B + 20 * i + 1, .n_predict = 3};
        fill(d.prompt, d.n_prompt, 50 + (uint64_t)i, V);
        char what[32];
        snprintf(what, sizeof what, "evicting %d", i);
        expect(m, s, &d, 0, label, what);
    }
    expect(m, s, &a, -1, label, "after eviction");
    CHECK_MSG(kv_blocks_total(&c->kv) == 6, "pool of %d blocks", kv_blocks_total(&c->kv));
    wick_sched_free(s);
    wick_context_free(c);
}

static int count_files(const char *dir, const char *suffix) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls %s | grep -c '%s$'", dir, suffix);
    FILE *f = popen(cmd, "r");
    int n = 0;
    if (f) {
        if (fscanf(f, "%d", &n) != 1) n = 0;
        pclose(f);
    }
    return n;
}

/* The warning callback's calls (wick_context_params.on_cache_warning). */
typedef struct warn_rec {
    int calls;
    char last[1024];
} warn_rec;

static void on_warning(void *user, const char *message) {
    warn_rec *w = user;
    w->calls++;
    snprintf(w->last, sizeof w->last, "%s", message);
}

/* A context on the cache folder dir (budget dir_bytes, 0 = the default),
 * its warnings to w (may be NULL). */
static wick_context *dir_ctx_ex(wick_model *m, const char *dir, int kv_blocks, size_t dir_bytes, warn_rec *w) {
    wick_error err;
    wick_context_params cp = {.n_ctx = 640, .n_seq = 2, .n_threads = 2, .prefill_chunk = 64, .kv_blocks = kv_blocks,
                              .cache_dir = dir, .cache_dir_bytes = dir_bytes, .on_cache_warning = w ? on_warning : NULL,
                              .cache_warning_user = w};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    return c;
}

static wick_context *dir_ctx(wick_model *m, const char *dir, int kv_blocks) {
    return dir_ctx_ex(m, dir, kv_blocks, 0, NULL);
}

/* Failures of kind k so far. */
static uint64_t errs(const wick_context *c, wick_cache_error k) {
    uint64_t n[WICK_CACHE_ERR_KINDS];
    wick_context_cache_errors(c, n);
    return n[k];
}

/* --cache-dir: blocks written at eviction and when the context is freed are
 * found by a later context (as after a restart); damaged, truncated and
 * foreign files are skipped, and outputs stay those of the cache-off run. */
static void restore(wick_model *m, const char *label, const char *tmp) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    char dir[400];
    snprintf(dir, sizeof dir, "%s/cache-%s", tmp, label);
    for (char *p = dir + strlen(tmp) + 1; *p; p++)
        if (*p == ' ') *p = '_';
    static req a, x;
    a = (req){.n_prompt = 2 * B + 44, .n_predict = 6};
    fill(a.prompt, a.n_prompt, 1, V);
    wick_error err;
    /* 1. compute and keep */
    wick_context *c = dir_ctx(m, dir, 0);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    expect(m, s, &a, 0, label, "first run with a cache directory");
    wick_sched_free(s);
    wick_context_free(c);
    CHECK_MSG(count_files(dir, ".wkv") == 3, "%s: %d block files written, expected 3", label, count_files(dir, ".wkv"));
    /* 2. a new context finds them */
    c = dir_ctx(m, dir, 0);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    CHECK_INT(wick_context_cache_warnings(c, NULL), 0);
    expect(m, s, &a, a.n_prompt - 1, label, "restored from disk");
    wick_sched_free(s);
    wick_context_free(c);
    /* 3. eviction writes: a pool of 3 blocks, then another prompt evicts a's blocks */
    c = dir_ctx(m, dir, 3);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    x = (req){.n_prompt = 2 * B + 5, .n_predict = 2};
    fill(x.prompt, x.n_prompt, 9, V);
    expect(m, s, &x, 0, label, "evicting to disk");
    expect(m, s, &a, a.n_prompt - 1, label, "read back after eviction");
    wick_sched_free(s);
    wick_context_free(c);
    /* 4. damage: flip a byte inside every block file's data, truncate one,
     * add a file of another layout and some garbage */
    {
        char cmd[1500];
        snprintf(cmd, sizeof cmd,
                 "cd %s && for f in *.wkv; do printf '\\377' | dd of=$f bs=1 seek=2000 conv=notrunc status=none; done && "
                 "f=$(ls *.wkv | head -1) && head -c 500 $f > t.tmp && mv t.tmp $f && "
                 "printf 'WICKKVB1garbage' > 00000000000000000000000000000000.wkv && "
                 "head -c 3000 /dev/urandom > 0123456789abcdef0123456789abcdef.wkv && echo hi > notes.txt",
                 dir);
        CHECK(system(cmd) == 0);
    }
    c = dir_ctx(m, dir, 0);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    CHECK_MSG(wick_context_cache_warnings(c, NULL) >= 3, "%s: %d warnings for 3 bad files", label,
              wick_context_cache_warnings(c, NULL));
    expect(m, s, &a, -1, label, "damaged cache directory");
    const char *last = NULL;
    int w = wick_context_cache_warnings(c, &last);
    CHECK_MSG(w >= 4 && last && *last, "%s: %d warnings after reading damaged blocks", label, w);
    expect(m, s, &a, a.n_prompt - 1, label, "recomputed after damage");
    wick_sched_free(s);
    wick_context_free(c);
    return;
out:
    wick_context_free(c);
}

/* dir = tmp/what-label, spaces made underscores. */
static void sub_dir(char *dir, size_t cap, const char *tmp, const char *what, const char *label) {
    snprintf(dir, cap, "%s/%s-%s", tmp, what, label);
    for (char *p = dir + strlen(tmp) + 1; *p; p++)
        if (*p == ' ') *p = '_';
}

/* The path of key's block file in dir. */
static void block_path(char *out, size_t cap, const char *dir, kv_key k) {
    snprintf(out, cap, "%s/%016llx%016llx.wkv", dir, (unsigned long long)k.hi, (unsigned long long)k.lo);
}

/* The keys of a prompt's blocks (full ones, then the tail of n_tail tokens). */
static void chain_keys(const wick_context *c, const int32_t *toks, int n_full, int n_tail, kv_key *keys) {
    const int B = wick_kv_block_size();
    kv_key k = kv_root(&c->kv, NULL);
    for (int i = 0; i < n_full; i++) keys[i] = k = block_key(k, toks + (size_t)i * B, B);
    if (n_tail) keys[n_full] = block_key(k, toks + (size_t)n_full * B, n_tail);
}

/* Token ids the edits below put in place of t (still in the test models' range). */
static int32_t other_token(int32_t t, int V) { return (t - 3 + 1) % (V - 3) + 3; }

/* Change token ids [first, first + n) of a block file and write the checksum
 * again over the edited file (as a forger would). 0 or -1. */
static int edit_tokens(const char *path, int first, int n, int V) {
    FILE *f = fopen(path, "r+b");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    const long size = ftell(f);
    unsigned char *buf = size > 100 ? malloc((size_t)size) : NULL;
    int rc = -1;
    rewind(f);
    if (buf && fread(buf, 1, (size_t)size, f) == (size_t)size) {
        for (int i = first; i < first + n; i++) {
            int32_t t;
            memcpy(&t, buf + 84 + 4 * i, 4);
            t = other_token(t, V);
            memcpy(buf + 84 + 4 * i, &t, 4);
        }
        const uint64_t sum = XXH3_64bits(buf, (size_t)size - 8);
        memcpy(buf + size - 8, &sum, 8);
        rewind(f);
        if (fwrite(buf, 1, (size_t)size, f) == (size_t)size) rc = 0;
    }
    free(buf);
    if (fclose(f) != 0) rc = -1;
    return rc;
}

/* Total size of dir's block files. */
static uint64_t block_bytes(const char *dir) {
    DIR *dh = opendir(dir);
    uint64_t n = 0;
    struct dirent *de;
    while (dh && (de = readdir(dh))) {
        const size_t len = strlen(de->d_name);
        struct stat st;
        char p[700];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        if (len > 4 && strcmp(de->d_name + len - 4, ".wkv") == 0 && stat(p, &st) == 0) n += (uint64_t)st.st_size;
    }
    if (dh) closedir(dh);
    return n;
}

/* The disk tier with its budget full: a folder that holds only a few blocks'
 * files and a pool of 6 blocks, so that reading a block back takes a block,
 * which evicts another, whose write deletes the oldest files to make room,
 * all in one scheduler step; requests from a few shared stems run again and
 * again, in random waves, across restarts (the context freed, its cached
 * blocks written, a new one indexing the folder). Every output equals the
 * cache-off run bit for bit, the invariants hold after every step, no block
 * read back fails, and the folder stays within its budget. */
static void disk_full(wick_model *m, const char *label, const char *tmp, int n_distinct, int n_runs, uint64_t seed) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    char dir[400];
    sub_dir(dir, sizeof dir, tmp, "full", label);
    const uint64_t block_file =
        84 + 4 * (uint64_t)B + (uint64_t)B * 2 * (uint64_t)(info.n_layer * info.n_head_kv * info.head_dim) * 4 + 8;
    const uint64_t budget = 3 * block_file + block_file / 2;
    rng_state r = {seed | 1};
    enum { N_STEM = 3 };
    static int32_t stems[N_STEM][MAX_PROMPT];
    for (int i = 0; i < N_STEM; i++) fill(stems[i], MAX_PROMPT, 2000 + (uint64_t)i, V);
    req *qs = calloc((size_t)n_distinct, sizeof *qs);
    out_rec *ref = calloc((size_t)n_distinct, sizeof *ref), *got = calloc((size_t)n_runs, sizeof *got);
    int *which = calloc((size_t)n_runs, sizeof *which);
    if (!qs || !ref || !got || !which) goto out;
    for (int i = 0; i < n_distinct; i++) {
        req *q = &qs[i];
        q->n_prompt = 100 + (int)(rng_next(&r) % 320);
        memcpy(q->prompt, stems[rng_next(&r) % N_STEM], (size_t)q->n_prompt * sizeof q->prompt[0]);
        const int tail = (int)(rng_next(&r) % 3) == 0 ? 0 : (int)(rng_next(&r) % 60);
        if (tail && tail < q->n_prompt) fill(q->prompt + q->n_prompt - tail, tail, rng_next(&r), V);
        q->n_predict = 1 + (int)(rng_next(&r) % 4);
        q->temperature = rng_next(&r) % 3 == 0 ? 0.8f : 0.0f;
        q->seed = rng_next(&r);
    }
    for (int i = 0; i < n_distinct; i++) reference(m, &qs[i], &ref[i]);
    for (int k = 0; k < n_runs; k++) which[k] = (int)(rng_next(&r) % (uint64_t)n_distinct);
    const int per_ctx = (n_runs + 3) / 4; /* three restarts */
    uint64_t hits = 0, bad = 0;
    for (int k = 0; k < n_runs;) {
        wick_error err;
        wick_context *c = dir_ctx_ex(m, dir, 6, (size_t)budget, NULL);
        wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
        if (!s) {
            wick_context_free(c);
            goto out;
        }
        char msg[256];
        const int end = k + per_ctx < n_runs ? k + per_ctx : n_runs;
        while (k < end) {
            const int wave = 1 + (int)(rng_next(&r) % 3);
            for (int w = 0; w < wave && k < end; w++, k++) submit(s, &qs[which[k]], &got[k]);
            const int steps = (int)(rng_next(&r) % 6);
            for (int t = 0; t < steps; t++) {
                wick_sched_step(s, &err);
                if (kv_check(&c->kv.pool, &c->kv.tab, msg, sizeof msg) < 0) {
                    CHECK_MSG(false, "%s full disk: invariant: %s", label, msg);
                    k = n_runs;
                    break;
                }
            }
        }
        run(s);
        uint64_t n[WICK_CACHE_ERR_KINDS];
        wick_context_cache_errors(c, n);
        bad += n[WICK_CACHE_ERR_SKIPPED] + n[WICK_CACHE_ERR_READ] + n[WICK_CACHE_ERR_CORRUPT] + n[WICK_CACHE_ERR_WRITE];
        wick_sched_free(s);
        wick_context_free(c);
    }
    for (int k = 0; k < n_runs; k++) {
        const req *q = &qs[which[k]];
        CHECK_MSG(same(&got[k], &ref[which[k]]),
                  "%s full disk: run %d (request %d, prompt %d, temp %.1f, %d cached) differs from cache-off", label, k,
                  which[k], q->n_prompt, q->temperature, got[k].res.cached_tokens);
        hits += (uint64_t)got[k].res.cached_tokens;
    }
    printf("%s: full cache folder (%llu bytes, 3.5 blocks), pool of 6 blocks: %d runs of %d requests over 4 contexts, "
           "%llu prompt tokens reused, %llu folder failures\n",
           label, (unsigned long long)budget, n_runs, n_distinct, (unsigned long long)hits, (unsigned long long)bad);
    CHECK_MSG(hits > 0, "%s full disk: nothing was reused", label);
    CHECK_MSG(bad == 0, "%s full disk: %llu cache-folder failures", label, (unsigned long long)bad);
    CHECK_MSG(block_bytes(dir) <= budget, "%s full disk: %llu bytes of block files, budget %llu", label,
              (unsigned long long)block_bytes(dir), (unsigned long long)budget);
out:
    free(qs);
    free(ref);
    free(got);
    free(which);
}

static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_prefix_cache: FAILED: opening or reading the cache folder hung\n";
    if (write(2, msg, sizeof msg - 1) < 0) _exit(3);
    _exit(2);
}

/* A FIFO, a directory, a symbolic link (to a real block file, under that
 * block's name), a socket and a device named like block files: opening the
 * folder neither hangs (alarm) nor uses them; they are counted as skipped,
 * the callback hears once. A FIFO put in place of an indexed block is not
 * read either (counted as a read failure). Outputs equal cache-off. */
static void special_files(wick_model *m, const char *label, const char *tmp) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    char dir[400], p[800], q[800];
    sub_dir(dir, sizeof dir, tmp, "special", label);
    static req a;
    a = (req){.n_prompt = 2 * B + 44, .n_predict = 4};
    fill(a.prompt, a.n_prompt, 1, V);
    kv_key keys[3];
    wick_error err;
    wick_context *c = dir_ctx(m, dir, 0);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    chain_keys(c, a.prompt, 2, 44, keys);
    expect(m, s, &a, 0, label, "before the special files");
    wick_sched_free(s);
    wick_context_free(c);
    int made = 0;
    snprintf(p, sizeof p, "%s/%s.wkv", dir, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    CHECK(mkfifo(p, 0600) == 0);
    made++;
    snprintf(p, sizeof p, "%s/%s.wkv", dir, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
    CHECK(mkdir(p, 0700) == 0);
    made++;
    /* block 1 moved out of the folder, a link to it in its place */
    block_path(p, sizeof p, dir, keys[1]);
    snprintf(q, sizeof q, "%s/outside-%s.wkv", tmp, strrchr(dir, '/') + 1);
    CHECK(rename(p, q) == 0 && symlink(q, p) == 0);
    made++;
    snprintf(p, sizeof p, "%s/%s.wkv", dir, "cccccccccccccccccccccccccccccccc");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && strlen(p) < sizeof sa.sun_path) {
        memcpy(sa.sun_path, p, strlen(p) + 1);
        if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0) made++;
    }
    if (fd >= 0) close(fd);
    snprintf(p, sizeof p, "%s/%s.wkv", dir, "dddddddddddddddddddddddddddddddd");
    if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) made++; /* like /dev/null; needs the right to make devices */
    signal(SIGALRM, on_alarm);
    alarm(120);
    warn_rec w = {0};
    c = dir_ctx_ex(m, dir, 0, 0, &w);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    printf("%s: %d special files named like blocks: %llu skipped, callback %d time(s): %s\n", label, made,
           (unsigned long long)errs(c, WICK_CACHE_ERR_SKIPPED), w.calls, w.last);
    CHECK_MSG(errs(c, WICK_CACHE_ERR_SKIPPED) == (uint64_t)made, "%s: %llu skipped, %d special files", label,
              (unsigned long long)errs(c, WICK_CACHE_ERR_SKIPPED), made);
    CHECK_MSG(w.calls == 1 && strstr(w.last, dir), "%s: %d warning calls (%s)", label, w.calls, w.last);
    expect(m, s, &a, B, label, "beside special files (block 1 behind a link: computed)");
    wick_sched_free(s);
    wick_context_free(c);
    /* at read-back: a FIFO in place of block 0 once the folder is indexed */
    c = dir_ctx(m, dir, 0);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    block_path(p, sizeof p, dir, keys[0]);
    CHECK(unlink(p) == 0 && mkfifo(p, 0600) == 0);
    expect(m, s, &a, 0, label, "block 0 a FIFO at read-back");
    CHECK_INT(errs(c, WICK_CACHE_ERR_READ), 1);
    CHECK_INT(errs(c, WICK_CACHE_ERR_CORRUPT), 0);
    expect(m, s, &a, a.n_prompt - 1, label, "recomputed after the FIFO");
    wick_sched_free(s);
    wick_context_free(c);
    c = NULL;
out:
    alarm(0);
    wick_context_free(c);
}

/* The folder is made private (0700), block files too (0600); a folder others
 * may write to (0777, 0770) or (as root) another user's is refused with a
 * clear error; temporary files a crash left are deleted at open; a block
 * file writable by others or another user's is skipped. */
static void permissions(wick_model *m, const char *label, const char *tmp) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    char dir[400], p[800];
    sub_dir(dir, sizeof dir, tmp, "perm", label);
    static req a;
    a = (req){.n_prompt = 2 * B + 44, .n_predict = 1}; /* one token: the kept tail holds the prompt's 44 */
    fill(a.prompt, a.n_prompt, 1, V);
    kv_key keys[3];
    wick_error err;
    struct stat st;
    wick_context *c = dir_ctx(m, dir, 0);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    CHECK(stat(dir, &st) == 0);
    const unsigned dir_mode = st.st_mode & 0777;
    CHECK_MSG(dir_mode == 0700, "%s: cache folder made with mode %03o", label, dir_mode);
    chain_keys(c, a.prompt, 2, 44, keys);
    expect(m, s, &a, 0, label, "permissions");
    wick_sched_free(s);
    wick_context_free(c);
    for (int i = 0; i < 3; i++) {
        block_path(p, sizeof p, dir, keys[i]);
        CHECK(stat(p, &st) == 0);
        CHECK_MSG((st.st_mode & 0777) == 0600, "%s: block file made with mode %03o", label,
                  (unsigned)(st.st_mode & 0777));
    }
    printf("%s: cache folder made with mode %03o, block files %03o\n", label, dir_mode, (unsigned)(st.st_mode & 0777));
    /* leftovers of a crash */
    char t[3][800];
    snprintf(t[0], sizeof t[0], "%s/x.wkv.tmp", dir);
    snprintf(t[1], sizeof t[1], "%s/y.tmp", dir);
    block_path(t[2], sizeof t[2], dir, keys[0]);
    strcat(t[2], ".tmp");
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(t[i], "w");
        CHECK(f && fputs("half a block", f) >= 0);
        if (f) fclose(f);
    }
    c = dir_ctx(m, dir, 0);
    int left = 0;
    for (int i = 0; i < 3; i++) left += access(t[i], F_OK) == 0;
    printf("%s: leftover temporary files after open: %d of 3\n", label, left);
    CHECK_MSG(left == 0, "%s: %d leftover temporary files not deleted", label, left);
    CHECK(c && errs(c, WICK_CACHE_ERR_SKIPPED) == 0);
    wick_context_free(c);
    /* folders others may write to */
    const unsigned modes[] = {0777, 0770, 0720};
    for (int i = 0; i < 3; i++) {
        CHECK(chmod(dir, modes[i]) == 0);
        wick_context_params cp = {.n_ctx = 640, .n_threads = 2, .cache_dir = dir};
        memset(&err, 0, sizeof err);
        c = wick_context_new(m, &cp, &err);
        CHECK_MSG(!c && strstr(err.msg, dir) && strstr(err.msg, "writable by its group or others"),
                  "%s: folder mode %03o: %s", label, modes[i], c ? "accepted" : err.msg);
        wick_context_free(c);
        if (i == 0) printf("%s: folder of mode 0777: %s\n", label, c ? "accepted" : err.msg);
    }
    CHECK(chmod(dir, 0700) == 0);
    /* a block file others may write to is skipped */
    block_path(p, sizeof p, dir, keys[0]);
    CHECK(chmod(p, 0666) == 0);
    c = dir_ctx(m, dir, 0);
    CHECK(c && errs(c, WICK_CACHE_ERR_SKIPPED) == 1);
    wick_context_free(c);
    CHECK(chmod(p, 0600) == 0);
    if (geteuid() == 0) { /* ownership: only root can give files away */
        CHECK(chown(p, 65534, 65534) == 0);
        c = dir_ctx(m, dir, 0);
        CHECK(c && errs(c, WICK_CACHE_ERR_SKIPPED) == 1);
        wick_context_free(c);
        CHECK(chown(p, 0, 0) == 0);
        CHECK(chown(dir, 65534, 65534) == 0);
        wick_context_params cp = {.n_ctx = 640, .n_threads = 2, .cache_dir = dir};
        c = wick_context_new(m, &cp, &err);
        CHECK_MSG(!c && strstr(err.msg, "belongs to another user"), "%s: another user's folder: %s", label,
                  c ? "accepted" : err.msg);
        wick_context_free(c);
        CHECK(chown(dir, 0, 0) == 0);
    }
    c = NULL;
out:
    wick_context_free(c);
}

/* Blocks that are not what their key names: a tail block whose token ids
 * were edited and its checksum recomputed before the folder is opened (the
 * index would offer it to a prompt with the edited ids) is skipped; once the
 * folder is indexed, a block file replaced by a copy of another valid block's
 * and one whose token ids were edited (checksum recomputed) are rejected when
 * read back (counted as corrupt, the callback told once). Outputs equal
 * cache-off throughout. */
static void corrupt(wick_model *m, const char *label, const char *tmp) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    char dir[400], p[800], q[800];
    sub_dir(dir, sizeof dir, tmp, "corrupt", label);
    static req a, b, a2;
    a = (req){.n_prompt = 2 * B + 44, .n_predict = 1}; /* one token: the kept tail holds the prompt's 44 */
    fill(a.prompt, a.n_prompt, 1, V);
    b = (req){.n_prompt = 2 * B + 10, .n_predict = 1};
    fill(b.prompt, b.n_prompt, 3, V);
    a2 = a;
    for (int i = 2 * B + 40; i < 2 * B + 44; i++) a2.prompt[i] = other_token(a2.prompt[i], V);
    kv_key ka[3], kb[3];
    wick_error err;
    wick_context *c = dir_ctx(m, dir, 0);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    chain_keys(c, a.prompt, 2, 44, ka);
    chain_keys(c, b.prompt, 2, 10, kb);
    expect(m, s, &a, 0, label, "corrupt: a");
    expect(m, s, &b, 0, label, "corrupt: b");
    wick_sched_free(s);
    wick_context_free(c);
    /* 1. before the folder is opened: a's tail with ids 40-43 edited */
    block_path(p, sizeof p, dir, ka[2]);
    CHECK(edit_tokens(p, 40, 4, V) == 0);
    warn_rec w = {0};
    c = dir_ctx_ex(m, dir, 0, 0, &w);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    CHECK_INT(errs(c, WICK_CACHE_ERR_SKIPPED), 1);
    expect(m, s, &a2, 2 * B, label, "a tail block with edited ids (prompt with those ids)");
    wick_sched_free(s);
    wick_context_free(c);
    unlink(p);
    /* 2. once indexed: b's block 0 replaced by a copy of a's block 0, a's
     * block 1 with edited ids */
    w = (warn_rec){0};
    c = dir_ctx_ex(m, dir, 0, 0, &w);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    CHECK_INT(errs(c, WICK_CACHE_ERR_SKIPPED), 0);
    block_path(p, sizeof p, dir, ka[0]);
    block_path(q, sizeof q, dir, kb[0]);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", p, q);
    CHECK(system(cmd) == 0);
    block_path(p, sizeof p, dir, ka[1]);
    CHECK(edit_tokens(p, 5, 3, V) == 0);
    expect(m, s, &a, B, label, "block 1 with edited ids at read-back");
    CHECK_INT(errs(c, WICK_CACHE_ERR_CORRUPT), 1);
    expect(m, s, &b, 0, label, "block 0 a copy of another block's file at read-back");
    CHECK_INT(errs(c, WICK_CACHE_ERR_CORRUPT), 2);
    printf("%s: 2 forged blocks rejected at read-back, callback %d time(s): %s\n", label, w.calls, w.last);
    CHECK_MSG(w.calls == 1 && strstr(w.last, ".wkv"),
              "%s: %d warning calls (%s)", label, w.calls, w.last);
    CHECK_INT(errs(c, WICK_CACHE_ERR_READ), 0);
    expect(m, s, &a, a.n_prompt - 1, label, "a recomputed");
    expect(m, s, &b, b.n_prompt - 1, label, "b recomputed");
    wick_sched_free(s);
    wick_context_free(c);
    c = NULL;
out:
    wick_context_free(c);
}

/* Write failures are counted and told once, and change no output: a disk
 * full (a file size limit, SIGXFSZ ignored: the tests may run as root, whom
 * permissions do not stop) and a directory where a block's temporary file
 * would go. Nothing half-written is left behind. */
static void write_failures(wick_model *m, const char *label, const char *tmp) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab, B = wick_kv_block_size();
    char dir[400], p[800];
    static req a, x;
    a = (req){.n_prompt = 2 * B + 44, .n_predict = 3};
    fill(a.prompt, a.n_prompt, 1, V);
    x = (req){.n_prompt = 2 * B + 5, .n_predict = 2};
    fill(x.prompt, x.n_prompt, 9, V);
    wick_error err;
    /* 1. disk full: a pool of 3 blocks, x then a (x's 3 blocks evicted), then x (a's) */
    sub_dir(dir, sizeof dir, tmp, "full-disk", label);
    warn_rec w = {0};
    wick_context *c = dir_ctx_ex(m, dir, 3, 0, &w);
    wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = 1000; /* a block file has at least 2 KiB */
    signal(SIGXFSZ, SIG_IGN);
    fflush(stdout);
    fflush(stderr);
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    expect(m, s, &x, 0, label, "disk full: x");
    expect(m, s, &a, 0, label, "disk full: a evicts x");
    expect(m, s, &x, 0, label, "disk full: x again (not on disk)");
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    printf("%s: disk full: %llu write failures, callback %d time(s): %s\n", label,
           (unsigned long long)errs(c, WICK_CACHE_ERR_WRITE), w.calls, w.last);
    CHECK_INT(errs(c, WICK_CACHE_ERR_WRITE), 6);
    CHECK_MSG(w.calls == 1 && strstr(w.last, dir), "%s: %d warning calls (%s)", label, w.calls, w.last);
    CHECK_INT(count_files(dir, ".wkv"), 0);
    CHECK_INT(count_files(dir, ".tmp"), 0);
    uint64_t n[WICK_CACHE_ERR_KINDS];
    wick_context_cache_errors(c, n);
    CHECK(n[WICK_CACHE_ERR_SKIPPED] == 0 && n[WICK_CACHE_ERR_READ] == 0 && n[WICK_CACHE_ERR_CORRUPT] == 0);
    wick_sched_free(s);
    wick_context_free(c);
    /* 2. a directory in the way of x's block 0's temporary file */
    sub_dir(dir, sizeof dir, tmp, "blocked", label);
    w = (warn_rec){0};
    c = dir_ctx_ex(m, dir, 3, 0, &w);
    s = c ? wick_sched_new(c, NULL, &err) : NULL;
    if (!s) goto out;
    kv_key kx[3];
    chain_keys(c, x.prompt, 2, 5, kx);
    block_path(p, sizeof p, dir, kx[0]);
    strcat(p, ".tmp");
    CHECK(mkdir(p, 0700) == 0);
    expect(m, s, &x, 0, label, "blocked: x");
    expect(m, s, &a, 0, label, "blocked: a evicts x");
    CHECK_INT(errs(c, WICK_CACHE_ERR_WRITE), 1);
    CHECK_INT(count_files(dir, ".wkv"), 2);
    CHECK_MSG(w.calls == 1 && strstr(w.last, ".wkv.tmp"), "%s: %d warning calls (%s)", label, w.calls, w.last);
    expect(m, s, &x, -1, label, "blocked: x again");
    wick_sched_free(s);
    wick_context_free(c);
    c = NULL;
    rmdir(p);
out:
    wick_context_free(c);
}

/* Hundreds of requests from a few shared stems, random lengths, greedy and
 * sampled, in random waves, on small pools and cache budgets. */
static void fuzz(wick_model *m, const char *label, int n_req, uint64_t seed) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int V = info.n_vocab;
    rng_state r = {seed | 1};
    enum { N_STEM = 4 };
    static int32_t stems[N_STEM][MAX_PROMPT];
    for (int i = 0; i < N_STEM; i++) fill(stems[i], MAX_PROMPT, 1000 + (uint64_t)i, V);
    req *qs = calloc((size_t)n_req, sizeof *qs);
    out_rec *got = calloc((size_t)n_req, sizeof *got), *ref = calloc((size_t)n_req, sizeof *ref);
    if (!qs || !got || !ref) goto out;
    for (int i = 0; i < n_req; i++) {
        req *q = &qs[i];
        const int stem = (int)(rng_next(&r) % N_STEM);
        q->n_prompt = 1 + (int)(rng_next(&r) % 420);
        memcpy(q->prompt, stems[stem], (size_t)q->n_prompt * sizeof q->prompt[0]);
        const int tail = (int)(rng_next(&r) % 4) == 0 ? 0 : (int)(rng_next(&r) % 40);
        if (tail && tail < q->n_prompt) fill(q->prompt + q->n_prompt - tail, tail, rng_next(&r), V);
        q->n_predict = 1 + (int)(rng_next(&r) % 6);
        q->temperature = rng_next(&r) % 3 == 0 ? 0.8f : 0.0f;
        q->seed = rng_next(&r);
        q->salt = rng_next(&r) % 8 == 0 ? "s" : NULL;
    }
    for (int i = 0; i < n_req; i++) reference(m, &qs[i], &ref[i]);
    const int pools[] = {6, 9, 14};
    uint64_t hits = 0;
    for (int pi = 0; pi < 3; pi++) {
        wick_error err;
        wick_context *c = new_ctx(m, 1 + pi * 2, pools[pi], pi == 1 ? 3 : 0, false, 16 << pi);
        wick_sched *s = c ? wick_sched_new(c, NULL, &err) : NULL;
        if (!s) {
            wick_context_free(c);
            break;
        }
        char msg[256];
        for (int i = 0; i < n_req;) {
            const int wave = 1 + (int)(rng_next(&r) % 5);
            for (int k = 0; k < wave && i < n_req; k++, i++) submit(s, &qs[i], &got[i]);
            const int steps = (int)(rng_next(&r) % 6);
            for (int k = 0; k < steps; k++) {
                wick_sched_step(s, &err);
                if (kv_check(&c->kv.pool, &c->kv.tab, msg, sizeof msg) < 0) {
                    CHECK_MSG(false, "%s pool %d: invariant: %s", label, pools[pi], msg);
                    goto next;
                }
            }
        }
        run(s);
        for (int i = 0; i < n_req; i++) {
            CHECK_MSG(same(&got[i], &ref[i]), "%s pool %d: request %d (prompt %d, temp %.1f) differs from cache-off",
                      label, pools[pi], i, qs[i].n_prompt, qs[i].temperature);
            hits += (uint64_t)got[i].res.cached_tokens;
        }
        wick_sched_stats st;
        wick_sched_get_stats(s, &st);
        CHECK_INT(st.kv_blocks_used, 0);
        CHECK(st.kv_blocks_cached <= st.kv_blocks_total);
        if (pi == 1) CHECK(st.kv_blocks_cached <= 3);
    next:
        wick_sched_free(s);
        wick_context_free(c);
    }
    CHECK_MSG(hits > 0, "%s: no request found anything in the cache", label);
out:
    free(qs);
    free(got);
    free(ref);
}

int main(void) {
    char dir[] = "/tmp/wick-prefix-XXXXXX";
    if (!mkdtemp(dir)) return 1;
    /* gemma3: sliding (16-token window, local RoPE) and global layers; qwen3moe: tokens grouped by expert */
    const char *dtypes[] = {"f32", "q4_0", "q8_0", "q4_0"};
    const char *archs[] = {"qwen3", "llama", "gemma3", "qwen3moe"};
    for (int i = 0; i < (int)(sizeof archs / sizeof archs[0]); i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s-%s.gguf", dir, archs[i], dtypes[i]);
        wick_error err;
        test_model_params p = {.arch = archs[i], .format = "gguf", .shape = "tiny256", .dtype = dtypes[i],
                               .seed = 11, .out = path};
        CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
        wick_model *m = wick_model_load(path, NULL, &err);
        CHECK_MSG(m != NULL, "%s", err.msg);
        if (!m) continue;
        char label[64];
        snprintf(label, sizeof label, "%s %s", archs[i], dtypes[i]);
        cases(m, label);
        restore(m, label, dir);
        disk_full(m, label, dir, i == 0 ? 24 : 10, i == 0 ? 72 : 30, 7 + (uint64_t)i);
        if (i == 0) {
            special_files(m, label, dir);
            permissions(m, label, dir);
            corrupt(m, label, dir);
            write_failures(m, label, dir);
        }
        fuzz(m, label, i == 0 ? 200 : 60, 42 + (uint64_t)i);
        wick_model_free(m);
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("test_prefix_cache");
}
