/* llamacpp_ref.c — drives llama.cpp's own library (the prebuilt libllama that
 * the npm package @node-llama-cpp/linux-x64 ships) so that wick can be checked
 * and timed against it on this machine, in the same run:
 *
 *   llamacpp_ref LIBDIR quantize IN.gguf OUT.gguf TYPE [threads]   (TYPE: f32, f16, bf16, q8_0,
 *       q4_0, q4_1, q5_0, q5_1, q2_k, q2_k_s, q3_k_s|m|l, q4_k_s|m, q5_k_s|m, q6_k, iq4_nl, iq4_xs)
 *       write OUT with llama.cpp's quantizer (llama_model_quantize, the code
 *       behind llama-quantize): the GGUF files "written by llama.cpp's tools".
 *   llamacpp_ref LIBDIR logits MODEL.gguf ID,ID,...
 *       print the last position's logits as JSON {"logits":[...]}, for
 *       comparison with `wick logits` on the same file.
 *   llamacpp_ref LIBDIR greedy MODEL.gguf ID,ID,... N
 *       print the N token ids that greedy decoding appends, comma-separated.
 *   llamacpp_ref LIBDIR bench MODEL.gguf [-p 512] [-n 128] [-t 2] [-r 3]
 *       llama-bench's pp/tg measurement (one llama_decode of P tokens; N
 *       single-token decodes), medians over the repeats, as JSON.
 *   llamacpp_ref LIBDIR grammar MODEL.gguf GRAMMAR.gbnf [-n 128] [-t 2] [-r 3] [-s SEED]
 *       decode tok/s sampling at temperature 1 without and with a GBNF
 *       grammar (llama.cpp's grammar sampler, used as llama-server's sampler
 *       uses it: the token drawn unconstrained is kept when the grammar
 *       allows it, else the grammar masks every candidate and the draw is
 *       redone), alternating, medians over the repeats, as JSON.
 *
 * No llama.cpp header is used or copied: the few entry points are declared
 * here from the public C API and looked up with dlsym. Parameter structs are
 * treated as opaque buffers (larger than the real ones) obtained from the
 * library's own *_default_params, and only their long-stable leading fields
 * (n_ctx, n_batch, n_ubatch; nthread, ftype) are written. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "bench_util.h"

typedef struct { _Alignas(16) unsigned char b[1024]; } opaque_params;
typedef struct {
    int32_t n_tokens;
    int32_t *token;
    float *embd;
    int32_t *pos;
    int32_t *n_seq_id;
    int32_t **seq_id;
    int8_t *logits;
} llama_batch;

static void (*p_backend_init)(void);
static void (*p_log_set)(void (*)(int, const char *, void *), void *);
static void (*p_load_all_from_path)(const char *);
static opaque_params (*p_model_default_params)(void);
static opaque_params (*p_context_default_params)(void);
static opaque_params (*p_quantize_default_params)(void);
static uint32_t (*p_model_quantize)(const char *, const char *, const void *);
static void *(*p_model_load)(const char *, opaque_params);
static void (*p_model_free)(void *);
static void *(*p_init_from_model)(void *, opaque_params);
static void (*p_free)(void *);
static void (*p_set_n_threads)(void *, int32_t, int32_t);
static llama_batch (*p_batch_get_one)(int32_t *, int32_t);
static int32_t (*p_decode)(void *, llama_batch);
static float *(*p_get_logits_ith)(void *, int32_t);
static const void *(*p_model_get_vocab)(const void *);
static int32_t (*p_vocab_n_tokens)(const void *);
static void *(*p_get_memory)(void *);
typedef struct {
    int32_t id;
    float logit, p;
} token_data;
typedef struct {
    token_data *data;
    size_t size;
    int64_t selected;
    bool sorted;
} token_data_array;
static void *(*p_sampler_init_grammar)(const void *, const char *, const char *);
static void *(*p_sampler_init_dist)(uint32_t);
static void (*p_sampler_apply)(void *, token_data_array *);
static void (*p_sampler_accept)(void *, int32_t);
static void (*p_sampler_free)(void *);
static void (*p_memory_clear)(void *, int);

static void quiet_log(int level, const char *text, void *ud) {
    (void)level, (void)text, (void)ud;
}

static void *sym(void *h, const char *name) {
    void *f = dlsym(h, name);
    if (!f) {
        fprintf(stderr, "llamacpp_ref: %s not found in libllama (%s)\n", name, dlerror());
        exit(2);
    }
    return f;
}

#define LOAD(h, var, name) *(void **)(&var) = sym(h, name)

static void load_library(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/libllama.v0.5.0.so", dir);
    void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        snprintf(path, sizeof path, "%s/libllama.so", dir);
        h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    }
    if (!h) {
        fprintf(stderr, "llamacpp_ref: cannot load libllama from %s (%s)\n", dir, dlerror());
        exit(2);
    }
    LOAD(RTLD_DEFAULT, p_load_all_from_path, "ggml_backend_load_all_from_path");
    LOAD(h, p_backend_init, "llama_backend_init");
    LOAD(h, p_log_set, "llama_log_set");
    LOAD(h, p_model_default_params, "llama_model_default_params");
    LOAD(h, p_context_default_params, "llama_context_default_params");
    LOAD(h, p_quantize_default_params, "llama_model_quantize_default_params");
    LOAD(h, p_model_quantize, "llama_model_quantize");
    LOAD(h, p_model_load, "llama_model_load_from_file");
    LOAD(h, p_model_free, "llama_model_free");
    LOAD(h, p_init_from_model, "llama_init_from_model");
    LOAD(h, p_free, "llama_free");
    LOAD(h, p_set_n_threads, "llama_set_n_threads");
    LOAD(h, p_batch_get_one, "llama_batch_get_one");
    LOAD(h, p_decode, "llama_decode");
    LOAD(h, p_get_logits_ith, "llama_get_logits_ith");
    LOAD(h, p_model_get_vocab, "llama_model_get_vocab");
    LOAD(h, p_vocab_n_tokens, "llama_vocab_n_tokens");
    LOAD(h, p_get_memory, "llama_get_memory");
    LOAD(h, p_memory_clear, "llama_memory_clear");
    LOAD(h, p_sampler_init_grammar, "llama_sampler_init_grammar");
    LOAD(h, p_sampler_init_dist, "llama_sampler_init_dist");
    LOAD(h, p_sampler_apply, "llama_sampler_apply");
    LOAD(h, p_sampler_accept, "llama_sampler_accept");
    LOAD(h, p_sampler_free, "llama_sampler_free");
    if (!getenv("LLAMACPP_VERBOSE")) p_log_set(quiet_log, NULL);
    p_load_all_from_path(dir); /* the CPU backend variants (icelake, haswell, ...) */
    p_backend_init();
}

static void *open_model(const char *path) {
    opaque_params mp = p_model_default_params();
    void *m = p_model_load(path, mp);
    if (!m) {
        fprintf(stderr, "llamacpp_ref: llama.cpp cannot load %s\n", path);
        exit(1);
    }
    return m;
}

static void *open_context(void *model, uint32_t n_ctx, uint32_t n_batch, int threads) {
    opaque_params cp = p_context_default_params();
    uint32_t *u = (uint32_t *)cp.b; /* n_ctx, n_batch, n_ubatch lead the struct */
    u[0] = n_ctx;
    u[1] = n_batch;
    u[2] = n_batch;
    void *ctx = p_init_from_model(model, cp);
    if (!ctx) {
        fprintf(stderr, "llamacpp_ref: llama_init_from_model failed\n");
        exit(1);
    }
    p_set_n_threads(ctx, threads, threads);
    return ctx;
}

static int cmd_quantize(int argc, char **argv) {
    if (argc < 3) return 2;
    /* llama_ftype values from the public API (llama.h) */
    static const struct { const char *name; int ftype; } FTYPES[] = {
        {"f32", 0},     {"f16", 1},      {"q4_0", 2},     {"q4_1", 3},     {"q8_0", 7},    {"q5_0", 8},
        {"q5_1", 9},    {"q2_k", 10},    {"q3_k_s", 11},  {"q3_k_m", 12},  {"q3_k_l", 13}, {"q4_k_s", 14},
        {"q4_k_m", 15}, {"q5_k_s", 16},  {"q5_k_m", 17},  {"q6_k", 18},    {"q2_k_s", 21}, {"iq4_nl", 25},
        {"iq4_xs", 30}, {"bf16", 32},
    };
    int ftype = -1;
    for (size_t i = 0; i < sizeof FTYPES / sizeof FTYPES[0]; i++)
        if (!strcmp(argv[2], FTYPES[i].name)) ftype = FTYPES[i].ftype;
    if (ftype < 0) {
        fprintf(stderr, "llamacpp_ref: unknown type %s\n", argv[2]);
        return 2;
    }
    opaque_params qp = p_quantize_default_params();
    int32_t *w = (int32_t *)qp.b; /* nthread, ftype lead the struct */
    w[0] = arg_int(argc, argv, 3, 2);
    w[1] = ftype;
    uint32_t rc = p_model_quantize(argv[0], argv[1], qp.b);
    if (rc) fprintf(stderr, "llamacpp_ref: llama_model_quantize failed (%u)\n", rc);
    return rc ? 1 : 0;
}

static int parse_ids(const char *list, int32_t *ids, int cap) {
    int n = 0;
    for (char *s = (char *)list; *s && n < cap;) {
        ids[n++] = (int32_t)strtol(s, &s, 10);
        if (*s == ',') s++;
        else if (*s) return -1;
    }
    return n;
}

static int cmd_logits(int argc, char **argv, int n_greedy) {
    if (argc < 2) return 2;
    int32_t ids[4096];
    int n = parse_ids(argv[1], ids, 4096);
    if (n < 1 || n + n_greedy > 4096) return 2;
    void *m = open_model(argv[0]);
    void *ctx = open_context(m, 4096, 4096, 2);
    int nv = p_vocab_n_tokens(p_model_get_vocab(m));
    if (p_decode(ctx, p_batch_get_one(ids, n)) != 0) {
        fprintf(stderr, "llamacpp_ref: llama_decode failed\n");
        return 1;
    }
    if (n_greedy == 0) {
        const float *lg = p_get_logits_ith(ctx, -1);
        printf("{\"logits\":[");
        for (int i = 0; i < nv; i++) printf(i ? ",%.9g" : "%.9g", lg[i]);
        printf("]}\n");
    }
    for (int k = 0; k < n_greedy; k++) {
        const float *lg = p_get_logits_ith(ctx, -1);
        int32_t best = 0;
        for (int i = 1; i < nv; i++)
            if (lg[i] > lg[best]) best = i;
        printf(k ? ",%d" : "%d", best);
        ids[n] = best;
        if (k + 1 < n_greedy && p_decode(ctx, p_batch_get_one(&ids[n], 1)) != 0) return 1;
        n++;
    }
    if (n_greedy) printf("\n");
    p_free(ctx);
    p_model_free(m);
    return 0;
}

static int cmd_bench(int argc, char **argv) {
    if (argc < 1) return 2;
    int p = 512, n = 128, t = 2, r = 3;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-p")) p = v;
        else if (!strcmp(argv[i], "-n")) n = v;
        else if (!strcmp(argv[i], "-t")) t = v;
        else if (!strcmp(argv[i], "-r")) r = v;
    }
    if (p < 1 || n < 1 || t < 1 || r < 1 || r > 64) return 2;
    void *m = open_model(argv[0]);
    void *ctx = open_context(m, (uint32_t)(p + n + 16), (uint32_t)(p > 512 ? p : 512), t);
    void *mem = p_get_memory(ctx);
    int32_t *tok = malloc(sizeof(int32_t) * (size_t)(p > n ? p : n));
    if (!tok) return 1;
    int nv = p_vocab_n_tokens(p_model_get_vocab(m));
    for (int i = 0; i < (p > n ? p : n); i++) tok[i] = (int32_t)((i * 7919 + 13) % (nv > 1000 ? 1000 : nv));
    double pp[64], tg[64];
    /* warm-up, as llama-bench does */
    p_decode(ctx, p_batch_get_one(tok, p < 32 ? p : 32));
    p_memory_clear(mem, 1);
    for (int k = 0; k < r; k++) {
        p_memory_clear(mem, 1);
        double t0 = now_s();
        if (p_decode(ctx, p_batch_get_one(tok, p)) != 0) return 1;
        pp[k] = p / (now_s() - t0);
        p_memory_clear(mem, 1);
        t0 = now_s();
        for (int i = 0; i < n; i++)
            if (p_decode(ctx, p_batch_get_one(&tok[i], 1)) != 0) return 1;
        tg[k] = n / (now_s() - t0);
    }
    printf("{\"engine\":\"llama.cpp\",\"threads\":%d,\"prefill_tokens\":%d,\"decode_tokens\":%d,"
           "\"prefill_tok_s\":%.2f,\"decode_tok_s\":%.2f}\n",
           t, p, n, median(pp, r), median(tg, r));
    free(tok);
    p_free(ctx);
    p_model_free(m);
    return 0;
}

/* cur: the candidates from the last position's logits. */
static void fill_candidates(void *ctx, token_data_array *cur, token_data *buf, int nv) {
    const float *lg = p_get_logits_ith(ctx, -1);
    for (int i = 0; i < nv; i++) buf[i] = (token_data){.id = i, .logit = lg[i], .p = 0};
    *cur = (token_data_array){.data = buf, .size = (size_t)nv, .selected = -1, .sorted = false};
}

/* n tokens decoded after a short prompt, each drawn at temperature 1
 * (with the grammar when g is given); tok/s of the decode loop. */
static double grammar_run(void *m, const char *gbnf, int n, int t, uint32_t seed, int *bad) {
    void *ctx = open_context(m, (uint32_t)(n + 64), 512, t);
    const void *vocab = p_model_get_vocab(m);
    const int nv = p_vocab_n_tokens(vocab);
    token_data *buf = malloc(sizeof *buf * (size_t)nv);
    void *dist = p_sampler_init_dist(seed), *g = gbnf ? p_sampler_init_grammar(vocab, gbnf, "root") : NULL;
    if (!buf || !dist || (gbnf && !g)) {
        fprintf(stderr, "llamacpp_ref: cannot set up the samplers (a bad grammar?)\n");
        exit(1);
    }
    int32_t prompt[8] = {785, 1196, 374, 264, 1140, 315, 3847, 25};
    for (int i = 0; i < 8; i++) prompt[i] %= nv;
    if (p_decode(ctx, p_batch_get_one(prompt, 8)) != 0) exit(1);
    token_data_array cur;
    const double t0 = now_s();
    for (int i = 0; i < n; i++) {
        fill_candidates(ctx, &cur, buf, nv);
        p_sampler_apply(dist, &cur);
        int32_t tok = cur.data[cur.selected].id;
        if (g) {
            token_data one = {.id = tok, .logit = 1, .p = 0};
            token_data_array single = {.data = &one, .size = 1, .selected = -1, .sorted = false};
            p_sampler_apply(g, &single);
            if (one.logit == -INFINITY) { /* refused: mask every candidate, draw again */
                fill_candidates(ctx, &cur, buf, nv);
                p_sampler_apply(g, &cur);
                p_sampler_apply(dist, &cur);
                tok = cur.data[cur.selected].id;
                *bad += 1;
            }
            p_sampler_accept(g, tok);
        }
        p_sampler_accept(dist, tok);
        if (p_decode(ctx, p_batch_get_one(&tok, 1)) != 0) exit(1);
    }
    const double tps = n / (now_s() - t0);
    p_sampler_free(dist);
    if (g) p_sampler_free(g);
    free(buf);
    p_free(ctx);
    return tps;
}

static int cmd_grammar(int argc, char **argv) {
    if (argc < 2) return 2;
    int n = 128, t = 2, r = 3, seed = 1;
    for (int i = 2; i + 1 < argc; i += 2) {
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "-n")) n = v;
        else if (!strcmp(argv[i], "-t")) t = v;
        else if (!strcmp(argv[i], "-r")) r = v;
        else if (!strcmp(argv[i], "-s")) seed = v;
    }
    if (n < 1 || t < 1 || r < 1 || r > 64) return 2;
    FILE *f = fopen(argv[1], "rb");
    char *gbnf = calloc(1, 1 << 20);
    if (!f || !gbnf || fread(gbnf, 1, (1 << 20) - 1, f) == 0) {
        fprintf(stderr, "llamacpp_ref: cannot read %s\n", argv[1]);
        return 1;
    }
    fclose(f);
    void *m = open_model(argv[0]);
    double plain[64], constrained[64], ratio[64];
    int redraws = 0;
    grammar_run(m, NULL, 8, t, 1, &redraws); /* warm-up */
    for (int k = 0; k < r; k++) {
        plain[k] = grammar_run(m, NULL, n, t, (uint32_t)(seed + k), &redraws);
        constrained[k] = grammar_run(m, gbnf, n, t, (uint32_t)(seed + k), &redraws);
        ratio[k] = constrained[k] / plain[k];
    }
    printf("{\"engine\":\"llama.cpp\",\"threads\":%d,\"decode_tokens\":%d,\"plain_tok_s\":%.2f,"
           "\"grammar_tok_s\":%.2f,\"ratio\":%.3f,\"redraws_per_token\":%.3f}\n",
           t, n, median(plain, r), median(constrained, r), median(ratio, r), (double)redraws / (double)(n * r));
    free(gbnf);
    p_model_free(m);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: llamacpp_ref LIBDIR quantize|logits|greedy|bench|grammar ARGS...\n");
        return 2;
    }
    load_library(argv[1]);
    const char *cmd = argv[2];
    int rc = !strcmp(cmd, "quantize") ? cmd_quantize(argc - 3, argv + 3)
           : !strcmp(cmd, "logits")   ? cmd_logits(argc - 3, argv + 3, 0)
           : !strcmp(cmd, "greedy")   ? (argc < 6 ? 2 : cmd_logits(argc - 3, argv + 3, atoi(argv[5])))
           : !strcmp(cmd, "bench")    ? cmd_bench(argc - 3, argv + 3)
           : !strcmp(cmd, "grammar")  ? cmd_grammar(argc - 3, argv + 3)
                                      : 2;
    if (rc == 2) fprintf(stderr, "llamacpp_ref: bad arguments for %s\n", cmd);
    return rc;
}
