/* grammar_vocab.h — a model's vocabulary as the grammar engine reads it: the
 * byte trie of its tokens and the same tokens cut into JSON-string slices
 * (grammar/token_trie.h, grammar/token_slices.h). Built on first use, once
 * per model, under a lock: the one part of a loaded model written after
 * loading (a model that never sees a grammar never pays for it). */
#ifndef WICK_MODEL_GRAMMAR_VOCAB_H
#define WICK_MODEL_GRAMMAR_VOCAB_H

#include <pthread.h>

#include "grammar/token_slices.h"
#include "grammar/token_trie.h"
#include "wick.h"

typedef struct grammar_vocab {
    token_trie *trie;      /* every token but the special/control ones */
    token_slices *slices;  /* the same tokens in slices (token_slices_json) */
    double build_ms;       /* what building both took */
} grammar_vocab;

/* Where a model keeps its grammar vocabulary (model.h: wick_model.lazy). */
typedef struct model_lazy {
    pthread_mutex_t mu;
    grammar_vocab *vocab; /* NULL until built */
} model_lazy;

model_lazy *model_lazy_new(void);
void model_lazy_free(model_lazy *l);

/* m's grammar vocabulary, built by the first call: NULL with err when
 * building it fails (out of memory). Any thread may call it. */
const grammar_vocab *model_grammar_vocab(const wick_model *m, wick_error *err);

#endif
