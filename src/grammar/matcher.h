/* matcher.h — one request's place in its grammar, by tokens: accept a
 * sampled (or drafted) token, roll back the last n tokens (speculative
 * verification), say whether the output may end here, and compute the mask
 * of the tokens that may come next. The grammar and the vocabulary trie are
 * shared and must outlive the matcher. */
#ifndef WICK_GRAMMAR_MATCHER_H
#define WICK_GRAMMAR_MATCHER_H

#include "grammar/earley.h"

typedef struct grammar_matcher grammar_matcher;

grammar_matcher *grammar_matcher_new(const cfg *g, const token_trie *vocab, wick_error *err);
void grammar_matcher_free(grammar_matcher *m);

/* Takes token id: true, or false (the grammar forbids it; nothing changed).
 * Tokens left out of the trie (special tokens) are always forbidden. */
bool grammar_matcher_accept(grammar_matcher *m, int32_t id);
/* Forgets the last n accepted tokens (at most those accepted). */
void grammar_matcher_rollback(grammar_matcher *m, size_t n);
size_t grammar_matcher_tokens(const grammar_matcher *m);
/* May the output end here (end-of-generation allowed)? */
bool grammar_matcher_complete(const grammar_matcher *m);
/* The tokens that may come next, over the sliced vocabulary (slices built
 * from the same vocabulary; terms: the slices' expressions in the grammar's
 * store, token_slices_terms). */
void grammar_matcher_mask(grammar_matcher *m, const token_slices *ts, const rx_id *terms, uint64_t *mask);

#endif
