/* testmodel.c — writing random-weight test models (see testmodel.h). The
 * CLI (`wick make-test-model`) and the tests link it; libwick.a does not
 * hold it. */
#include "cli/testmodel.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fileio.h"
#include "core/tensor.h"
#include "format/gguf.h"
#include "format/safetensors.h"
#include "kernels/convert.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "text/tokenizer.h"

typedef struct shape_desc {
    const char *name;
    int n_embd, n_layer, n_head, n_head_kv, head_dim, head_dim_qk_norm, n_ff, n_ctx, n_vocab;
    float theta, eps;
    /* mixture-of-experts archs: experts, used per token, expert / shared widths (0 = no MoE form) */
    int n_expert, n_expert_used, n_ff_exp, n_ff_shexp;
    int tied; /* -1 = the arch's habit (Qwen ties), else 0/1 */
} shape_desc;

/* n_vocab 0 = the tokenizer's size. head_dim_qk_norm: head_dim for archs with
 * q/k norm (Qwen3 decouples head_dim from hidden / heads). The tiny shapes
 * give MoE archs 8 experts, 2 per token, so routing varies token by token. */
static const shape_desc SHAPES[] = {
    {"tiny", 64, 2, 4, 2, 16, 32, 128, 512, 0, 10000.0f, 1e-5f, 8, 2, 32, 64, -1},
    /* every row length a multiple of 256, for K-quant (Q6_K) tensors */
    {"tiny256", 256, 2, 4, 2, 64, 64, 512, 512, 0, 10000.0f, 1e-5f, 8, 2, 256, 512, -1},
    {"qwen2.5-0.5b", 896, 24, 14, 2, 64, 64, 4864, 32768, 151936, 1000000.0f, 1e-6f, 0, 0, 0, 0, -1},
    {"qwen3-0.6b", 1024, 28, 16, 8, 128, 128, 3072, 40960, 151936, 1000000.0f, 1e-6f, 0, 0, 0, 0, -1},
    /* Qwen3-30B-A3B's width (128 experts, top-8, expert width 768, untied
     * output) with 12 of its 48 layers, so Q4_0 (4.6 GB) and Q8_0 (8.6 GB) fit
     * a 24 GiB machine; the shared width is for qwen2moe only. */
    {"qwen3-moe", 2048, 12, 32, 4, 128, 128, 6144, 40960, 151936, 1000000.0f, 1e-6f, 128, 8, 768, 2048, 0},
};

const char *test_model_shapes(void) { return "tiny, tiny256, qwen2.5-0.5b, qwen3-0.6b, qwen3-moe"; }

/* What a test model of each arch turns on, so that even the tiny shapes
 * exercise every feature: multipliers other than 1, soft-caps that bite, a
 * sliding window shorter than the tests' prompts (small shapes; large ones
 * get the real window), local and global layers. */
typedef struct test_profile {
    const char *arch;
    int window, window_large;   /* sliding window (0 = none) */
    int min_layers;             /* Gemma 3: five local layers, a global one, one more local */
    bool decoupled_head_dim;    /* the shape's head_dim_qk_norm although the arch has no q/k norm (Gemma 2) */
    bool tied;
    float embd_mult, resid_mult, attn_mult, logits_scaling; /* Granite (0 = not written) */
    float attn_softcap, final_softcap;                      /* Gemma 2 */
    float rope_theta;           /* 0 = the shape's (Gemma 3: 1e6 globally, 1e4 locally) */
    const char *rope_scaling;   /* when --rope-scaling is not given */
    const char *hidden_act;
} test_profile;

static const test_profile PROFILES[] = {
    {.arch = "llama", .hidden_act = "silu"},
    {.arch = "mistral", .window = 16, .window_large = 4096, .hidden_act = "silu"},
    {.arch = "qwen2", .tied = true, .hidden_act = "silu"},
    {.arch = "qwen3", .tied = true, .hidden_act = "silu"},
    {.arch = "granite", .tied = true, .embd_mult = 3.0f, .resid_mult = 0.5f, .attn_mult = 0.15f, .logits_scaling = 2.5f,
     .hidden_act = "silu"},
    {.arch = "gemma2", .window = 16, .window_large = 4096, .decoupled_head_dim = true, .tied = true,
     .attn_softcap = 4.0f, .final_softcap = 20.0f, .hidden_act = "gelu_pytorch_tanh"},
    {.arch = "gemma3", .window = 16, .window_large = 1024, .min_layers = 7, .tied = true, .rope_theta = 1e6f,
     .rope_scaling = "linear", .hidden_act = "gelu_pytorch_tanh"},
    /* above the llama.cpp test's prompt (recent llama.cpp ignores Phi-3's window), below the reference test's */
    {.arch = "phi3", .window = 32, .window_large = 2047, .hidden_act = "silu"},
    {.arch = "qwen2moe", .hidden_act = "silu"},
    {.arch = "qwen3moe", .hidden_act = "silu"},
    {.arch = "mixtral", .hidden_act = "silu"},
};

static const test_profile *profile_of(const char *arch) {
    for (size_t i = 0; i < sizeof PROFILES / sizeof PROFILES[0]; i++)
        if (strcmp(PROFILES[i].arch, arch) == 0) return &PROFILES[i];
    return &PROFILES[0];
}

/* ---- deterministic values ---- */

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The stream of tensor (role, layer); an expert's tensors are role + 256 * (expert + 1). */
static uint64_t stream_start(uint64_t seed, int role, int layer) {
    return mix(seed ^ mix(((uint64_t)role << 32) | (uint64_t)(layer + 1)));
}

/* The next n floats of stream *s, uniform in [center - a, center + a). */
static void stream_floats(uint64_t *s, float *x, size_t n, float center, float a) {
    for (size_t i = 0; i < n; i++) {
        *s = mix(*s);
        x[i] = center + a * (float)((double)(*s >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    }
}

/* HF rotate-half row order -> interleaved (llama.cpp convert's permute):
 * within each head, row j*(hd/2) + i moves to 2i + j. */
static void permute_rows(float *w, int n_head, int head_dim, int cols) {
    size_t rows = (size_t)n_head * head_dim;
    float *tmp = malloc(rows * (size_t)cols * sizeof *tmp);
    if (!tmp) return;
    memcpy(tmp, w, rows * (size_t)cols * sizeof *tmp);
    int half = head_dim / 2;
    for (int h = 0; h < n_head; h++)
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < half; i++) {
                size_t src = (size_t)h * head_dim + (size_t)j * half + i;
                size_t dst = (size_t)h * head_dim + 2 * (size_t)i + j;
                memcpy(w + dst * cols, tmp + src * cols, (size_t)cols * sizeof *w);
            }
    free(tmp);
}

/* ---- writers behind one interface ---- */

typedef struct sink {
    bool gguf;
    gguf_writer *gw;
    st_writer *sw;
    int dtype;  /* for matrices */
    size_t total_bytes;
} sink;

typedef struct gen gen;

/* One tensor to write: its bytes are generated when the writer writes it
 * (tm_fill), so a model of many GB is written holding one tensor at a time. */
typedef struct tm_tensor {
    const gen *g;
    int role, layer, expert; /* expert -1 = not an expert's tensor */
    int n_stack;             /* > 0: a GGUF 3-D stack of this many experts' matrices */
    int rows, cols, type;
    float center, a;
    int permute_heads; /* > 0: q/k rows to llama.cpp's interleaved order, this many heads */
    bool matrix_1row;  /* a one-row matrix, not a vector (HF's shared_expert_gate [1, n_embd]) */
    bool minus_one;    /* values stored minus one (Gemma's HF norm weights: the model uses 1 + w) */
    int n_parts;       /* > 0: a fused projection (Phi-3), the rows of these roles' own streams stacked */
    int part_role[3], part_rows[3];
} tm_tensor;

struct gen {
    const test_model_params *p;
    const arch_desc *arch;
    const test_profile *prof;
    model_format fmt;
    hparams hp;
    sink k;
    int n_vocab;
    float *longrope; /* LongRoPE: short then long factors (rot_dim/2 each), NULL = none */
    tm_tensor **descs; /* every tensor added, freed after writing */
    size_t n_descs, cap_descs;
};

/* The first `rows` rows of role's stream, converted to the tensor's type. */
static int fill_rows(const tm_tensor *d, int role, int rows, char *out, wick_error *err) {
    const size_t row_bytes = dtype_row_bytes(d->type, d->cols);
    uint64_t s = stream_start(d->g->p->seed, role, d->layer);
    /* whole matrix when rows are permuted (q/k: small), else chunks of rows */
    const int chunk = d->permute_heads > 0 ? rows : rows < 256 ? rows : 256;
    float *x = malloc(sizeof(float) * (size_t)chunk * d->cols);
    if (!x) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory generating a tensor");
    for (int r0 = 0; r0 < rows; r0 += chunk) {
        const int n = rows - r0 < chunk ? rows - r0 : chunk;
        stream_floats(&s, x, (size_t)n * d->cols, d->center, d->a);
        if (d->permute_heads > 0 && rows == 1) /* a bias: its elements are the rows */
            permute_rows(x, d->permute_heads, d->cols / d->permute_heads, 1);
        else if (d->permute_heads > 0)
            permute_rows(x, d->permute_heads, rows / d->permute_heads, d->cols);
        if (d->minus_one)
            for (size_t i = 0; i < (size_t)n * d->cols; i++) x[i] -= 1.0f;
        for (int r = 0; r < n; r++)
            quantize_row(d->type, x + (size_t)r * d->cols, out + (size_t)(r0 + r) * row_bytes, d->cols);
    }
    free(x);
    return 0;
}

/* One matrix: its role's rows, or a fused projection's parts one after another. */
static int fill_matrix(const tm_tensor *d, int role, char *out, wick_error *err) {
    if (d->n_parts == 0) return fill_rows(d, role, d->rows, out, err);
    for (int i = 0; i < d->n_parts; i++) {
        if (fill_rows(d, d->part_role[i], d->part_rows[i], out, err) < 0) return -1;
        out += dtype_row_bytes(d->type, d->cols) * (size_t)d->part_rows[i];
    }
    return 0;
}

static int tm_fill(void *ctx, void *dst, size_t nbytes, wick_error *err) {
    const tm_tensor *d = ctx;
    const size_t one = dtype_row_bytes(d->type, d->cols) * (size_t)d->rows;
    const int n = d->n_stack > 0 ? d->n_stack : 1;
    if (one * (size_t)n != nbytes) return wick_fail(err, "test model: tensor size mismatch");
    for (int e = 0; e < n; e++) {
        const int expert = d->n_stack > 0 ? e : d->expert;
        const int role = expert >= 0 ? d->role + 256 * (expert + 1) : d->role;
        if (fill_matrix(d, role, (char *)dst + (size_t)e * one, err) < 0) return -1;
    }
    return 0;
}

/* Add a generated tensor named `name` (rows × cols, or n_stack of them). */
static int add_desc(gen *g, const char *name, const tm_tensor *proto, wick_error *err) {
    if (!dtype_row_bytes(proto->type, proto->cols))
        return wick_fail(err, "tensor %s: %d columns do not fit %s blocks", name, proto->cols, dtype_name(proto->type));
    if (!GROW_ARRAY(g->descs, g->n_descs + 1, &g->cap_descs)) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    tm_tensor *d = malloc(sizeof *d);
    if (!d) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    *d = *proto;
    d->g = g;
    g->descs[g->n_descs++] = d;
    const size_t bytes = dtype_row_bytes(d->type, d->cols) * (size_t)d->rows * (size_t)(d->n_stack > 0 ? d->n_stack : 1);
    int64_t ne[3] = {d->cols, d->rows, d->n_stack};
    const int n_dims = d->n_stack > 0 ? 3 : d->rows == 1 && !d->matrix_1row ? 1 : 2;
    g->k.total_bytes += bytes;
    return g->k.gguf ? gguf_add_tensor_deferred(g->k.gw, name, d->type, n_dims, ne, bytes, tm_fill, d, err)
                     : st_add_tensor_deferred(g->k.sw, name, d->type, n_dims, ne, bytes, tm_fill, d, err);
}

/* The type of a tensor: GGUF keeps vectors (and, as llama.cpp's quantizer
 * does, the router) in F32; HF stores everything in the dtype. */
static int tensor_type(const gen *g, bool matrix) {
    return matrix ? g->k.dtype : (g->fmt == FORMAT_GGUF ? WICK_F32 : g->k.dtype);
}

/* Generate one tensor by role and add it. Norm weights are generated as the
 * multiplier they apply; Gemma's HF files store it minus one (llama.cpp's
 * GGUF files store it as it is). */
static int add_role(gen *g, tensor_role role, int layer, int rows, int cols, float center, float a,
                    bool matrix, wick_error *err) {
    char name[128];
    if (!arch_tensor_name(g->arch, name, sizeof name, g->fmt, role, layer)) return 0;
    tm_tensor d = {.role = role, .layer = layer, .expert = -1, .rows = rows, .cols = cols,
                   .type = tensor_type(g, matrix), .center = center, .a = a,
                   .minus_one = g->fmt == FORMAT_HF && g->arch->hf_norm_plus_one && tensor_role_is_norm(role)};
    bool permute = g->fmt == FORMAT_GGUF && g->arch->rope_gguf == ROPE_INTERLEAVED;
    if (permute && (role == T_ATTN_Q || role == T_ATTN_Q_BIAS)) d.permute_heads = g->hp.n_head;
    if (permute && (role == T_ATTN_K || role == T_ATTN_K_BIAS)) d.permute_heads = g->hp.n_head_kv;
    return add_desc(g, name, &d, err);
}

/* A fused projection (Phi-3's attn_qkv, gate_up): the parts' own values
 * stacked by rows, so the same seed gives the same model as separate tensors. */
static int add_fused(gen *g, tensor_role fused, const tensor_role *parts, const int *rows, int n, int layer, int cols,
                     float a, wick_error *err) {
    char name[128];
    if (!arch_tensor_name(g->arch, name, sizeof name, g->fmt, fused, layer)) return 0;
    tm_tensor d = {.role = fused, .layer = layer, .expert = -1, .cols = cols, .type = tensor_type(g, true), .a = a,
                   .n_parts = n};
    for (int i = 0; i < n; i++) {
        d.part_role[i] = parts[i];
        d.part_rows[i] = rows[i];
        d.rows += rows[i];
    }
    return add_desc(g, name, &d, err);
}

/* A mixture-of-experts role: router (expert -1), one expert's matrix, a
 * GGUF stack (n_stack experts), the shared expert's. */
static int add_moe(gen *g, tensor_role role, int layer, int expert, int n_stack, tensor_role gen_role, int rows,
                   int cols, float center, float a, int type, wick_error *err) {
    char name[160];
    if (!moe_tensor_name(name, sizeof name, g->arch, g->fmt, role, layer, expert)) return 0;
    tm_tensor d = {.role = gen_role, .layer = layer, .expert = n_stack ? -1 : expert, .n_stack = n_stack,
                   .rows = rows, .cols = cols, .type = type, .center = center, .a = a,
                   .matrix_1row = role == T_FFN_GATE_INP_SHEXP && g->fmt == FORMAT_HF};
    return add_desc(g, name, &d, err);
}

static int add_moe_layer(gen *g, int il, wick_error *err) {
    const hparams *hp = &g->hp;
    const int D = hp->n_embd, E = hp->n_expert, F = hp->n_ff_exp, Fs = hp->n_ff_shexp;
    const float aD = sqrtf(3.0f / D), aF = sqrtf(3.0f / F);
    /* router logits of spread ~2, so the top-k really varies between tokens */
    if (add_moe(g, T_FFN_GATE_INP, il, 0, 0, T_FFN_GATE_INP, E, D, 0, 2.0f * aD, tensor_type(g, false), err) < 0)
        return -1;
    static const tensor_role STACK[3] = {T_FFN_GATE_EXPS, T_FFN_UP_EXPS, T_FFN_DOWN_EXPS};
    static const tensor_role ONE[3] = {T_FFN_GATE_EXP, T_FFN_UP_EXP, T_FFN_DOWN_EXP};
    const int rows[3] = {F, F, D}, cols[3] = {D, D, F};
    const float amp[3] = {aD, aD, aF};
    const bool stacked = g->fmt == FORMAT_GGUF && !g->p->split_experts;
    for (int i = 0; i < 3; i++) {
        if (stacked) {
            if (add_moe(g, STACK[i], il, 0, E, ONE[i], rows[i], cols[i], 0, amp[i], g->k.dtype, err) < 0) return -1;
        } else {
            for (int e = 0; e < E; e++)
                if (add_moe(g, ONE[i], il, e, 0, ONE[i], rows[i], cols[i], 0, amp[i], g->k.dtype, err) < 0) return -1;
        }
    }
    if (!g->arch->moe->shared_expert) return 0;
    const float aFs = sqrtf(3.0f / Fs);
    if (add_moe(g, T_FFN_GATE_INP_SHEXP, il, 0, 0, T_FFN_GATE_INP_SHEXP, 1, D, 0, aD, tensor_type(g, false), err) < 0 ||
        add_moe(g, T_FFN_GATE_SHEXP, il, 0, 0, T_FFN_GATE_SHEXP, Fs, D, 0, aD, g->k.dtype, err) < 0 ||
        add_moe(g, T_FFN_UP_SHEXP, il, 0, 0, T_FFN_UP_SHEXP, Fs, D, 0, aD, g->k.dtype, err) < 0 ||
        add_moe(g, T_FFN_DOWN_SHEXP, il, 0, 0, T_FFN_DOWN_SHEXP, D, Fs, 0, aFs, g->k.dtype, err) < 0)
        return -1;
    return 0;
}

static int add_weights(gen *g, wick_error *err) {
    const hparams *hp = &g->hp;
    int D = hp->n_embd, F = hp->n_ff, qd = hp->n_head * hp->head_dim, kvd = hp->n_head_kv * hp->head_dim;
    if (add_role(g, T_TOK_EMBD, 0, g->n_vocab, D, 0, 1.0f, true, err) < 0) return -1;
    for (int il = 0; il < hp->n_layer; il++) {
        float aD = sqrtf(3.0f / D), aQ = sqrtf(3.0f / qd), aF = sqrtf(3.0f / F);
        static const tensor_role QKV[3] = {T_ATTN_Q, T_ATTN_K, T_ATTN_V}, GU[2] = {T_FFN_GATE, T_FFN_UP};
        const int qkv_rows[3] = {qd, kvd, kvd}, gu_rows[2] = {F, F};
        if (add_role(g, T_ATTN_NORM, il, 1, D, 1.0f, 0.2f, false, err) < 0 ||
            (g->arch->fused_qkv ? add_fused(g, T_ATTN_QKV, QKV, qkv_rows, 3, il, D, aD, err) < 0
                                : (add_role(g, T_ATTN_Q, il, qd, D, 0, aD, true, err) < 0 ||
                                   add_role(g, T_ATTN_K, il, kvd, D, 0, aD, true, err) < 0 ||
                                   add_role(g, T_ATTN_V, il, kvd, D, 0, aD, true, err) < 0)) ||
            add_role(g, T_ATTN_O, il, D, qd, 0, aQ, true, err) < 0 ||
            add_role(g, T_FFN_NORM, il, 1, D, 1.0f, 0.2f, false, err) < 0)
            return -1;
        if (hparams_layer_is_moe(hp, il)) {
            if (add_moe_layer(g, il, err) < 0) return -1;
        } else if ((g->arch->fused_gate_up ? add_fused(g, T_FFN_GATE_UP, GU, gu_rows, 2, il, D, aD, err) < 0
                                           : (add_role(g, T_FFN_GATE, il, F, D, 0, aD, true, err) < 0 ||
                                              add_role(g, T_FFN_UP, il, F, D, 0, aD, true, err) < 0)) ||
                   add_role(g, T_FFN_DOWN, il, D, F, 0, aF, true, err) < 0) {
            return -1;
        }
        if (g->arch->post_norms &&
            (add_role(g, T_ATTN_POST_NORM, il, 1, D, 1.0f, 0.2f, false, err) < 0 ||
             add_role(g, T_FFN_POST_NORM, il, 1, D, 1.0f, 0.2f, false, err) < 0))
            return -1;
        if (g->arch->qkv_bias &&
            (add_role(g, T_ATTN_Q_BIAS, il, 1, qd, 0, 0.5f, false, err) < 0 ||
             add_role(g, T_ATTN_K_BIAS, il, 1, kvd, 0, 0.5f, false, err) < 0 ||
             add_role(g, T_ATTN_V_BIAS, il, 1, kvd, 0, 0.5f, false, err) < 0))
            return -1;
        if (g->arch->qk_norm &&
            (add_role(g, T_ATTN_Q_NORM, il, 1, hp->head_dim, 1.0f, 0.2f, false, err) < 0 ||
             add_role(g, T_ATTN_K_NORM, il, 1, hp->head_dim, 1.0f, 0.2f, false, err) < 0))
            return -1;
    }
    if (add_role(g, T_OUTPUT_NORM, 0, 1, D, 1.0f, 0.2f, false, err) < 0) return -1;
    if (!hp->tied && add_role(g, T_OUTPUT, 0, g->n_vocab, D, 0, sqrtf(3.0f / D) * 4.0f, true, err) < 0)
        return -1;
    return 0;
}

/* llama.cpp stores Llama-3 RoPE scaling as per-frequency divisors. */
static int add_rope_freqs(gen *g, wick_error *err) {
    int half = g->hp.rot_dim / 2;
    float *base = malloc((size_t)half * sizeof *base), *scaled = malloc((size_t)half * sizeof *scaled);
    if (!base || !scaled) {
        free(base);
        free(scaled);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    hparams plain = g->hp;
    plain.rope_scaling = ROPE_SCALING_NONE;
    hparams_rope_inv_freq(&plain, NULL, base);
    hparams_rope_inv_freq(&g->hp, NULL, scaled);
    for (int i = 0; i < half; i++) scaled[i] = base[i] / scaled[i];
    int64_t ne[1] = {half};
    int rc = gguf_add_tensor(g->k.gw, "rope_freqs.weight", WICK_F32, 1, ne, scaled, (size_t)half * 4, err);
    free(base);
    free(scaled);
    return rc;
}

static void gguf_hparams(gen *g, const tokenizer *tok) {
    gguf_writer *w = g->k.gw;
    const hparams *hp = &g->hp;
    const char *a = g->arch->gguf_arch;
    char key[128];
#define KEY(s) (snprintf(key, sizeof key, "%s.%s", a, s), key)
    gguf_set_str(w, "general.architecture", a);
    gguf_set_str(w, "general.name", "wick test model");
    gguf_set_u32(w, "general.alignment", 32);
    gguf_set_u32(w, KEY("context_length"), (uint32_t)hp->n_ctx_train);
    gguf_set_u32(w, KEY("embedding_length"), (uint32_t)hp->n_embd);
    gguf_set_u32(w, KEY("block_count"), (uint32_t)hp->n_layer);
    gguf_set_u32(w, KEY("feed_forward_length"), (uint32_t)hp->n_ff);
    gguf_set_u32(w, KEY("attention.head_count"), (uint32_t)hp->n_head);
    gguf_set_u32(w, KEY("attention.head_count_kv"), (uint32_t)hp->n_head_kv);
    gguf_set_u32(w, KEY("attention.key_length"), (uint32_t)hp->head_dim);
    gguf_set_u32(w, KEY("attention.value_length"), (uint32_t)hp->head_dim);
    gguf_set_f32(w, KEY("attention.layer_norm_rms_epsilon"), hp->rms_eps);
    gguf_set_f32(w, KEY("rope.freq_base"), hp->rope_theta);
    gguf_set_u32(w, KEY("rope.dimension_count"), (uint32_t)hp->rot_dim);
    gguf_set_u32(w, KEY("vocab_size"), (uint32_t)g->n_vocab);
    if (hp->sliding_window) gguf_set_u32(w, KEY("attention.sliding_window"), (uint32_t)hp->sliding_window);
    if (hp->n_expert > 0) { /* as llama.cpp's converters write them */
        gguf_set_u32(w, KEY("expert_count"), (uint32_t)hp->n_expert);
        gguf_set_u32(w, KEY("expert_used_count"), (uint32_t)hp->n_expert_used);
        if (g->arch->moe->hf_ff_key) gguf_set_u32(w, KEY("expert_feed_forward_length"), (uint32_t)hp->n_ff_exp);
        if (g->arch->moe->shared_expert)
            gguf_set_u32(w, KEY("expert_shared_feed_forward_length"), (uint32_t)hp->n_ff_shexp);
    }
    if (hp->rope_scaling == ROPE_SCALING_LINEAR) {
        gguf_set_str(w, KEY("rope.scaling.type"), "linear");
        gguf_set_f32(w, KEY("rope.scaling.factor"), hp->rope_factor);
    }
    /* llama.cpp's names for the features (convert_hf_to_gguf.py) */
    const test_profile *pr = g->prof;
    if (pr->embd_mult) gguf_set_f32(w, KEY("embedding_scale"), pr->embd_mult);
    if (pr->resid_mult) gguf_set_f32(w, KEY("residual_scale"), pr->resid_mult);
    if (pr->attn_mult) gguf_set_f32(w, KEY("attention.scale"), pr->attn_mult);
    if (pr->logits_scaling) gguf_set_f32(w, KEY("logit_scale"), pr->logits_scaling);
    if (pr->attn_softcap) gguf_set_f32(w, KEY("attn_logit_softcapping"), pr->attn_softcap);
    if (pr->final_softcap) gguf_set_f32(w, KEY("final_logit_softcapping"), pr->final_softcap);
    if (hp->rope_scaling == ROPE_SCALING_LONGROPE) {
        gguf_set_f32(w, KEY("rope.scaling.attn_factor"), hp->rope_attn_factor);
        gguf_set_u32(w, KEY("rope.scaling.original_context_length"), (uint32_t)hp->rope_orig_ctx);
    }
#undef KEY
    (void)tok;
}

/* LongRoPE's factors: short ones near 1, long ones growing with the
 * wavelength (as Phi-3's do); llama.cpp keeps them as two F32 tensors. */
static int make_longrope(gen *g, wick_error *err) {
    const int half = g->hp.rot_dim / 2;
    if (!(g->longrope = malloc(2 * (size_t)half * sizeof *g->longrope))) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    for (int i = 0; i < half; i++) {
        g->longrope[i] = 1.0f + 0.05f * (float)i;
        g->longrope[half + i] = 1.0f + 2.5f * (float)i * (float)i / (float)half;
    }
    if (g->fmt != FORMAT_GGUF) return 0;
    int64_t ne[1] = {half};
    if (gguf_add_tensor(g->k.gw, "rope_factors_short.weight", WICK_F32, 1, ne, g->longrope, (size_t)half * 4, err) < 0)
        return -1;
    return gguf_add_tensor(g->k.gw, "rope_factors_long.weight", WICK_F32, 1, ne, g->longrope + half, (size_t)half * 4, err);
}

static cJSON *hf_config(const gen *g, const tokenizer *tok) {
    const hparams *hp = &g->hp;
    cJSON *c = cJSON_CreateObject();
    cJSON *archs = cJSON_AddArrayToObject(c, "architectures");
    cJSON_AddItemToArray(archs, cJSON_CreateString(g->arch->hf_class));
    cJSON_AddStringToObject(c, "model_type", g->arch->hf_model_types[0]);
    cJSON_AddNumberToObject(c, "hidden_size", hp->n_embd);
    cJSON_AddNumberToObject(c, "intermediate_size", hp->n_ff);
    cJSON_AddNumberToObject(c, "num_hidden_layers", hp->n_layer);
    cJSON_AddNumberToObject(c, "num_attention_heads", hp->n_head);
    cJSON_AddNumberToObject(c, "num_key_value_heads", hp->n_head_kv);
    cJSON_AddNumberToObject(c, "head_dim", hp->head_dim);
    cJSON_AddNumberToObject(c, "max_position_embeddings", hp->n_ctx_train);
    cJSON_AddNumberToObject(c, "rms_norm_eps", hp->rms_eps);
    cJSON_AddNumberToObject(c, "rope_theta", hp->rope_theta);
    cJSON_AddNumberToObject(c, "vocab_size", g->n_vocab);
    cJSON_AddBoolToObject(c, "tie_word_embeddings", hp->tied);
    if (hp->sliding_window) cJSON_AddNumberToObject(c, "sliding_window", hp->sliding_window);
    if (hp->n_expert > 0) {
        const moe_desc *md = g->arch->moe;
        cJSON_AddNumberToObject(c, md->hf_count_key, hp->n_expert);
        cJSON_AddNumberToObject(c, "num_experts_per_tok", hp->n_expert_used);
        if (md->hf_ff_key) {
            cJSON_AddNumberToObject(c, md->hf_ff_key, hp->n_ff_exp);
            cJSON_AddNumberToObject(c, "decoder_sparse_step", 1);
            cJSON *only = cJSON_AddArrayToObject(c, "mlp_only_layers");
            for (int il = 0; il < hp->n_layer; il++)
                if (!hparams_layer_is_moe(hp, il)) cJSON_AddItemToArray(only, cJSON_CreateNumber(il));
            cJSON_AddBoolToObject(c, "norm_topk_prob", hp->moe_norm_topk == 1);
        }
        if (md->shared_expert) cJSON_AddNumberToObject(c, "shared_expert_intermediate_size", hp->n_ff_shexp);
    }
    cJSON_AddStringToObject(c, g->arch->act == FFN_GELU_TANH ? "hidden_activation" : "hidden_act", g->prof->hidden_act);
    /* HF's names for the features */
    const test_profile *pr = g->prof;
    if (pr->embd_mult) cJSON_AddNumberToObject(c, "embedding_multiplier", pr->embd_mult);
    if (pr->resid_mult) cJSON_AddNumberToObject(c, "residual_multiplier", pr->resid_mult);
    if (pr->attn_mult) cJSON_AddNumberToObject(c, "attention_multiplier", pr->attn_mult);
    if (pr->logits_scaling) cJSON_AddNumberToObject(c, "logits_scaling", pr->logits_scaling);
    if (g->arch->post_norms) { /* Gemma */
        cJSON_AddNumberToObject(c, "query_pre_attn_scalar", hp->head_dim);
        if (pr->attn_softcap) cJSON_AddNumberToObject(c, "attn_logit_softcapping", pr->attn_softcap);
        else cJSON_AddNullToObject(c, "attn_logit_softcapping");
        if (pr->final_softcap) cJSON_AddNumberToObject(c, "final_logit_softcapping", pr->final_softcap);
        else cJSON_AddNullToObject(c, "final_logit_softcapping");
    }
    if (g->arch->rope_theta_local > 0) {
        cJSON_AddNumberToObject(c, "rope_local_base_freq", g->arch->rope_theta_local);
        cJSON_AddNumberToObject(c, "sliding_window_pattern", g->arch->swa_period);
    }
    cJSON_AddStringToObject(c, "torch_dtype", g->k.dtype == WICK_F32 ? "float32" : g->k.dtype == WICK_F16 ? "float16" : "bfloat16");
    if (tok_bos(tok) >= 0) cJSON_AddNumberToObject(c, "bos_token_id", tok_bos(tok));
    if (tok_eos(tok) >= 0) cJSON_AddNumberToObject(c, "eos_token_id", tok_eos(tok));
    if (hp->rope_scaling == ROPE_SCALING_LONGROPE) {
        const int half = hp->rot_dim / 2;
        cJSON_AddNumberToObject(c, "original_max_position_embeddings", hp->rope_orig_ctx);
        cJSON *rs = cJSON_AddObjectToObject(c, "rope_scaling");
        cJSON_AddStringToObject(rs, "type", "longrope");
        cJSON_AddItemToObject(rs, "short_factor", cJSON_CreateFloatArray(g->longrope, half));
        cJSON_AddItemToObject(rs, "long_factor", cJSON_CreateFloatArray(g->longrope + half, half));
    } else if (hp->rope_scaling != ROPE_SCALING_NONE) {
        cJSON *rs = cJSON_AddObjectToObject(c, "rope_scaling");
        cJSON_AddStringToObject(rs, "rope_type", rope_scaling_name(hp->rope_scaling));
        cJSON_AddNumberToObject(rs, "factor", hp->rope_factor);
        if (hp->rope_scaling == ROPE_SCALING_LLAMA3) {
            cJSON_AddNumberToObject(rs, "low_freq_factor", hp->rope_low_freq_factor);
            cJSON_AddNumberToObject(rs, "high_freq_factor", hp->rope_high_freq_factor);
            cJSON_AddNumberToObject(rs, "original_max_position_embeddings", hp->rope_orig_ctx);
        }
    }
    return c;
}

static int write_json(const char *dir, const char *name, cJSON *j, wick_error *err) {
    char path[4096];
    if (path_join(path, sizeof path, dir, name) < 0) return wick_fail(err, "path too long: %s", dir);
    char *text = cJSON_Print(j);
    FILE *f = fopen(path, "wb");
    int rc = 0;
    if (!text || !f || fputs(text, f) < 0 || fputc('\n', f) < 0) rc = wick_fail(err, "cannot write %s: %s", path, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0) rc = wick_fail(err, "cannot write %s: %s", path, strerror(errno));
    free(text);
    return rc;
}

static int copy_file(const char *src_dir, const char *dst_dir, const char *name, wick_error *err) {
    char src[4096], dst[4096];
    if (path_join(src, sizeof src, src_dir, name) < 0 || path_join(dst, sizeof dst, dst_dir, name) < 0)
        return wick_fail(err, "path too long");
    if (!file_exists(src)) return 0;
    size_t len;
    char *data = file_read_all(src, &len, err);
    if (!data) return -1;
    FILE *f = fopen(dst, "wb");
    int rc = 0;
    if (!f || fwrite(data, 1, len, f) != len) rc = wick_fail(err, "cannot write %s: %s", dst, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0) rc = wick_fail(err, "cannot write %s", dst);
    free(data);
    return rc;
}

static int write_hf(gen *g, const tokenizer *tok, wick_error *err) {
    const char *dir = g->p->out;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return wick_fail(err, "cannot create %s: %s", dir, strerror(errno));
    cJSON *cfg = hf_config(g, tok);
    int rc = write_json(dir, "config.json", cfg, err);
    cJSON_Delete(cfg);
    if (rc < 0) return -1;
    cJSON *gc = cJSON_CreateObject();
    if (tok_bos(tok) >= 0) cJSON_AddNumberToObject(gc, "bos_token_id", tok_bos(tok));
    if (tok_eos(tok) >= 0) cJSON_AddNumberToObject(gc, "eos_token_id", tok_eos(tok));
    rc = write_json(dir, "generation_config.json", gc, err);
    cJSON_Delete(gc);
    if (rc < 0) return -1;
    if (g->p->tokenizer_dir) {
        static const char *const FILES[] = {"tokenizer.json", "tokenizer_config.json", "vocab.json", "merges.txt"};
        for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++)
            if (copy_file(g->p->tokenizer_dir, dir, FILES[i], err) < 0) return -1;
    } else if (tok_write_hf(tok, dir, err) < 0) {
        return -1;
    }
    const size_t shard = (size_t)1 << 30;
    if (g->k.total_bytes > shard) return st_write_sharded(g->k.sw, dir, shard, err);
    char path[4096];
    if (path_join(path, sizeof path, dir, "model.safetensors") < 0) return wick_fail(err, "path too long");
    return st_write(g->k.sw, path, err);
}

static int setup(gen *g, const test_model_params *p, const tokenizer *tok, wick_error *err) {
    g->p = p;
    g->arch = arch_by_name(p->arch ? p->arch : "");
    if (!g->arch) return wick_fail(err, "unknown architecture \"%s\"; choose one of %s", p->arch ? p->arch : "", arch_list());
    if (!p->format || (strcmp(p->format, "gguf") != 0 && strcmp(p->format, "hf") != 0))
        return wick_fail(err, "unknown format \"%s\"; choose gguf or hf", p->format ? p->format : "");
    g->fmt = strcmp(p->format, "gguf") == 0 ? FORMAT_GGUF : FORMAT_HF;
    const shape_desc *sh = NULL;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (strcmp(SHAPES[i].name, p->shape ? p->shape : "tiny") == 0) sh = &SHAPES[i];
    if (!sh) return wick_fail(err, "unknown shape \"%s\"; choose one of %s", p->shape, test_model_shapes());
    int dt = dtype_from_name(p->dtype ? p->dtype : "f32");
    if (dt < 0 || !dtype_supported(dt) || !quantize_row_supported(dt)) return wick_fail(err, "unknown dtype \"%s\"; choose one of %s", p->dtype, quantize_row_type_names());
    if (g->fmt == FORMAT_HF && dt != WICK_F32 && dt != WICK_F16 && dt != WICK_BF16)
        return wick_fail(err, "safetensors holds f32, f16 or bf16, not %s (use --format gguf)", p->dtype);
    g->k.gguf = g->fmt == FORMAT_GGUF;
    g->k.dtype = dt;

    const test_profile *pr = g->prof = profile_of(g->arch->name);
    hparams *hp = &g->hp;
    memset(hp, 0, sizeof *hp);
    hp->n_embd = sh->n_embd;
    hp->n_layer = sh->n_layer < pr->min_layers ? pr->min_layers : sh->n_layer;
    hp->n_head = sh->n_head;
    hp->n_head_kv = sh->n_head_kv;
    hp->head_dim = g->arch->qk_norm || pr->decoupled_head_dim ? sh->head_dim_qk_norm : sh->head_dim;
    hp->rot_dim = hp->head_dim;
    hp->n_ff = sh->n_ff;
    hp->n_ctx_train = sh->n_ctx;
    hp->rope_theta = pr->rope_theta ? pr->rope_theta : sh->theta;
    hp->rms_eps = sh->eps;
    hp->rope_factor = 1.0f;
    hp->rope_attn_factor = 1.0f;
    /* A sliding window small enough that tiny test prompts cross it. */
    hp->sliding_window = sh->n_ctx < 8192 ? pr->window : pr->window_large;
    /* Qwen, Granite and Gemma models tie the output to the embedding; Llama/Mistral/Phi-3 and the MoE models do not. */
    hp->tied = sh->tied >= 0 ? sh->tied != 0 : pr->tied;
    if (g->arch->moe) {
        if (!sh->n_expert) return wick_fail(err, "shape %s has no mixture-of-experts form (tiny, tiny256, qwen3-moe do)", sh->name);
        hp->n_expert = sh->n_expert;
        hp->n_expert_used = sh->n_expert_used;
        hp->n_ff_exp = sh->n_ff_exp;
        hp->n_ff_shexp = g->arch->moe->shared_expert ? sh->n_ff_shexp : 0;
        hp->moe_step = 1;
        /* the GGUF form's routing, written into HF configs as norm_topk_prob */
        hp->moe_norm_topk = g->arch->moe->norm_topk_gguf;
        if (!g->arch->moe->hf_ff_key) hp->n_ff = hp->n_ff_exp; /* Mixtral: intermediate_size is the experts' */
    }
    if (p->mlp_only_layers && *p->mlp_only_layers) {
        if (!g->arch->moe || !g->arch->moe->hf_ff_key || g->fmt != FORMAT_HF)
            return wick_fail(err, "--mlp-only-layers needs an HF qwen2moe/qwen3moe model (GGUF has no dense layers in a MoE model)");
        for (const char *c = p->mlp_only_layers; *c;) {
            char *end;
            long il = strtol(c, &end, 10);
            if (end == c || il < 0 || il >= hp->n_layer || (*end && *end != ','))
                return wick_fail(err, "--mlp-only-layers: \"%s\" is not a list of layers below %d", p->mlp_only_layers, hp->n_layer);
            hp->moe_dense[il / 64] |= (uint64_t)1 << (il % 64);
            c = *end ? end + 1 : end;
        }
    }
    const char *rs = p->rope_scaling ? p->rope_scaling : pr->rope_scaling ? pr->rope_scaling : "none";
    if (strcmp(rs, "linear") == 0) {
        hp->rope_scaling = ROPE_SCALING_LINEAR;
        hp->rope_factor = 2.0f;
    } else if (strcmp(rs, "llama3") == 0) {
        /* Small original context so tiny models exercise all three bands. */
        hp->rope_scaling = ROPE_SCALING_LLAMA3;
        hp->rope_factor = 8.0f;
        hp->rope_low_freq_factor = 1.0f;
        hp->rope_high_freq_factor = 4.0f;
        hp->rope_orig_ctx = sh->n_ctx < 8192 ? 64 : 8192;
    } else if (strcmp(rs, "longrope") == 0) {
        if (!g->arch->fused_qkv) return wick_fail(err, "--rope-scaling longrope is for phi3");
        /* An original context the tests' prompts pass (HF then uses the
         * long factors, as does a context longer than it in wick and llama.cpp). */
        hp->rope_scaling = ROPE_SCALING_LONGROPE;
        hp->rope_orig_ctx = sh->n_ctx < 8192 ? 32 : 4096;
        const double s = (double)hp->n_ctx_train / hp->rope_orig_ctx;
        hp->rope_attn_factor = (float)sqrt(1.0 + log(s) / log((double)hp->rope_orig_ctx));
    } else if (strcmp(rs, "none") != 0) {
        return wick_fail(err, "unknown rope scaling \"%s\"; choose none, linear, llama3 or longrope (phi3)", rs);
    }
    g->n_vocab = sh->n_vocab ? sh->n_vocab : tok_n_vocab(tok);
    if (g->n_vocab < tok_n_vocab(tok))
        return wick_fail(err, "tokenizer has %d tokens, more than the %s shape's vocabulary of %d",
                         tok_n_vocab(tok), sh->name, g->n_vocab);
    return 0;
}

int make_test_model(const test_model_params *p, wick_error *err) {
    if (!p->out || !*p->out) return wick_fail(err, "no output path given (--out)");
    tokenizer *tok = p->tokenizer_dir ? tok_load_hf_dir(p->tokenizer_dir, err) : tok_make_synthetic(253, err);
    if (!tok) return -1;
    gen g;
    memset(&g, 0, sizeof g);
    int rc = setup(&g, p, tok, err);
    if (rc == 0) {
        if (g.fmt == FORMAT_GGUF) {
            g.k.gw = gguf_writer_new();
            gguf_hparams(&g, tok);
            rc = tok_write_gguf(tok, g.n_vocab, g.k.gw, err);
            if (rc == 0 && g.hp.rope_scaling == ROPE_SCALING_LLAMA3) rc = add_rope_freqs(&g, err);
        } else {
            g.k.sw = st_writer_new();
        }
        if (rc == 0 && g.hp.rope_scaling == ROPE_SCALING_LONGROPE) rc = make_longrope(&g, err);
    }
    if (rc == 0) rc = add_weights(&g, err);
    if (rc == 0) rc = g.fmt == FORMAT_GGUF ? gguf_write(g.k.gw, p->out, err) : write_hf(&g, tok, err);
    if (g.k.gw) gguf_writer_free(g.k.gw);
    if (g.k.sw) st_writer_free(g.k.sw);
    free(g.longrope);
    for (size_t i = 0; i < g.n_descs; i++) free(g.descs[i]);
    free(g.descs);
    tok_free(tok);
    return rc;
}
