/* quantize.h — `wick quantize` and `wick convert` as library calls: read a
 * model (model_source.h: a GGUF file or an HF directory), choose every
 * tensor's type, and stream the tensors, converted on a thread pool a chunk
 * of rows at a time, into a new GGUF file that llama.cpp loads. Memory stays
 * at a few chunks whatever the model's size; the input's pages are released
 * as each tensor is done. */
#ifndef WICK_TOOLS_QUANTIZE_H
#define WICK_TOOLS_QUANTIZE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/tensor.h"
#include "wick.h"

/* Called before each tensor is written: its name, source and output types,
 * and its index of n. */
typedef void (*quantize_progress_fn)(void *ud, const char *name, int from, int to, int i, int n);

typedef struct quantize_params {
    const char *type;        /* a mix or type name (quant_mix_find: "Q4_K_M", "q8_0", "f16", ...) */
    int n_threads;           /* 0 = every core */
    bool pure;               /* every matrix in the base type: no per-tensor rules */
    const char *output_type; /* output.weight's type (NULL = by the rules) */
    const char *embd_type;   /* token_embd.weight's type (NULL = by the rules) */
    quantize_progress_fn progress;
    void *progress_ud;
} quantize_params;

typedef struct quantize_report {
    int n_tensors;
    int n_by_type[WICK_DTYPE_COUNT];
    int n_fallback;          /* tensors whose rows the chosen type's block does not divide */
    int ftype;               /* general.file_type written */
    uint64_t bytes_in, bytes_out;
} quantize_report;

/* Matrices get the mix's types (quant_mix.h); every other tensor keeps a GGUF
 * source's type, or F32 from an HF source (as llama.cpp's converter writes
 * norms and biases). Requantizing a quantized input is allowed. */
int model_quantize(const char *in, const char *out, const quantize_params *p, quantize_report *r,
                   wick_error *err);

/* An HF directory to GGUF without quantizing: outtype "f32", "f16", "bf16"
 * (matrices in that type, other tensors F32) or "auto" (matrices keep their
 * type). */
int model_convert(const char *hf_dir, const char *out, const char *outtype, int n_threads, quantize_progress_fn progress,
                  void *progress_ud, quantize_report *r, wick_error *err);

#endif
