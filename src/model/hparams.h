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

const char *rope_scaling_name(rope_scaling_type t);

/* inv_freq[i] for i < rot_dim/2: theta^(-2i/rot_dim), adjusted by the scaling
 * (llama3: HF's smooth interpolation; linear: / factor). freq_factors (GGUF
 * rope_freqs.weight, may be NULL) divide the frequencies as llama.cpp does. */
void hparams_rope_inv_freq(const hparams *hp, const float *freq_factors, float *inv_freq);

#endif
