/* kv_check.h — the invariant checker of the KV block pool and the block
 * tables over it (for the tests; it only reads).
 *
 * It checks: every sequence's blocks cover its length; each block's
 * reference count is the number of table entries naming it; every block is
 * held, or else on exactly one of the free list and the LRU queue; the LRU
 * queue is well linked, its count right, and holds only cached blocks no
 * table holds, no more than the budget; every cached block is found by its
 * key; the block each sequence writes next is private and not cached. */
#ifndef WICK_KV_KV_CHECK_H
#define WICK_KV_KV_CHECK_H

#include <stddef.h>

#include "kv/block_pool.h"
#include "kv/block_table.h"

/* 0, or -1 with a message naming the first broken invariant. */
int kv_check(const block_pool *p, const block_table *t, char *msg, size_t cap);

#endif
