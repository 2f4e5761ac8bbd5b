/* prefix_cache.h — the automatic prefix cache: sequences start with the
 * cached blocks of their prompt and put the blocks they fill in the cache
 * (the model: vLLM v1's KVCacheManager over its BlockPool). Above
 * block_table.h, block_pool.h and block_key.h, and block_disk.h as the tier
 * a miss is read back from; nothing below calls it.
 *
 * Every full block a sequence computes gets a content key (block_key.h:
 * its parent's key, its length, its token ids; the chain starts from the
 * sequence's root). A block whose key is known is never computed again: a
 * new sequence walks its prompt's chain and holds every cached block it
 * finds (shared, read-only), then copies the best partly matching block (a
 * full block or the kept tail of a finished sequence) up to the last
 * matching token, and computes only the rest. The pool keeps blocks held by
 * no sequence cached, least recently used first out (block_pool.h).
 *
 * Per sequence it keeps the root of its chain, how many of its leading
 * blocks are cached or were checked against the cache (registered), the key
 * of the last of those (the next block's parent), and how many of its
 * positions may be cached at all (a limit: what lies past a span request's
 * prefix is not what an ordinary prefill of its tokens computes).
 * Invariant: registered blocks <= min(length, limit) / KV_BLOCK_SIZE.
 *
 * Silent blocks are a span's stored rows rather than a prefix (engine/
 * spans.c): no KV event announces them and they are not counted as full
 * blocks; whether blocks enter silently is a parameter of the calls that
 * cache them.
 *
 * Exactness: the kernels are batch-invariant, so a block's K and V depend
 * only on the tokens at and before its positions; a reused block holds the
 * same bits the sequence would have computed. */
#ifndef WICK_KV_PREFIX_CACHE_H
#define WICK_KV_PREFIX_CACHE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "kv/block_disk.h"
#include "kv/block_key.h"
#include "kv/block_pool.h"
#include "kv/block_table.h"
#include "wick.h"

/* A limit that lets every position of a sequence be cached. */
#define PREFIX_ALL INT_MAX

typedef struct prefix_cache prefix_cache;

/* The cache over pool and the sequences of tab (neither owned). identity
 * names everything but the tokens that decides a block's contents (model,
 * weight type, RoPE; the KV layout and type are the pool's). */
prefix_cache *prefix_cache_new(block_pool *pool, block_table *tab, kv_key identity, wick_error *err);
void prefix_cache_free(prefix_cache *pc);
kv_key prefix_identity(const prefix_cache *pc);
/* The tier a miss is read back from (NULL = none; not owned). */
void prefix_set_disk(prefix_cache *pc, block_disk *disk);

/* Start the empty sequence s on tokens[0, n) with the cached blocks of its
 * chain from root, reusing at most max_reuse tokens; only positions
 * [0, limit) of s may enter the cache until it is released (PREFIX_ALL: all).
 * Returns the tokens now held (its length). */
int prefix_attach(prefix_cache *pc, int s, kv_key root, const int32_t *tokens, int max_reuse, int limit);
/* The same for a sequence that is only read (a span's stored rows): the
 * partly matching block is held as it is, shared, rather than copied, so a
 * hit takes no block; blocks read back from disk enter the cache silent if
 * asked. s must not be written before prefix_release. */
int prefix_attach_read(prefix_cache *pc, int s, kv_key root, const int32_t *tokens, int n, bool silent);
/* Put the full blocks s has filled since the last call (within its limit)
 * in the cache, silent if asked. */
void prefix_commit(prefix_cache *pc, int s, bool silent);
/* Drop positions [from, len) of s (btable_truncate), forgetting the
 * registration of blocks past what it keeps. */
void prefix_truncate(prefix_cache *pc, int s, int from);
/* End s: its full blocks and its partly filled last block (a tail), within
 * its limit and positions [0, limit), enter the cache (silent if asked), and
 * every block it held is let go (cached blocks stay until evicted). */
void prefix_release(prefix_cache *pc, int s, int limit, bool silent);

/* Forget the cached KV of tokens[0, n) on the chain from root: each of its
 * full blocks and its partly filled last block, in the pool and in the cache
 * folder. A block a sequence holds stays with it (uncached). Returns the
 * blocks forgotten. */
int prefix_forget(prefix_cache *pc, kv_key root, const int32_t *tokens, int n);

#endif
