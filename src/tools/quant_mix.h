/* quant_mix.h — llama-quantize's file types ("mixes": Q4_K_M, Q5_K_S, Q8_0,
 * F16, ...) and the per-tensor type each gives a tensor (quant_mix.c holds
 * llama.cpp's llama_tensor_get_type rules as tables). Tensors are named as
 * in GGUF (blk.N.attn_v.weight, output.weight, ...). */
#ifndef WICK_TOOLS_QUANT_MIX_H
#define WICK_TOOLS_QUANT_MIX_H

#include <stdbool.h>
#include <stdint.h>

typedef struct quant_mix {
    const char *name; /* "Q4_K_M" */
    int ftype;        /* llama_ftype, written as general.file_type */
    int base;         /* the wick_dtype of most matrices */
} quant_mix;

/* A mix by name, case-insensitive ("q4_k_m"); llama-quantize's aliases Q3_K,
 * Q4_K and Q5_K are the _M mixes. NULL if unknown. */
const quant_mix *quant_mix_find(const char *name);
/* "Q2_K, Q2_K_S, Q3_K_S, ..." for messages and help. */
const char *quant_mix_names(void);

/* What the rules need to know of the model. */
typedef struct quant_model {
    int n_layer, n_head, n_head_kv;
    int n_expert;    /* 0 or 1 for a dense model */
    bool has_output; /* an output.weight of its own (else token_embd is the output) */
} quant_model;

typedef struct quant_choice {
    const quant_mix *mix;
    bool pure;       /* every quantized tensor in the mix's base type (no rules) */
    int output_type; /* wick_dtype for output.weight (and a tied token_embd), -1 = by the rules */
    int embd_type;   /* wick_dtype for token_embd.weight, -1 = by the rules */
} quant_choice;

/* Whether llama-quantize changes this tensor's type at all: weights of 2 or
 * more dimensions, not norms, routers (ffn_gate_inp) or position tables. */
bool quant_tensor_is_matrix(const char *name, int n_dims);

/* The type a matrix (quant_tensor_is_matrix) named `name` with rows of ne0
 * elements gets under c: the mix's base, changed by llama-quantize's rules for
 * its role and layer (unless pure), the overrides, then the fallback for rows
 * the type's block does not divide (dtype_fallback). *wanted (may be NULL)
 * receives the type before that fallback. */
int quant_tensor_type(const quant_choice *c, const quant_model *m, const char *name, int64_t ne0, int *wanted);

#endif
