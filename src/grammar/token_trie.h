/* token_trie.h — the vocabulary as a byte trie laid out flat in depth-first
 * order, built once per tokenizer: a token mask is a walk of it that skips
 * a whole subtree when the automaton refuses the byte leading into it, so
 * the work grows with the prefixes the grammar admits, not with the
 * vocabulary. Special and control tokens are not in the trie (they never
 * match grammar text); the caller decides about end-of-generation tokens. */
#ifndef WICK_GRAMMAR_TOKEN_TRIE_H
#define WICK_GRAMMAR_TOKEN_TRIE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grammar/regex.h"

typedef struct token_trie token_trie;

/* The bytes of token id (*len of them) into buf (cap bytes), or false to
 * leave the id out (special/control tokens, empty pieces). */
typedef bool (*token_bytes_fn)(void *ctx, int32_t id, uint8_t *buf, size_t cap, size_t *len);

token_trie *token_trie_new(int32_t n_vocab, token_bytes_fn bytes, void *ctx, wick_error *err);

/* A trie of the given pieces alone (bytes not kept: token_trie_bytes
 * answers NULL), or NULL when out of memory; pieces need not outlive it. */
typedef struct token_piece {
    const uint8_t *bytes;
    uint32_t len;
    int32_t id;
} token_piece;
token_trie *token_trie_of_pieces(int32_t n_vocab, const token_piece *pieces, size_t n);
void token_trie_free(token_trie *t);
int32_t token_trie_vocab(const token_trie *t);
size_t token_trie_nodes(const token_trie *t);
/* Token id's bytes (*len of them), or NULL when it was left out. */
const uint8_t *token_trie_bytes(const token_trie *t, int32_t id, size_t *len);

/* A bitset of n_vocab bits (bit i: token i allowed), 64 bits a word. */
static inline size_t token_mask_words(int32_t n_vocab) { return ((size_t)n_vocab + 63) / 64; }
static inline bool token_mask_has(const uint64_t *m, int32_t id) { return (m[id >> 6] >> (id & 63)) & 1; }
/* The bits set in x, inline (__builtin_popcountll is a library call on
 * targets built without a popcount instruction). */
static inline int token_mask_bits(uint64_t x) {
    x -= (x >> 1) & 0x5555555555555555ull;
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (int)((x * 0x0101010101010101ull) >> 56);
}

/* Sets in mask (token_mask_words words, cleared first) every token whose
 * bytes lead r to a live state (one from which some continuation matches):
 * the tokens a regular expression allows next. */
void token_trie_mask_regex(const token_trie *t, rx_store *s, rx_id r, uint64_t *mask);
/* The same tokens added to mask (nothing cleared). */
void token_trie_add_regex(const token_trie *t, rx_store *s, rx_id r, uint64_t *mask);

/* Adds to mask the tokens whose every byte push accepts, walking the trie:
 * push(ctx, byte) steps a recognizer (false: refused, nothing changed),
 * pop(ctx, n) takes back its last n bytes; it ends where it started. */
void token_trie_walk(const token_trie *t, bool (*push)(void *ctx, uint8_t c), void (*pop)(void *ctx, size_t n),
                     void *ctx, uint64_t *mask);

/* The same walk, over the subtree below node (not node itself), for
 * recognizers that keep their own state by depth: step(ctx, depth, byte) is
 * called for a node at `depth` (counted from node: 1 = a byte after it)
 * after its parent was accepted, and says whether it accepts the byte
 * there; no pops are made (the recognizer drops what lies at or below depth
 * itself). */
void token_trie_walk_under(const token_trie *t, size_t node, bool (*step)(void *ctx, size_t depth, uint8_t c),
                           void *ctx, uint64_t *mask);

/* A walk that may stop at a node: step(ctx, node, depth, byte) answers
 * TRIE_REFUSE (the node's subtree is skipped), TRIE_DESCEND (its tokens are
 * added to mask, when mask is not NULL, and its children walked) or
 * TRIE_TAKE_NODE (its tokens added, its subtree below skipped). */
enum { TRIE_REFUSE, TRIE_DESCEND, TRIE_TAKE_NODE };
void token_trie_walk_nodes(const token_trie *t, int (*step)(void *ctx, size_t node, size_t depth, uint8_t c),
                           void *ctx, uint64_t *mask);

int token_trie_max_depth(const token_trie *t);
/* The tokens in node's subtree below and at it: pieces [*first, *first + n),
 * n returned, each piece's id by token_trie_piece_id (pieces in byte order). */
size_t token_trie_pieces_under(const token_trie *t, size_t node, size_t *first);
int32_t token_trie_piece_id(const token_trie *t, size_t i);
size_t token_trie_node_depth(const token_trie *t, size_t node);

#endif
