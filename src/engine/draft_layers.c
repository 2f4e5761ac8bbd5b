/* draft_layers.c — self-speculation by layer skipping: the drafter is the
 * target's first N layers followed by its final norm and output head
 * (LayerSkip's early exit without its training), run by draft_model.c's
 * machinery with a KV cache of N layers; no second model in memory. */
#include "core/error.h"
#include "engine/draft.h"
#include "model/model.h"

drafter *draft_layers_new(const wick_model *target, int n_layers, int n_seq, int n_ctx, int chunk, wick_pool *pool,
                          int kv_type, wick_error *err) {
    if (n_layers < 1 || n_layers >= target->hp.n_layer) {
        wick_fail(err, "draft layers must be in [1, %d) for this %d-layer model, not %d", target->hp.n_layer,
                  target->hp.n_layer, n_layers);
        return NULL;
    }
    return draft_model_make(target, n_layers, n_seq, n_ctx, chunk, pool, kv_type, err);
}
