/* model.h — the loaded model (struct wick_model): architecture, hyperparameters,
 * bound weight tensors, tokenizer and generation defaults. Weights stay in the
 * memory-mapped files; only small vectors (norm weights, biases) are converted
 * to f32 copies the model owns. Read-only after loading, but for `lazy`. */
#ifndef WICK_MODEL_MODEL_H
#define WICK_MODEL_MODEL_H

#include <stdint.h>

#include "core/tensor.h"
#include "format/gguf.h"
#include "format/safetensors.h"
#include "kernels/cpu.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "text/tokenizer.h"
#include "wick.h"

typedef struct layer_weights {
    const wick_tensor *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down;
    const float *attn_norm, *ffn_norm;
    const float *bq, *bk, *bv;     /* NULL when the model has no QKV bias */
    const float *q_norm, *k_norm;  /* NULL unless qk_norm */
    const float *attn_post_norm, *ffn_post_norm; /* NULL unless the arch has post_norms (Gemma) */
    struct moe_weights *moe;       /* a mixture-of-experts layer (model/moe.h); w_gate/w_up/w_down are NULL */
} layer_weights;

#define WICK_MAX_EOG 16

/* The bits of wick_model.gen_set: which sampling fields the files give. */
enum gen_field {
    GEN_TEMPERATURE = 1u << 0,
    GEN_TOP_K = 1u << 1,
    GEN_TOP_P = 1u << 2,
    GEN_MIN_P = 1u << 3,
    GEN_REPEAT_PENALTY = 1u << 4,
    GEN_REPEAT_LAST_N = 1u << 5,
};

struct wick_model {
    const arch_desc *arch;
    kernel_tuning tuning; /* the kernels' choices, made once at load (kernel_tuning_from_env); the weights' repacked layouts follow it */
    model_format format;
    hparams hp;
    gguf_file *gguf; /* FORMAT_GGUF */
    st_set *st;      /* FORMAT_HF */
    tokenizer *tok;

    const wick_tensor *tok_embd;
    const wick_tensor *output; /* == tok_embd when tied */
    const float *out_norm;
    layer_weights *layers;

    rope_style rope;
    float *inv_freq; /* rot_dim/2; LongRoPE: the short-context frequencies */
    /* Second RoPE frequency sets (rot_dim/2 each; NULL = none): the sliding
     * layers' local frequencies (Gemma 3, hparams_layer_rope_local), and
     * LongRoPE's long-context frequencies, used by a context longer than
     * rope_orig_ctx (as llama.cpp chooses: by the context size, so a
     * request's logits never depend on what else is batched). */
    float *inv_freq_local, *inv_freq_long;
    bool hf_multimodal;       /* HF Gemma 3 multimodal files: the text model's tensors under a prefix (loader.c) */
    const float *longrope_factors; /* HF LongRoPE: short then long divisors (2 × rot_dim/2) from config.json */

    int32_t eog[WICK_MAX_EOG]; /* end-of-generation ids */
    int n_eog;
    /* Sampling values the model's files give (gen_config.c): the fields of
     * gen_defaults whose gen_field bit is in gen_set; has_gen_defaults when
     * the files speak of sampling at all. */
    wick_sampling gen_defaults;
    unsigned gen_set;
    bool has_gen_defaults;

    int64_t n_params;
    size_t weight_bytes;
    size_t decode_bytes;  /* weight bytes one decode step reads (see loader.c) */
    size_t resident_bytes; /* weight bytes decode keeps in memory: decode_bytes + idle experts */
    int converted_type;   /* matrices converted at load to this type; -1 = as stored */
    uint64_t identity[2]; /* what decides the KV a token gets, but the tokens (model_compute_identity) */

    /* What is built on first use, under its own lock (grammar_vocab.h): the
     * pointer is fixed at load, what it points to is not read-only. */
    struct model_lazy *lazy;

    void **owned; /* allocations the model frees: f32 vectors, realigned tensors */
    int n_owned;
    size_t cap_owned;
};

/* XXH3-128 of the architecture, hyperparameters, RoPE frequencies, the type
 * matrices were converted to, and every tensor's name, type, shape and first
 * and last bytes: the prefix cache's model identity (stable across runs). */
void model_compute_identity(struct wick_model *m);

/* RoPE frequency sets a forward pass computes angles for: 1, or 2 when some
 * layers use local frequencies (set 1). */
static inline int model_n_rope_sets(const struct wick_model *m) { return m->inv_freq_local ? 2 : 1; }

/* Dims of the tensor views of Q, K, V rows. */
static inline int model_q_dim(const struct wick_model *m) { return m->hp.n_head * m->hp.head_dim; }
static inline int model_kv_dim(const struct wick_model *m) {
    return m->hp.n_head_kv * m->hp.head_dim;
}

#endif
