/* block_table.h — the sequences of a KV cache: each one's block table (its
 * blocks of the pool in position order), the token ids it holds and its
 * length. Above block_pool.h: a table entry is a reference to its block.
 *
 * This is the only writer of a sequence's length: the forward pass and the
 * span placement record what they wrote (btable_record), truncation and
 * release shorten it.
 *
 * Invariants: sequence s holds positions [0, len[s]) in exactly
 * ceil(len[s] / KV_BLOCK_SIZE) blocks once those positions are written (up
 * to what btable_reserve added ahead); the block a sequence writes next is
 * private to it (ref 1, not cached): a shared or cached block it would write
 * into is copied or stops being cached first (copy-on-write). */
#ifndef WICK_KV_BLOCK_TABLE_H
#define WICK_KV_BLOCK_TABLE_H

#include <stdint.h>

#include "kv/block_pool.h"
#include "wick.h"

typedef struct block_table {
    block_pool *pool;   /* the blocks the tables name (not owned) */
    int n_seq, n_ctx;
    int max_blocks;     /* per sequence: ceil(n_ctx / KV_BLOCK_SIZE) */
    int32_t *blocks;    /* [n_seq][max_blocks] */
    int *n_blocks;      /* blocks held per sequence */
    int *len;           /* positions held per sequence */
    int32_t *tokens;    /* [n_seq][n_ctx] token ids per sequence */
} block_table;

/* n_seq empty sequences of up to n_ctx positions over pool. */
int btable_init(block_table *t, block_pool *pool, int n_seq, int n_ctx, wick_error *err);
void btable_free(block_table *t);

static inline const int32_t *btable_blocks(const block_table *t, int s) {
    return t->blocks + (size_t)s * t->max_blocks;
}
static inline int btable_len(const block_table *t, int s) { return t->len[s]; }
static inline int btable_n_blocks(const block_table *t, int s) { return t->n_blocks[s]; }
static inline const int32_t *btable_tokens(const block_table *t, int s) {
    return t->tokens + (size_t)s * t->n_ctx;
}

/* Make sure s has blocks for positions [0, new_len), taking them from the
 * pool (which may evict idle cached blocks). -1 with err if new_len exceeds
 * n_ctx or no block can be had. */
int btable_reserve(block_table *t, int s, int new_len, wick_error *err);
/* Append block b to s's table: one reference more. */
void btable_append(block_table *t, int s, int32_t b);
/* Append block b to s's table, which takes over a reference the caller
 * holds (a pin). */
void btable_adopt(block_table *t, int s, int32_t b);
/* Positions [at, at + n) of s now hold these token ids (their K and V are
 * written): record the ids; the length grows to at + n if it is shorter. */
void btable_record(block_table *t, int s, int at, const int32_t *tokens, int n);
/* Drop positions [from, len) of s, letting go of whole blocks. If `from`
 * falls inside a block others read (shared), s gets a private copy of it,
 * or, when no block is left for the copy, is cut back to that block's
 * start; a cached block only s holds stops being cached. */
void btable_truncate(block_table *t, int s, int from);
/* Let go of every block of s, the last one first; its length becomes 0. */
void btable_clear(block_table *t, int s);

#endif
