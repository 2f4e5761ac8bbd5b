/* hparams.h — a model's hyperparameters, read from GGUF metadata or an HF
 * config.json through one key table each, validated once, and the RoPE
 * frequencies they imply (including Llama-3 and linear scaling). */
#ifndef WICK_MODEL_HPARAMS_H
#define WICK_MODEL_HPARAMS_H

#include <cJSON.h>
#include <stdbool.h>

#include "format/gguf.h"
#include "wick.h"

typedef enum rope_scaling_type {
    ROPE_SCALING_NONE = 0,
    ROPE_SCALING_LINEAR = 1,
    ROPE_SCALING_LLAMA3 = 2,
} rope_scaling_type;

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
} hparams;

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

/* inv_freq[i] for i < rot_dim/2: theta^(-2i/rot_dim), adjusted by the scaling
 * (llama3: HF's smooth interpolation; linear: / factor). freq_factors (GGUF
 * rope_freqs.weight, may be NULL) divide the frequencies as llama.cpp does. */
void hparams_rope_inv_freq(const hparams *hp, const float *freq_factors, float *inv_freq);

#endif
