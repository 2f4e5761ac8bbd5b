/* matcher.c — a request's grammar state by tokens (matcher.h): the Earley
 * parser over the tokens' bytes, with the byte count of each accepted token
 * kept for rollback. */
#include "grammar/matcher.h"

#include <stdlib.h>

#include "core/buf.h"
#include "core/error.h"

struct grammar_matcher {
    earley *e;
    rx_store *rx; /* its copy of the grammar's store */
    const token_trie *vocab;
    const token_slices *ts;
    const rx_id *terms;
    uint32_t *bytes_of; /* bytes each accepted token pushed */
    size_t n, cap;
};

grammar_matcher *grammar_matcher_new(const cfg *g, const rx_store *base, earley_plans *plans, const token_trie *vocab,
                                     const token_slices *ts, const rx_id *terms, wick_error *err) {
    grammar_matcher *m = calloc(1, sizeof *m);
    if (!m || !(m->rx = rx_store_clone(base ? base : g->rx))) {
        free(m);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    m->vocab = vocab;
    m->ts = ts;
    m->terms = terms;
    if (!(m->e = earley_new(g, m->rx, err))) {
        grammar_matcher_free(m);
        return NULL;
    }
    earley_plans_use(m->e, plans);
    return m;
}

void grammar_matcher_free(grammar_matcher *m) {
    if (!m) return;
    earley_free(m->e);
    rx_store_free(m->rx);
    free(m->bytes_of);
    free(m);
}

rx_store *grammar_matcher_free_keep_store(grammar_matcher *m, earley_plans **plans) {
    *plans = NULL;
    if (!m) return NULL;
    const bool failed = earley_failed(m->e) || !rx_store_ok(m->rx);
    if (!failed) *plans = earley_plans_publish(m->e);
    rx_store *s = failed ? NULL : m->rx;
    if (!failed) m->rx = NULL;
    grammar_matcher_free(m);
    return s;
}

bool grammar_matcher_accept(grammar_matcher *m, int32_t id) {
    size_t len = 0;
    const uint8_t *b = token_trie_bytes(m->vocab, id, &len);
    if (!b || len > UINT32_MAX || !GROW_ARRAY(m->bytes_of, m->n + 1, &m->cap)) return false;
    size_t i = 0;
    while (i < len && earley_push(m->e, b[i])) i++;
    if (i < len) {
        earley_pop(m->e, i);
        return false;
    }
    m->bytes_of[m->n++] = (uint32_t)len;
    return true;
}

void grammar_matcher_rollback(grammar_matcher *m, size_t n) {
    size_t bytes = 0;
    for (; n > 0 && m->n > 0; n--) bytes += m->bytes_of[--m->n];
    earley_pop(m->e, bytes);
}

size_t grammar_matcher_tokens(const grammar_matcher *m) { return m->n; }
bool grammar_matcher_complete(const grammar_matcher *m) { return earley_accepting(m->e); }

void grammar_matcher_mask(grammar_matcher *m, uint64_t *mask) {
    earley_mask_sliced(m->e, m->ts, m->terms, mask);
}
