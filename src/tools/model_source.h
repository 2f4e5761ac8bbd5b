/* model_source.h — a model to be written as a GGUF file (wick quantize, wick
 * convert): its tensors under their GGUF names and its metadata as GGUF keys,
 * whether it is a GGUF file or a Hugging Face directory.
 *
 * A GGUF source is taken as it is: every key, every tensor, any architecture
 * (llama.cpp's, even one wick does not run). An HF source is mapped through
 * the architecture tables: each tensor by its role (arch.c's tensor_name gives
 * both names), hyperparameters by the key table (hparams_to_gguf), the
 * tokenizer and chat template (tok_write_gguf), generation_config.json's
 * sampling values as llama.cpp's general.sampling.* keys, Llama-3 RoPE
 * scaling as the rope_freqs.weight tensor, and the q/k rows of architectures
 * whose two formats lay RoPE pairs out differently (llama, mistral) permuted
 * to the GGUF layout as llama.cpp's converter does. */
#ifndef WICK_TOOLS_MODEL_SOURCE_H
#define WICK_TOOLS_MODEL_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "format/gguf.h"
#include "format/safetensors.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "text/tokenizer.h"
#include "wick.h"

typedef struct src_tensor {
    char name[128];    /* GGUF name */
    int type, n_dims;
    int64_t ne[WICK_MAX_DIMS];
    const void *data;  /* in the source's memory map */
    size_t nbytes;
    int permute_heads; /* > 0: HF rotate-half q/k rows of this many heads, written interleaved */
    int head_dim;
} src_tensor;

typedef struct model_source {
    bool hf;
    const char *path;
    gguf_file *gguf;
    st_set *st;
    tokenizer *tok;     /* HF */
    const arch_desc *arch; /* HF: always; GGUF: NULL for an architecture wick does not run */
    char arch_name[64]; /* general.architecture */
    hparams hp;         /* HF */
    int n_layer, n_head, n_head_kv, n_expert;
    bool has_output;    /* an output.weight of its own */
    src_tensor *t;
    int n;
    float *rope_freqs;  /* HF Llama-3 scaling: the rope_freqs.weight values */
    cJSON *gen_config;  /* HF generation_config.json, or NULL */
} model_source;

int source_open(model_source *s, const char *path, wick_error *err);
void source_close(model_source *s);

/* The source's GGUF keys into w: a GGUF source's own (but general.file_type,
 * general.quantization_version and split.*, which the writer sets), or those
 * built for an HF source. */
int source_write_metadata(const model_source *s, gguf_writer *w, wick_error *err);

/* Rows of t: every dimension past the first. */
static inline int64_t src_rows(const src_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

/* Row r of t as f32 into out (ne[0] values), with the q/k permutation applied;
 * scratch holds at least dtype_row_bytes(t->type, ne[0]) bytes, 64-aligned.
 * t->type must be one dequantize_row reads (dtype_supported). A 1-D tensor
 * is one row. */
void source_row_f32(const src_tensor *t, int64_t r, float *out, void *scratch);

#endif
