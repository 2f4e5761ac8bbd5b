/* model_source.h — a model to be written as a GGUF file (wick quantize, wick
 * convert): its tensors under their GGUF names and its metadata as GGUF keys,
 * whether it is a GGUF file or a Hugging Face directory.
 *
 * A GGUF source is taken as it is: every key, every tensor, any architecture
 * (llama.cpp's, even one wick does not run). An HF source (hf_source.c) is
 * mapped through the architecture tables as llama.cpp's converter maps it:
 * each tensor by its role (arch.c's names in both formats; a multimodal
 * checkpoint's text model under its prefix, the other towers left out), the
 * per-expert matrices of a mixture-of-experts layer gathered into 3-D stacks,
 * hyperparameters by the key tables (hparams_to_gguf, arch_hparams_to_gguf),
 * the tokenizer and chat template (tok_write_gguf), generation_config.json's
 * sampling values as general.sampling.* keys, Llama-3 RoPE scaling and
 * LongRoPE factors as tensors, the q/k rows of architectures whose two formats
 * lay RoPE pairs out differently permuted to the GGUF layout, and norm weights
 * that HF stores as w for a scale of 1 + w (Gemma) stored as 1 + w. */
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
    const void *data;  /* in the source's memory map (the first part's, for parts) */
    size_t nbytes;
    const void **parts; /* n_parts > 0: the rows come from n_parts tensors of equal size, one after
                           another (an HF layer's experts as one GGUF stack); owned */
    int n_parts;
    int permute_heads; /* > 0: HF rotate-half q/k rows of this many heads, written interleaved */
    int head_dim;
    float add;         /* added to every value (Gemma's HF norms: GGUF holds 1 + w) */
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
    hparams named;      /* HF: hp as config.json gave the features (arch_hparams_to_gguf) */
    bool hf_multimodal; /* HF: the text model of a multimodal checkpoint */
    int n_layer, n_head, n_head_kv, n_expert;
    bool has_output;    /* an output.weight of its own */
    src_tensor *t;
    int n;
    float *rope_freqs;  /* HF Llama-3 scaling: the rope_freqs.weight values */
    float *longrope;    /* HF LongRoPE: short then long factors, rot_dim/2 each */
    cJSON *gen_config;  /* HF generation_config.json, or NULL */
} model_source;

int source_open(model_source *s, const char *path, wick_error *err);
void source_close(model_source *s);

/* The HF side (hf_source.c), for source_open and source_write_metadata. */
int source_open_hf(model_source *s, const char *dir, wick_error *err);
int source_write_hf_metadata(const model_source *s, gguf_writer *w, wick_error *err);

/* The source's GGUF keys into w: a GGUF source's own (but general.file_type,
 * general.quantization_version and split.*, which the writer sets), or those
 * built for an HF source. */
int source_write_metadata(const model_source *s, gguf_writer *w, wick_error *err);

/* Rows of t: every dimension past the first. */
static inline int64_t src_rows(const src_tensor *t) { return t->ne[1] * t->ne[2] * t->ne[3]; }
/* t's data as parts: part p's bytes start at src_part(t, p); each holds src_part_bytes(t). */
static inline int src_n_parts(const src_tensor *t) { return t->n_parts > 0 ? t->n_parts : 1; }
static inline const void *src_part(const src_tensor *t, int p) { return t->n_parts > 0 ? t->parts[p] : t->data; }
static inline size_t src_part_bytes(const src_tensor *t) { return t->nbytes / (size_t)src_n_parts(t); }
/* Whether t's bytes are the output's when its type stays: no permutation, nothing added. */
static inline bool src_verbatim(const src_tensor *t) { return t->permute_heads == 0 && t->add == 0.0f; }

/* Row r of t as f32 into out (ne[0] values), with the q/k permutation and the addend applied;
 * scratch holds at least dtype_row_bytes(t->type, ne[0]) bytes, 64-aligned.
 * t->type must be one dequantize_row reads (dtype_supported). A 1-D tensor
 * is one row. */
void source_row_f32(const src_tensor *t, int64_t r, float *out, void *scratch);

#endif
