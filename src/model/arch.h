/* arch.h — architecture facts as data.
 *
 * Everything that differs between Llama, Mistral, Qwen2 and Qwen3 lives in the
 * arch_desc table (arch.c): which names identify it in GGUF and HF files,
 * whether it has QKV biases or per-head q/k RMSNorm, and which RoPE pair
 * layout each file format stores. Tensor names per role and format are in a
 * second table, so the loader and the test-model writer share one source. */
#ifndef WICK_MODEL_ARCH_H
#define WICK_MODEL_ARCH_H

#include <stdbool.h>

#include "kernels/ops.h"

typedef enum model_format { FORMAT_GGUF = 0, FORMAT_HF = 1 } model_format;

typedef struct arch_desc {
    const char *name;              /* canonical: "llama", "mistral", "qwen2", "qwen3" */
    const char *gguf_arch;         /* general.architecture written for this arch */
    const char *gguf_names[3];     /* general.architecture values accepted */
    const char *hf_model_types[3]; /* config.json model_type values accepted */
    const char *hf_class;          /* config.json architectures[0] written */
    bool qkv_bias;                 /* q/k/v projections carry biases (required) */
    bool qk_norm;                  /* per-head RMSNorm of q and k before RoPE */
    rope_style rope_gguf;          /* pair layout of q/k rows in GGUF files */
    rope_style rope_hf;            /* pair layout of q/k rows in HF files */
} arch_desc;

/* Find by canonical name, GGUF general.architecture or HF model_type. NULL if unknown. */
const arch_desc *arch_by_name(const char *name);
const arch_desc *arch_by_gguf(const char *gguf_arch);
const arch_desc *arch_by_hf(const char *model_type);
/* "llama, mistral, qwen2, qwen3" — for error messages. */
const char *arch_list(void);

typedef enum tensor_role {
    T_TOK_EMBD,
    T_OUTPUT_NORM,
    T_OUTPUT,
    T_ROPE_FREQS,
    /* per layer: */
    T_ATTN_NORM,
    T_ATTN_Q,
    T_ATTN_K,
    T_ATTN_V,
    T_ATTN_O,
    T_ATTN_Q_BIAS,
    T_ATTN_K_BIAS,
    T_ATTN_V_BIAS,
    T_ATTN_Q_NORM,
    T_ATTN_K_NORM,
    T_FFN_NORM,
    T_FFN_GATE,
    T_FFN_UP,
    T_FFN_DOWN,
    T_ROLE_COUNT
} tensor_role;

#define T_FIRST_LAYER_ROLE T_ATTN_NORM

/* Write the tensor name of `role` (for layer `layer` when per-layer) in the
 * given format into buf. Returns false if the role has no name in that format
 * (HF has no rope_freqs tensor). */
bool tensor_name(char *buf, int cap, model_format fmt, tensor_role role, int layer);

#endif
