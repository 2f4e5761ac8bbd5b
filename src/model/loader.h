/* loader.h — internal to src/model: the state of one wick_model_load and the
 * helpers that loader.c shares with the mixture-of-experts binder
 * (moe_load.c) and with gen_config.c. */
#ifndef WICK_MODEL_LOADER_H
#define WICK_MODEL_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include "core/weight_alloc.h"
#include "model/model.h"
#include "model/moe.h"

typedef struct loader {
    wick_model *m;
    const char *path;
    wick_error *err;
    /* Weight copies (convert, then repack) are carved from one arena per
     * phase (core/weight_alloc.h); a phase first runs with `sizing` set,
     * adding what it would take to `need`, then for real. */
    weight_arena arena[2]; /* [0] the converted copies, [1] the repacked ones */
    int phase;
    bool sizing;
    size_t need;
} loader;

/* The file's tensor of that name, or NULL. */
const wick_tensor *loader_find(const loader *L, const char *name);
/* t itself, or an element-aligned copy the model owns (NULL with err on OOM). */
const wick_tensor *loader_aligned(loader *L, const wick_tensor *t);
/* Keep p (malloc'd) until the model is freed; NULL (p freed) on OOM. */
void *loader_own(loader *L, void *p);

/* ---- gen_config.c ---- */

/* Add the tokenizer's end-of-generation ids (EOS and end-of-turn specials) to m->eog. */
void model_collect_eog(wick_model *m);
/* dir/generation_config.json, when present: eos_token_id into m->eog, the
 * sampling values into m->gen_defaults. */
int model_read_generation_config(wick_model *m, const char *dir, wick_error *err);
/* GGUF general.sampling.* keys into m->gen_defaults. */
int model_read_gguf_sampling(wick_model *m, wick_error *err);

/* ---- moe_load.c ---- */

/* Bind layer il's router, experts and shared expert into w->moe, checking
 * every shape and type against the hyperparameters. */
int moe_bind_layer(loader *L, int il, layer_weights *w);

/* Replace every matrix of the layer (the router too when with_router) by
 * fn's result: a stack as a whole, else each expert's matrix. unit_rows is
 * the rows of one expert's matrix (a layout must not mix experts' rows).
 * Returns -1 as soon as fn returns NULL. */
typedef const wick_tensor *(*moe_map_fn)(void *ctx, const wick_tensor *t, int64_t unit_rows);
int moe_map_matrices(moe_weights *mw, bool with_router, moe_map_fn fn, void *ctx);

/* Point each expert's matrix at its slice of the (converted, repacked)
 * stacks; after the last moe_map_matrices. */
void moe_finish_views(moe_weights *mw);

#endif
