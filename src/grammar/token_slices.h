/* token_slices.h — the vocabulary cut into slices by a few regular
 * expressions of unconstrained text (as in JSON strings), each with its own
 * trie and its own bitset: when the expression allowed next contains a
 * slice's whole language among its prefixes, every token of the slice is allowed and its
 * bitset is taken at once instead of walking its trie. Wide masks (inside a
 * string, 95% of the vocabulary) then cost a containment check and a copy,
 * not a walk of the whole trie. A token goes to the first slice whose
 * expression matches its bytes; the tokens no slice takes form a last one,
 * always walked. */
#ifndef WICK_GRAMMAR_TOKEN_SLICES_H
#define WICK_GRAMMAR_TOKEN_SLICES_H

#include "grammar/token_trie.h"

typedef struct token_slices token_slices;

/* The slices for JSON-like text: strings without quotes, backslashes or
 * control characters, up to 10 bytes, up to 30, any length. */
extern const char *const token_slices_json[3];

token_slices *token_slices_new(int32_t n_vocab, token_bytes_fn bytes, void *ctx, const char *const *patterns,
                               int n_patterns, wick_error *err);
void token_slices_free(token_slices *ts);
int token_slices_count(const token_slices *ts); /* the patterns' slices, the rest not counted */

/* The slices' expressions in store s, terms[0 .. token_slices_count) (once
 * per store); -1 when out of memory. */
int token_slices_terms(const token_slices *ts, rx_store *s, rx_id *terms);

/* As token_trie_mask_regex over the whole vocabulary, a slice taken whole
 * when every string of its language is a prefix of one of r's. */
void token_slices_mask_regex(const token_slices *ts, rx_store *s, const rx_id *terms, rx_id r, uint64_t *mask);

/* Slice i's trie and tokens (i up to token_slices_count: the last is the rest). */
const token_trie *token_slices_trie(const token_slices *ts, int i);
const uint64_t *token_slices_bits(const token_slices *ts, int i);

#endif
