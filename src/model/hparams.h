/* hparams.h — a model's hyperparameters, read from GGUF metadata or an HF
 * config.json through one key table each, validated once, and the RoPE
 * frequencies they imply (including Llama-3 and linear scaling). */
#ifndef WICK_MODEL_HPARAMS_H
#define WICK_MODEL_HPARAMS_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "format/gguf.h"
#include "wick.h"

typedef enum rope_scaling_type {
    ROPE_SCALING_NONE = 0,
    ROPE_SCALING_LINEAR = 1,
    ROPE_SCALING_LLAMA3 = 2,
    ROPE_SCALING_LONGROPE = 3, /* Phi-3 "longrope"/"su": per-frequency short/long divisors (model.h) */
} rope_scaling_type;

#define HPARAMS_MAX_EXPERTS 1024
#define HPARAMS_MAX_EXPERTS_USED 64

typedef struct hparams {
    int n_vocab; /* 0 = take from the embedding tensor */
    int n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx_train;
    int rot_dim; /* dims of each head that RoPE rotates (= head_dim) */
    float rms_eps, rope_theta;
    rope_scaling_type rope_scaling;
    float rope_factor, rope_low_freq_factor, rope_high_freq_factor;
    int rope_orig_ctx;
    int sliding_window; /* 0 = none */
    bool tied;          /* HF tie_word_embeddings (GGUF: output.weight absent) */
    /* The architecture features of Granite, Gemma 2/3 and Phi-3 (read and defaulted by
     * arch_hparams.c; the values below are all "off"): */
    float attn_scale;       /* attention score scale; 0 until arch_hparams_finish sets it */
    float query_pre_attn_scalar; /* Gemma: attn_scale = this^-0.5 (0 = not given) */
    float embd_scale;       /* embeddings times this (Gemma sqrt(n_embd), Granite embedding_multiplier) */
    float resid_scale;      /* each block's output times this before its residual add (Granite) */
    float logit_scale;      /* logits times this (Granite: 1 / logits_scaling) */
    float attn_softcap, final_softcap; /* c·tanh(x/c) of scores / logits (Gemma 2); 0 = none */
    int swa_period;         /* layer il slides iff il % P < P - 1; 0 = every layer (when sliding_window > 0) */
    float rope_theta_local; /* RoPE base of the sliding layers (Gemma 3); 0 = one RoPE for all layers */
    float rope_attn_factor; /* LongRoPE: cos and sin times this */
    /* Mixture of experts (n_expert 0 = every layer dense). */
    int n_expert, n_expert_used; /* experts per MoE layer, experts each token uses (top-k) */
    int n_ff_exp, n_ff_shexp;    /* an expert's and the shared expert's hidden width */
    int moe_norm_topk;           /* renormalize the top-k weights: 1/0, -1 = the arch's GGUF default */
    int moe_step;                /* HF decoder_sparse_step: layer il has experts when (il+1) % moe_step == 0 */
    uint64_t moe_dense[64];      /* HF mlp_only_layers: bit il set = a dense layer (layers < 4096) */
} hparams;

/* True if layer il is a mixture-of-experts layer. */
bool hparams_layer_is_moe(const hparams *hp, int il);

/* `arch` is the general.architecture string that prefixes the keys. */
int hparams_from_gguf(hparams *hp, const gguf_file *f, const char *arch, wick_error *err);
int hparams_from_hf(hparams *hp, const cJSON *config, const char *model_type, wick_error *err);
int hparams_validate(const hparams *hp, wick_error *err);
/* The GGUF keys of hp for architecture `arch` (the general.architecture
 * string), as llama.cpp reads them: every entry of the key table whose value
 * is set, attention.value_length, and linear RoPE scaling. Llama-3 scaling
 * travels as the rope_freqs.weight tensor (hparams_rope_freq_factors). */
void hparams_to_gguf(const hparams *hp, const char *arch, gguf_writer *w);
/* The rot_dim/2 divisors llama.cpp's rope_freqs.weight holds for hp's RoPE
 * scaling: unscaled frequency / scaled frequency. */
void hparams_rope_freq_factors(const hparams *hp, float *factors);

const char *rope_scaling_name(rope_scaling_type t);

/* Layer il's attention window (0 = full attention) and whether it uses the
 * local RoPE frequencies (Gemma 3's sliding layers). */
static inline int hparams_layer_window(const hparams *hp, int il) {
    if (hp->sliding_window <= 0) return 0;
    const int p = hp->swa_period;
    return p == 0 || il % p < p - 1 ? hp->sliding_window : 0;
}
static inline bool hparams_layer_rope_local(const hparams *hp, int il) {
    return hp->rope_theta_local > 0 && hparams_layer_window(hp, il) > 0;
}

/* inv_freq[i] for i < rot_dim/2: theta^(-2i/rot_dim), adjusted by the scaling
 * (llama3: HF's smooth interpolation; linear: / factor). freq_factors (GGUF
 * rope_freqs.weight, may be NULL) divide the frequencies as llama.cpp does. */
void hparams_rope_inv_freq(const hparams *hp, const float *freq_factors, float *inv_freq);

#endif
