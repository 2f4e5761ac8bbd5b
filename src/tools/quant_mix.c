/* quant_mix.c — owns llama-quantize's mixes and its per-tensor type rules
 * (llama.cpp src/llama-quant.cpp, llama_tensor_get_type, in the versions
 * tests/quantize_llamacpp.test.sh runs against), kept as tables:
 *   MIXES   every file type wick writes: name, llama_ftype, base type;
 *   KINDS   a tensor's role from its name, matched as llama.cpp does (by
 *           substring, in its order, so MoE tensors such as ffn_down_exps
 *           count as ffn_down, and a fused attn_qkv as attn_v);
 *   RULES   per mix and role, the first rule whose condition holds gives the
 *           type (none: the base type);
 *   ALWAYS  adjustments for every mix, applied after (70B-class attn_v, the
 *           8-expert models' attn_v / attn_k).
 * The output matrix (and token_embd when the model has no output.weight)
 * gets Q6_K (Q8_0 stays Q8_0; Q8_0 where the base type's block does not
 * divide its rows). Layer conditions use the layer number of the name
 * (blk.N.): "more bits" is llama.cpp's use_more_bits, the first and last
 * eighth of the layers and every third one between. Rules for architectures
 * wick does not run (Falcon) and for the importance-matrix types (IQ1-IQ3)
 * are left out. */
#include "tools/quant_mix.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/tensor.h"

/* llama_ftype values (llama.h) */
enum {
    FT_F32 = 0, FT_F16 = 1, FT_Q4_0 = 2, FT_Q4_1 = 3, FT_Q8_0 = 7, FT_Q5_0 = 8, FT_Q5_1 = 9, FT_Q2_K = 10,
    FT_Q3_K_S = 11, FT_Q3_K_M = 12, FT_Q3_K_L = 13, FT_Q4_K_S = 14, FT_Q4_K_M = 15, FT_Q5_K_S = 16,
    FT_Q5_K_M = 17, FT_Q6_K = 18, FT_Q2_K_S = 21, FT_IQ4_NL = 25, FT_IQ4_XS = 30, FT_BF16 = 32,
};

static const quant_mix MIXES[] = {
    {"Q2_K", FT_Q2_K, WICK_Q2_K},       {"Q2_K_S", FT_Q2_K_S, WICK_Q2_K},   {"Q3_K_S", FT_Q3_K_S, WICK_Q3_K},
    {"Q3_K_M", FT_Q3_K_M, WICK_Q3_K},   {"Q3_K_L", FT_Q3_K_L, WICK_Q3_K},   {"Q4_K_S", FT_Q4_K_S, WICK_Q4_K},
    {"Q4_K_M", FT_Q4_K_M, WICK_Q4_K},   {"Q5_K_S", FT_Q5_K_S, WICK_Q5_K},   {"Q5_K_M", FT_Q5_K_M, WICK_Q5_K},
    {"Q6_K", FT_Q6_K, WICK_Q6_K},       {"IQ4_NL", FT_IQ4_NL, WICK_IQ4_NL}, {"IQ4_XS", FT_IQ4_XS, WICK_IQ4_XS},
    {"Q4_0", FT_Q4_0, WICK_Q4_0},       {"Q4_1", FT_Q4_1, WICK_Q4_1},       {"Q5_0", FT_Q5_0, WICK_Q5_0},
    {"Q5_1", FT_Q5_1, WICK_Q5_1},       {"Q8_0", FT_Q8_0, WICK_Q8_0},       {"F16", FT_F16, WICK_F16},
    {"BF16", FT_BF16, WICK_BF16},       {"F32", FT_F32, WICK_F32},
};
#define N_MIXES (sizeof MIXES / sizeof MIXES[0])

/* llama-quantize's short names for the _M mixes */
static const struct {
    const char *alias, *mix;
} ALIASES[] = {{"Q3_K", "Q3_K_M"}, {"Q4_K", "Q4_K_M"}, {"Q5_K", "Q5_K_M"}};

const quant_mix *quant_mix_find(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof ALIASES / sizeof ALIASES[0]; i++)
        if (strcasecmp(name, ALIASES[i].alias) == 0) name = ALIASES[i].mix;
    for (size_t i = 0; i < N_MIXES; i++)
        if (strcasecmp(name, MIXES[i].name) == 0) return &MIXES[i];
    return NULL;
}

const char *quant_mix_names(void) {
    return "Q2_K, Q2_K_S, Q3_K_S, Q3_K_M (Q3_K), Q3_K_L, Q4_K_S, Q4_K_M (Q4_K), Q5_K_S, Q5_K_M (Q5_K), Q6_K, "
           "IQ4_NL, IQ4_XS, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, F16, BF16, F32";
}

/* ---- which tensors are matrices to quantize ---- */

/* Names (substrings) llama-quantize never changes although they are 2-D weights. */
static const char *const KEEP[] = {
    "_norm.weight", "ffn_gate_inp.weight", "position_embd.weight", "token_types.weight", "ssm_conv1d.weight",
    "time_mix_first.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight", "attn_rel_b.weight",
};

bool quant_tensor_is_matrix(const char *name, int n_dims) {
    const size_t len = strlen(name);
    if (n_dims < 2 || len < 6 || strcmp(name + len - 6, "weight") != 0) return false;
    for (size_t i = 0; i < sizeof KEEP / sizeof KEEP[0]; i++)
        if (strstr(name, KEEP[i])) return false;
    return true;
}

/* ---- roles ---- */

typedef enum qkind {
    Q_OTHER, Q_OUTPUT, Q_TOKEN_EMBD, Q_ATTN_V, Q_ATTN_K, Q_ATTN_Q, Q_FFN_DOWN, Q_ATTN_OUTPUT, Q_FFN_GATE, Q_FFN_UP,
} qkind;

/* Fused attn_qkv (and MLA's attn_kv_b) take attn_v's rules, as in llama.cpp. */
static const struct {
    const char *sub;
    qkind kind;
} KINDS[] = {
    {"attn_qkv.weight", Q_ATTN_V},   {"attn_kv_b.weight", Q_ATTN_V},        {"attn_v.weight", Q_ATTN_V},
    {"attn_k.weight", Q_ATTN_K},     {"attn_q.weight", Q_ATTN_Q},           {"attn_output.weight", Q_ATTN_OUTPUT},
    {"ffn_up", Q_FFN_UP},            {"ffn_gate", Q_FFN_GATE},              {"ffn_down", Q_FFN_DOWN},
};

static bool is_token_embd(const char *name) {
    return strcmp(name, "token_embd.weight") == 0 || strcmp(name, "per_layer_token_embd.weight") == 0;
}

static qkind kind_of(const quant_model *m, const char *name) {
    if (strcmp(name, "output.weight") == 0) return Q_OUTPUT;
    if (is_token_embd(name)) return m->has_output ? Q_TOKEN_EMBD : Q_OUTPUT;
    for (size_t i = 0; i < sizeof KINDS / sizeof KINDS[0]; i++)
        if (strstr(name, KINDS[i].sub)) return KINDS[i].kind;
    return Q_OTHER;
}

/* ---- conditions ---- */

typedef enum qcond {
    ANY,
    GQA4,        /* n_head / n_head_kv >= 4 */
    EXPERT8,     /* 8 experts (Mixtral-class) */
    NOT_EXPERT8,
    LAYER_LT2,   /* layer < 2 */
    LAYER_LT4,   /* layer < 4 */
    EIGHTH,      /* layer < n_layer / 8 */
    SIXTEENTH,   /* layer < n_layer / 16 */
    MORE_BITS,   /* use_more_bits(layer, n_layer) */
    SEVENTY_B,   /* 80 layers with grouped KV heads: what llama.cpp calls a 70B model */
} qcond;

static bool holds(qcond c, const quant_model *m, int layer) {
    const int n = m->n_layer;
    switch (c) {
    case ANY: return true;
    case GQA4: return m->n_head_kv > 0 && m->n_head / m->n_head_kv >= 4;
    case EXPERT8: return m->n_expert == 8;
    case NOT_EXPERT8: return m->n_expert != 8;
    case LAYER_LT2: return layer < 2;
    case LAYER_LT4: return layer < 4;
    case EIGHTH: return layer < n / 8;
    case SIXTEENTH: return layer < n / 16;
    case MORE_BITS: return layer < n / 8 || layer >= 7 * n / 8 || (layer - n / 8) % 3 == 2;
    case SEVENTY_B: return n == 80 && m->n_head != m->n_head_kv;
    }
    return false;
}

typedef struct qrule {
    int ftype;
    qkind kind;
    qcond cond;
    int type;
} qrule;

/* First match per (mix, role) wins; a mix/role with no matching rule keeps the base. */
static const qrule RULES[] = {
    /* attn_v */
    {FT_Q2_K, Q_ATTN_V, GQA4, WICK_Q4_K},
    {FT_Q2_K, Q_ATTN_V, ANY, WICK_Q3_K},
    {FT_Q2_K_S, Q_ATTN_V, GQA4, WICK_Q4_K},
    {FT_Q3_K_M, Q_ATTN_V, LAYER_LT2, WICK_Q5_K},
    {FT_Q3_K_M, Q_ATTN_V, ANY, WICK_Q4_K},
    {FT_Q3_K_L, Q_ATTN_V, ANY, WICK_Q5_K},
    {FT_IQ4_NL, Q_ATTN_V, GQA4, WICK_Q5_K},
    {FT_IQ4_XS, Q_ATTN_V, GQA4, WICK_Q5_K},
    {FT_Q4_K_M, Q_ATTN_V, MORE_BITS, WICK_Q6_K},
    {FT_Q5_K_M, Q_ATTN_V, MORE_BITS, WICK_Q6_K},
    {FT_Q4_K_S, Q_ATTN_V, LAYER_LT4, WICK_Q5_K},
    /* ffn_down */
    {FT_Q2_K, Q_FFN_DOWN, ANY, WICK_Q3_K},
    {FT_Q2_K_S, Q_FFN_DOWN, EIGHTH, WICK_Q4_K},
    {FT_Q3_K_M, Q_FFN_DOWN, SIXTEENTH, WICK_Q5_K},
    {FT_Q3_K_M, Q_FFN_DOWN, ANY, WICK_Q4_K},
    {FT_Q3_K_L, Q_FFN_DOWN, ANY, WICK_Q5_K},
    {FT_Q4_K_M, Q_FFN_DOWN, MORE_BITS, WICK_Q6_K},
    {FT_IQ4_NL, Q_FFN_DOWN, EIGHTH, WICK_Q5_K},
    {FT_IQ4_XS, Q_FFN_DOWN, EIGHTH, WICK_Q5_K},
    {FT_Q5_K_M, Q_FFN_DOWN, MORE_BITS, WICK_Q6_K},
    {FT_Q4_K_S, Q_FFN_DOWN, EIGHTH, WICK_Q5_K},
    /* attn_output: the 8-expert models first */
    {FT_Q2_K, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_Q3_K_S, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_Q3_K_M, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_IQ4_NL, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_Q4_K_S, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_Q4_K_M, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_IQ4_XS, Q_ATTN_OUTPUT, EXPERT8, WICK_Q5_K},
    {FT_Q2_K, Q_ATTN_OUTPUT, NOT_EXPERT8, WICK_Q3_K},
    {FT_Q3_K_M, Q_ATTN_OUTPUT, NOT_EXPERT8, WICK_Q4_K},
    {FT_Q3_K_L, Q_ATTN_OUTPUT, NOT_EXPERT8, WICK_Q5_K},
};

/* After the rules, for every mix: a role, a condition, the types it applies
 * to (0 = any; a list ends at the first 0) and the type it becomes. */
static const struct {
    qkind kind;
    qcond cond;
    int from[2];
    int type;
} ALWAYS[] = {
    {Q_ATTN_V, SEVENTY_B, {WICK_Q3_K, WICK_Q4_K}, WICK_Q5_K},
    {Q_ATTN_V, EXPERT8, {0}, WICK_Q8_0},
    {Q_ATTN_K, EXPERT8, {0}, WICK_Q8_0},
};

/* The layer number of a blk.N. name; 0 for others. */
static int layer_of(const char *name) {
    int layer = 0;
    if (sscanf(name, "blk.%d.", &layer) != 1 || layer < 0) layer = 0;
    return layer;
}

static bool is_quantized(int type) { return dtype_block_elems(type) > 1; }

static int rules_type(const quant_choice *c, const quant_model *m, const char *name, int64_t ne0) {
    const quant_mix *mix = c->mix;
    const qkind kind = kind_of(m, name);
    if (kind == Q_OUTPUT) {
        if (c->output_type >= 0) return c->output_type;
        if (ne0 % dtype_block_elems(mix->base) != 0) return WICK_Q8_0;
        return mix->base == WICK_Q8_0 ? WICK_Q8_0 : WICK_Q6_K;
    }
    const int layer = layer_of(name);
    int type = mix->base;
    for (size_t i = 0; i < sizeof RULES / sizeof RULES[0]; i++)
        if (RULES[i].ftype == mix->ftype && RULES[i].kind == kind && holds(RULES[i].cond, m, layer)) {
            type = RULES[i].type;
            break;
        }
    for (size_t i = 0; i < sizeof ALWAYS / sizeof ALWAYS[0]; i++) {
        if (ALWAYS[i].kind != kind || !holds(ALWAYS[i].cond, m, layer)) continue;
        bool applies = ALWAYS[i].from[0] == 0;
        for (int k = 0; k < 2 && ALWAYS[i].from[k]; k++) applies |= ALWAYS[i].from[k] == type;
        if (applies) type = ALWAYS[i].type;
    }
    return type;
}

int quant_tensor_type(const quant_choice *c, const quant_model *m, const char *name, int64_t ne0, int *wanted) {
    int type = c->mix->base;
    if (!c->pure && is_quantized(c->mix->base)) type = rules_type(c, m, name, ne0);
    if (c->embd_type >= 0 && is_token_embd(name)) type = c->embd_type;
    if (c->output_type >= 0 && strcmp(name, "output.weight") == 0) type = c->output_type;
    if (wanted) *wanted = type;
    return dtype_fallback(type, ne0);
}
