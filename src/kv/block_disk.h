/* block_disk.h — the cache's blocks on disk (`--cache-dir`), the tier below
 * the block pool's cache: subscribed to the pool's evictions (an evicted
 * block is written out) and read back into the pool on a miss. Above
 * block_pool.h and block_key.h only.
 *
 * One file per block, `<key as 32 hex digits>.wkv`, holding a header (magic,
 * format version, the cache's identity, the KV layout, the block's key, parent
 * key and token ids), the block's K and V for its positions, and an XXH3-64
 * checksum of all of it. The folder is indexed when the cache opens (headers
 * only); a block's data is read back on a cache miss and checked before it is
 * used: its checksum, and that it is the block asked for (its stored key is
 * the key asked for, and the key of its own parent and token ids is that key
 * too). A file that is not a regular file of this user's, corrupt, truncated
 * or made for another model or KV layout is skipped (and counted, with a
 * message), never trusted. Disk use is bounded: the oldest files are deleted
 * to make room.
 *
 * The folder and its files are private to the user (0700 and 0600: they hold
 * prompts' token ids); a folder that others may write to is refused. Files
 * are written under a temporary name, synced, renamed and the folder synced,
 * so a crash leaves either the old state or the new one; temporary files a
 * crash left behind are deleted when the folder is opened.
 *
 * Failures are counted by kind (wick_cache_error, read from any thread) and
 * reported through a callback the first time each kind occurs; none of them
 * stops the cache: a block that cannot be written is not kept, one that
 * cannot be read back is computed again. */
#ifndef WICK_KV_BLOCK_DISK_H
#define WICK_KV_BLOCK_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kv/block_key.h"
#include "kv/block_pool.h"

typedef struct disk_entry {
    kv_key key, parent;
    bool has_parent;
    int n_tok;
    int32_t tokens[KV_BLOCK_SIZE];
    uint64_t bytes, stamp; /* file size; order of writing or use (files found at open: of modification) */
} disk_entry;

typedef struct block_disk block_disk;

/* Called with a one-line message the first time each kind of failure happens. */
typedef void (*disk_warn_fn)(void *user, const char *message);

/* Open (creating it, private, if needed) and index dir. max_bytes: disk
 * budget (0 = 10 GiB). NULL with err if dir cannot be made or opened, or is
 * not owned by the effective user, or is writable by its group or others. */
block_disk *disk_open(const char *dir, size_t max_bytes, kv_key identity, const block_pool *pool, disk_warn_fn warn_fn,
                      void *warn_user, wick_error *err);
void disk_close(block_disk *d);

/* The index of the entry with this key, or -1. An index is valid until the
 * next call that writes or loads a block (those may delete entries to make
 * room, or drop a bad one): look the key up again afterwards, never keep an
 * index. */
int disk_find(const block_disk *d, kv_key key);
/* Make key's entry the most recently used (the last one deleted to make room). */
void disk_touch(block_disk *d, kv_key key);
/* Read the block filed under key into block b of pool, checked (see above);
 * *out gets its key, parent and token ids as read from the file. -1 if key
 * is not on disk, or (counted, the entry dropped, the file deleted unless it
 * is not a regular file of ours) it cannot be read back or is not the block
 * key names. */
int disk_load(block_disk *d, kv_key key, block_pool *pool, int32_t b, disk_entry *out);
/* A block disk_load returned is not what its caller expects (why): counted
 * as corrupt, the entry dropped, the file deleted. */
void disk_reject(block_disk *d, kv_key key, const char *why);
/* Forget the block filed under key (nothing if none): the entry is dropped,
 * the file deleted. */
void disk_forget(block_disk *d, kv_key key);
/* Write block b (n_tok positions) under key, unless the key is on disk
 * already. -1 on an I/O error (counted; nothing is kept). */
int disk_store(block_disk *d, const block_pool *pool, int32_t b, kv_key key, kv_key parent, bool has_parent,
               const int32_t *tokens, int n_tok);

/* The pool's evict subscriber (bpool_on_evict, user = the block_disk): a
 * cached block being evicted is written out (disk_store). */
void disk_evicted(void *user, const block_pool *pool, int32_t b);
/* Write out every block the pool has cached (when the cache closes). */
void disk_store_all(block_disk *d, const block_pool *pool);
/* A miss of the pool's index: read the block filed under key into a block
 * taken from the pool (which may evict one), checked, and cache it there
 * (idle, the most recently used; silent: a span's rows). parent, has_parent:
 * what the caller's chain says its parent is. The block's id, or -1: not on
 * disk, no block to be had, or it could not be read back or is not the block
 * key names (it is computed again). */
int32_t disk_read_back(block_disk *d, block_pool *pool, kv_key key, kv_key parent, bool has_parent, bool silent);
/* Of the files whose parent is `parent` (has_parent alike) and whose key the
 * pool has not cached, the one whose token ids share the longest run with
 * want[0, n_want), if longer than min_n: that length, and its key in *out;
 * else min_n. d may be NULL. */
int disk_best_child(const block_disk *d, const block_pool *pool, kv_key parent, bool has_parent, const int32_t *want,
                    int n_want, int min_n, kv_key *out);

/* Failures so far of each kind; any thread. Zeros when d is NULL. */
void disk_errors(const block_disk *d, uint64_t counts[WICK_CACHE_ERR_KINDS]);
/* All failures so far, and the last message (for the thread that runs the cache). */
int disk_warnings(const block_disk *d);
const char *disk_last_warning(const block_disk *d);
/* Bytes of the files indexed. */
uint64_t disk_bytes(const block_disk *d);

#endif
