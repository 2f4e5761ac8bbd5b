/* sampling_base.h — what a request starts from before its own fields are
 * read: the library's sampling defaults, overlaid by the model's
 * (generation_config.json / GGUF), overlaid by the server's flags (--temp,
 * --top-k, --top-p, --min-p, --repeat-penalty, --repeat-last-n,
 * --presence-penalty, --frequency-penalty, --seed), and the default token
 * limit (-n). Every API's route takes its base from here. */
#ifndef WICK_SERVE_SAMPLING_BASE_H
#define WICK_SERVE_SAMPLING_BASE_H

#include <stdbool.h>

#include "serve/serve.h"

/* The base sampling for a request to model m. out->seed is the server's
 * --seed, else a fresh random one: a route whose field parser draws a random
 * seed for a request without "seed" puts this one back (serve_sampling_keep_seed). */
void serve_sampling_base(const serve_server *s, const wick_model *m, wick_sampling *out);
/* After a request's fields were read over the base: when the request gave no
 * seed (request_has_seed false) and the server has --seed, use the server's. */
void serve_sampling_keep_seed(const serve_server *s, bool request_has_seed, wick_sampling *v);
/* A request's token limit under the server's -n, as llama-server applies
 * it: the limit of a request that sets none (requested < 0); a request's own
 * limit, larger or smaller, wins. Without -n: requested (-1 = until the
 * context is full). */
long long serve_n_predict_for(const serve_server *s, long long requested);

#endif
