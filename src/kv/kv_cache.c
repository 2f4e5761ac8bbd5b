/* kv_cache.c — the facade over the kv/ stack (see kv_cache.h): builds the
 * pool, the tables, the prefix cache and the cache folder, subscribes the
 * folder to the pool's evictions, and routes sequence calls to the prefix
 * cache when there is one, to the tables when not. */
#include "kv/kv_cache.h"

#include <string.h>

#include "core/error.h"

int kv_cache_init(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq, int type,
                  wick_error *err) {
    return kv_cache_init_pool(kv, n_layer, n_kv_heads, head_dim, n_ctx, n_seq, 0, type, err);
}

int kv_cache_init_pool(kv_cache *kv, int n_layer, int n_kv_heads, int head_dim, int n_ctx, int n_seq,
                       int n_blocks, int type, wick_error *err) {
    memset(kv, 0, sizeof *kv);
    const kv_layout layout = {n_layer, n_kv_heads, head_dim, type};
    const int per_seq = (n_ctx + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    if (n_blocks == 0) n_blocks = per_seq * n_seq;
    if (bpool_init(&kv->pool, layout, n_blocks, err) < 0) return -1;
    if (btable_init(&kv->tab, &kv->pool, n_seq, n_ctx, err) < 0) {
        bpool_free(&kv->pool);
        return -1;
    }
    return 0;
}

void kv_cache_free(kv_cache *kv) {
    if (kv->disk) { /* everything still cached goes to disk */
        disk_store_all(kv->disk, &kv->pool);
        disk_close(kv->disk);
    }
    prefix_cache_free(kv->pc);
    btable_free(&kv->tab);
    bpool_free(&kv->pool);
    memset(kv, 0, sizeof *kv);
}

int kv_enable_prefix_cache(kv_cache *kv, kv_key identity, int max_cached, wick_error *err) {
    if (kv->pc) return 0;
    if (max_cached < 0) return wick_fail(err, "prefix cache budget of %d blocks", max_cached);
    if (!(kv->pc = prefix_cache_new(&kv->pool, &kv->tab, identity, err))) return -1;
    bpool_set_budget(&kv->pool, max_cached);
    return 0;
}

int kv_set_cache_dir(kv_cache *kv, const char *dir, size_t max_bytes, disk_warn_fn warn_fn, void *warn_user,
                     wick_error *err) {
    if (!kv->pc) return wick_fail(err, "the prefix cache is off: no cache directory");
    disk_close(kv->disk);
    kv->disk = disk_open(dir, max_bytes, prefix_identity(kv->pc), &kv->pool, warn_fn, warn_user, err);
    bpool_on_evict(&kv->pool, kv->disk ? disk_evicted : NULL, kv->disk);
    prefix_set_disk(kv->pc, kv->disk);
    return kv->disk ? 0 : -1;
}

void kv_set_events(kv_cache *kv, kv_event_fn fn, void *user) {
    if (kv->pc) bpool_set_events(&kv->pool, fn, user);
}

int kv_disk_warnings(const kv_cache *kv, const char **last) {
    if (last) *last = disk_last_warning(kv->disk);
    return disk_warnings(kv->disk);
}

void kv_disk_errors(const kv_cache *kv, uint64_t counts[WICK_CACHE_ERR_KINDS]) { disk_errors(kv->disk, counts); }

kv_key kv_root(const kv_cache *kv, const char *salt) {
    const kv_key none = {0, 0};
    return block_root(kv->pc ? prefix_identity(kv->pc) : none, bpool_layout(&kv->pool), salt);
}

kv_key kv_span_root(const kv_cache *kv, const char *salt, const int32_t *anchor, int n_anchor) {
    return block_span_root(kv_root(kv, salt), anchor, n_anchor);
}

int kv_attach(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int max_reuse, int limit) {
    if (!kv->pc) return kv_seq_len(kv, s);
    return prefix_attach(kv->pc, s, root, tokens, max_reuse, limit);
}

int kv_attach_read(kv_cache *kv, int s, kv_key root, const int32_t *tokens, int n, bool silent) {
    if (!kv->pc) return kv_seq_len(kv, s);
    return prefix_attach_read(kv->pc, s, root, tokens, n, silent);
}

int kv_forget(kv_cache *kv, kv_key root, const int32_t *tokens, int n) {
    return kv->pc ? prefix_forget(kv->pc, root, tokens, n) : 0;
}

void kv_commit(kv_cache *kv, int s) {
    if (kv->pc) prefix_commit(kv->pc, s, false);
}

void kv_release(kv_cache *kv, int s, int limit, bool silent) {
    if (kv->pc) prefix_release(kv->pc, s, limit, silent);
    else btable_clear(&kv->tab, s);
}

void kv_truncate(kv_cache *kv, int s, int from) {
    if (kv->pc) prefix_truncate(kv->pc, s, from);
    else btable_truncate(&kv->tab, s, from);
}
