/* matcher.h — one request's place in its grammar, by tokens: accept a
 * sampled (or drafted) token, roll back the last n tokens (speculative
 * verification), say whether the output may end here, and compute the mask
 * of the tokens that may come next. The grammar and the vocabulary are shared
 * (read only) and must outlive the matcher. */
#ifndef WICK_GRAMMAR_MATCHER_H
#define WICK_GRAMMAR_MATCHER_H

#include "grammar/earley.h"

typedef struct grammar_matcher grammar_matcher;

/* A matcher at the start of g over vocabulary vocab, its masks computed over
 * ts (slices of the same vocabulary; terms: the slices' expressions in g's
 * store, token_slices_terms). It reads a copy of base (g's store, or a copy
 * of it grown by earlier matchers: the same terms under the same ids, more
 * DFA rows filled; NULL = g's store), so matchers of one grammar may run on
 * different threads at once (g and base are only read). plans: the mask
 * plans published by the matcher whose store base is (earley_plans_publish;
 * a reference taken), or NULL. */
grammar_matcher *grammar_matcher_new(const cfg *g, const rx_store *base, earley_plans *plans, const token_trie *vocab,
                                     const token_slices *ts, const rx_id *terms, wick_error *err);
/* Frees m and hands back its store (what it filled on top of its base), or
 * NULL (then freed too) when it ran out of memory; *plans: its mask plans
 * and those it was given, published for matchers copying that store (NULL:
 * none). */
rx_store *grammar_matcher_free_keep_store(grammar_matcher *m, earley_plans **plans);
void grammar_matcher_free(grammar_matcher *m);

/* Takes token id: true, or false (the grammar forbids it; nothing changed).
 * Tokens left out of the trie (special tokens) are always forbidden. */
bool grammar_matcher_accept(grammar_matcher *m, int32_t id);
/* Forgets the last n accepted tokens (at most those accepted). */
void grammar_matcher_rollback(grammar_matcher *m, size_t n);
size_t grammar_matcher_tokens(const grammar_matcher *m);
/* May the output end here (end-of-generation allowed)? */
bool grammar_matcher_complete(const grammar_matcher *m);
/* The tokens that may come next (token_mask_words words, cleared first);
 * end-of-generation tokens are the caller's (grammar_matcher_complete). */
void grammar_matcher_mask(grammar_matcher *m, uint64_t *mask);

#endif
