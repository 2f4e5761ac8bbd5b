/* grammar_vocab.c — building a model's grammar vocabulary once (see
 * grammar_vocab.h): each token's bytes are its piece as the decoder gives
 * it alone (tok_piece); special and control tokens are left out, so grammar
 * text never matches them. */
#include "model/grammar_vocab.h"

#include <stdlib.h>

#include "core/clock.h"
#include "core/error.h"
#include "model/model.h"

model_lazy *model_lazy_new(void) {
    model_lazy *l = calloc(1, sizeof *l);
    if (l && pthread_mutex_init(&l->mu, NULL) != 0) {
        free(l);
        return NULL;
    }
    return l;
}

static void vocab_free(grammar_vocab *v) {
    if (!v) return;
    token_trie_free(v->trie);
    token_slices_free(v->slices);
    free(v);
}

void model_lazy_free(model_lazy *l) {
    if (!l) return;
    vocab_free(l->vocab);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

static bool token_bytes(void *ctx, int32_t id, uint8_t *buf, size_t cap, size_t *len) {
    const tokenizer *t = ctx;
    if (tok_is_special(t, id)) return false;
    const int n = tok_piece(t, id, (char *)buf, cap);
    if (n <= 0 || (size_t)n > cap) return false;
    *len = (size_t)n;
    return true;
}

const grammar_vocab *model_grammar_vocab(const wick_model *m, wick_error *err) {
    model_lazy *l = m->lazy;
    pthread_mutex_lock(&l->mu);
    if (!l->vocab) {
        const double t0 = wick_now_ms();
        grammar_vocab *v = calloc(1, sizeof *v);
        const int32_t n = tok_n_vocab(m->tok);
        if (v) v->trie = token_trie_new(n, token_bytes, m->tok, err);
        if (v && v->trie) v->slices = token_slices_new(n, token_bytes, m->tok, token_slices_json, 3, err);
        if (v && v->slices) {
            v->build_ms = wick_now_ms() - t0;
            l->vocab = v;
        } else {
            if (!v) wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
            vocab_free(v);
        }
    }
    const grammar_vocab *v = l->vocab;
    pthread_mutex_unlock(&l->mu);
    return v;
}
