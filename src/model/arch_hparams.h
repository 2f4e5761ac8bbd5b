/* arch_hparams.h — the hyperparameters of the architecture features that
 * Granite, Gemma 2/3 and Phi-3 turn on: Granite's multipliers, Gemma's
 * soft-capping, query scale, sliding-window layout and local RoPE base,
 * Phi-3's partial rotation and LongRoPE attention factor. Read from GGUF keys
 * (llama.cpp's names) or config.json (HF's names) after hparams_from_*, then
 * completed from the arch table's defaults by arch_hparams_finish. */
#ifndef WICK_MODEL_ARCH_HPARAMS_H
#define WICK_MODEL_ARCH_HPARAMS_H

#include <cJSON.h>

#include "format/gguf.h"
#include "model/arch.h"
#include "model/hparams.h"
#include "wick.h"

/* `gguf_arch` is the general.architecture string that prefixes the keys. */
int arch_hparams_gguf(hparams *hp, const arch_desc *a, const gguf_file *f, const char *gguf_arch, wick_error *err);
int arch_hparams_hf(hparams *hp, const arch_desc *a, const cJSON *cfg, wick_error *err);
/* Fill what the file did not give from the arch's defaults, derive the
 * attention and embedding scales, and check the values. */
int arch_hparams_finish(hparams *hp, const arch_desc *a, model_format fmt, wick_error *err);

/* HF LongRoPE (hp->rope_scaling == ROPE_SCALING_LONGROPE): config.json
 * rope_scaling's short_factor and long_factor lists, rot_dim/2 numbers each,
 * into out (the short ones, then the long ones). */
int arch_hf_longrope_factors(const hparams *hp, const cJSON *cfg, float *out, wick_error *err);

/* The GGUF keys (llama.cpp's names, under gguf_arch) of the features of an HF
 * model whose hyperparameters are hp (after arch_hparams_finish): every
 * feature key the config named (`named`: hp as arch_hparams_hf left it, NAN
 * = not given) and every one whose value wick's GGUF reading would not derive
 * by itself (Gemma's query_pre_attn_scalar as attention.scale); LongRoPE's
 * attention factor and original context; for softmax-then-top-k routing the
 * config's norm_topk_prob as expert_weights_norm; a zero sliding window where
 * the arch's GGUF files need the key. Fails as arch_hparams_gguf_check does. */
int arch_hparams_to_gguf(const hparams *hp, const hparams *named, const arch_desc *a, const char *gguf_arch,
                         gguf_writer *w, wick_error *err);

/* Fails, naming the layer, where a GGUF file of arch a cannot say what hp
 * does: sliding layers in another pattern than the arch's fixed one. */
int arch_hparams_gguf_check(const hparams *hp, const arch_desc *a, wick_error *err);

/* A multimodal config (model_type a->hf_multimodal_type, e.g. Gemma 3's
 * Gemma3ForConditionalGeneration) keeps the text model's settings in
 * "text_config", often only those that differ from the text config class's
 * defaults: a new object (caller cJSON_Delete's) holding text_config with
 * a->hf_text_defaults filled in; NULL with err if malformed. */
cJSON *arch_hf_text_config(const arch_desc *a, const cJSON *cfg, wick_error *err);

/* An HF model directory's config.json (loading and `wick convert` alike):
 * read into *cfg (the caller cJSON_Delete's it), its "model_type" in
 * *model_type (valid while *cfg is) and the architecture that names; path
 * (cap bytes) gets the file's path for later messages. `verb` words the
 * unknown-architecture error ("wick runs ...", "wick converts ..."). NULL
 * with err, *cfg then NULL. */
const arch_desc *arch_hf_open_config(const char *dir, const char *verb, char *path, size_t cap, cJSON **cfg,
                                     const char **model_type, wick_error *err);

#endif
