/* test_block_pool.c — the lower layers of kv/ on their own, without the
 * prefix cache or a model: the block pool (free blocks before evictions,
 * low ids first; cached blocks held by none become idle in least recently
 * used order and are evicted oldest first, the evict subscriber hearing of a
 * block while it is still cached and intact, before its REMOVED event; the
 * idle budget; silent blocks announced by no event and not counted), and the
 * block tables over it (references through the pool, copy-on-write of a
 * shared block and uncaching of a private cached one before a write,
 * lengths recorded, blocks let go last first), with kv_check after each
 * step. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/tensor.h"
#include "kv/block_key.h"
#include "kv/block_pool.h"
#include "kv/block_table.h"
#include "kv/kv_check.h"

#define B KV_BLOCK_SIZE
enum { HD = 8, N_BLOCKS = 4 };

typedef struct heard {
    int n_evicted, n_stored, n_removed, n_flush;
    int32_t evicted[8];
    bool intact[8];   /* the evicted block was still cached, under its key, when told */
    int order[16];    /* 'e' eviction, 's' stored, 'r' removed, in order */
    int n_order;
    kv_key want_key[N_BLOCKS];
} heard;

static void on_evict(void *user, const block_pool *p, int32_t b) {
    heard *h = user;
    const block_meta *m = bpool_meta(p, b);
    if (h->n_evicted < 8) {
        h->evicted[h->n_evicted] = b;
        h->intact[h->n_evicted] = m->cached && bpool_find(p, m->key) == b && kv_key_eq(m->key, h->want_key[b]) &&
                                  bpool_tokens(p, b)[0] == 1000 + b;
    }
    h->n_evicted++;
    if (h->n_order < 16) h->order[h->n_order++] = 'e';
}

static void on_event(void *user, const kv_event *ev) {
    heard *h = user;
    int c = 'f';
    if (ev->kind == KV_EVENT_STORED) h->n_stored++, c = 's';
    else if (ev->kind == KV_EVENT_REMOVED) h->n_removed++, c = 'r';
    else h->n_flush++;
    if (h->n_order < 16) h->order[h->n_order++] = c;
}

static void check_ok(const block_pool *p, const block_table *t, const char *when) {
    char msg[256];
    CHECK_MSG(kv_check(p, t, msg, sizeof msg) == 0, "%s: %s", when, msg);
}

/* Cache block b (held by the caller) as a full block with ids 1000 + b, .... */
static kv_key cache_full(block_pool *p, int32_t b, bool silent) {
    int32_t toks[B];
    for (int i = 0; i < B; i++) toks[i] = 1000 + b + i;
    const kv_key root = block_root((kv_key){1, 2}, bpool_layout(p), NULL);
    const kv_key k = block_key(root, toks, B);
    bpool_cache(p, b, k, root, false, toks, B, silent);
    return k;
}

static void test_pool(void) {
    block_pool p;
    block_table t;
    wick_error err;
    heard h = {0};
    CHECK(bpool_init(&p, (kv_layout){2, 1, HD, WICK_F32}, N_BLOCKS, &err) == 0);
    CHECK(btable_init(&t, &p, 1, N_BLOCKS * B, &err) == 0);
    bpool_on_evict(&p, on_evict, &h);
    bpool_set_events(&p, on_event, &h);
    /* low ids first, then none */
    for (int32_t i = 0; i < N_BLOCKS; i++) CHECK_INT(bpool_take(&p), i);
    CHECK_INT(bpool_take(&p), -1);
    for (int32_t i = 0; i < N_BLOCKS; i++) bpool_ref(&p, i);
    /* blocks 0 and 1 cached; 1 silent: no event, not counted */
    h.want_key[0] = cache_full(&p, 0, false);
    h.want_key[1] = cache_full(&p, 1, true);
    CHECK_INT(h.n_stored, 1);
    CHECK_INT(bpool_n_full(&p), 1);
    CHECK_INT(bpool_find(&p, h.want_key[0]), 0);
    CHECK_INT(bpool_find(&p, h.want_key[1]), 1);
    /* let go: 1 becomes idle first, then 0; 2 and 3 (not cached) go free */
    bpool_unref(&p, 1);
    bpool_unref(&p, 0);
    bpool_unref(&p, 3);
    bpool_unref(&p, 2);
    CHECK_INT(bpool_n_idle(&p), 2);
    CHECK_INT(bpool_n_free(&p), 2);
    check_ok(&p, &t, "idle");
    /* free blocks before evictions: the last freed first */
    CHECK_INT(bpool_take(&p), 2);
    CHECK_INT(bpool_take(&p), 3);
    CHECK_INT(h.n_evicted, 0);
    /* then the least recently used idle block, told while intact, before REMOVED (none: silent) */
    CHECK_INT(bpool_take(&p), 1);
    CHECK_INT(h.n_evicted, 1);
    CHECK(h.intact[0]);
    CHECK_INT(h.n_removed, 0);
    CHECK_INT(bpool_find(&p, h.want_key[1]), -1);
    h.n_order = 0;
    CHECK_INT(bpool_evict_one(&p), 0);
    CHECK(h.intact[1]);
    CHECK(h.n_order == 2 && h.order[0] == 'e' && h.order[1] == 'r');
    CHECK_INT(bpool_n_full(&p), 0);
    CHECK_INT(bpool_evict_one(&p), -1);
    bpool_give_back(&p, 0);
    bpool_give_back(&p, 1);
    bpool_give_back(&p, 2);
    bpool_give_back(&p, 3);
    check_ok(&p, &t, "all free");
    bpool_flush_events(&p);
    CHECK_INT(h.n_flush, 1);
    bpool_flush_events(&p);
    CHECK_INT(h.n_flush, 1); /* nothing since */

    /* the idle budget: the oldest idle block goes to the free list */
    bpool_set_budget(&p, 1);
    const int32_t a = bpool_take(&p), b = bpool_take(&p);
    bpool_ref(&p, a);
    bpool_ref(&p, b);
    h.want_key[a] = cache_full(&p, a, false);
    h.want_key[b] = cache_full(&p, b, false);
    const int ev = h.n_evicted;
    bpool_unref(&p, a);
    bpool_unref(&p, b);
    CHECK_INT(h.n_evicted, ev + 1);
    CHECK_INT(h.evicted[ev], a);
    CHECK_INT(bpool_n_idle(&p), 1);
    CHECK_INT(bpool_find(&p, h.want_key[b]), b);
    check_ok(&p, &t, "budget");
    /* an idle block taken by a sequence is no longer evictable */
    btable_append(&t, 0, b);
    CHECK_INT(bpool_n_idle(&p), 0);
    CHECK_INT(bpool_evict_one(&p), -1);
    btable_clear(&t, 0);
    CHECK_INT(bpool_n_idle(&p), 1);
    check_ok(&p, &t, "held and let go");
    btable_free(&t);
    bpool_free(&p);
}

static void fill_block(block_pool *p, const int32_t *table, int from, int to, float base) {
    float k[HD], v[HD];
    for (int il = 0; il < p->n_layer; il++)
        for (int pos = from; pos < to; pos++) {
            for (int d = 0; d < HD; d++) k[d] = base + (float)(il * 10000 + pos * 10 + d), v[d] = -k[d];
            bpool_store(p, il, table, pos, k, v);
        }
}

static bool same_rows(const block_pool *p, const int32_t *ta, const int32_t *tb, int n) {
    for (int il = 0; il < p->n_layer; il++) {
        const attn_kv va = bpool_view(p, il, ta), vb = bpool_view(p, il, tb);
        for (int pos = 0; pos < n; pos++)
            if (memcmp(attn_kv_at(&va, va.k, pos, 0), attn_kv_at(&vb, vb.k, pos, 0), HD * sizeof(float)) ||
                memcmp(attn_kv_at(&va, va.v, pos, 0), attn_kv_at(&vb, vb.v, pos, 0), HD * sizeof(float)))
                return false;
    }
    return true;
}

static void test_tables(void) {
    block_pool p;
    block_table t;
    wick_error err;
    CHECK(bpool_init(&p, (kv_layout){2, 1, HD, WICK_F32}, N_BLOCKS, &err) == 0);
    CHECK(btable_init(&t, &p, 2, 2 * B, &err) == 0);
    int32_t toks[2 * B];
    for (int i = 0; i < 2 * B; i++) toks[i] = i + 1;
    /* sequence 0 writes 1.5 blocks */
    CHECK(btable_reserve(&t, 0, B + B / 2, &err) == 0);
    fill_block(&p, btable_blocks(&t, 0), 0, B + B / 2, 0);
    btable_record(&t, 0, 0, toks, B + B / 2);
    CHECK_INT(btable_len(&t, 0), B + B / 2);
    CHECK(memcmp(btable_tokens(&t, 0), toks, (B + B / 2) * sizeof *toks) == 0);
    btable_record(&t, 0, 3, toks + 3, 2); /* rewriting held positions does not shorten it */
    CHECK_INT(btable_len(&t, 0), B + B / 2);
    check_ok(&p, &t, "written");
    /* sequence 1 shares both blocks (as an attach would) */
    btable_append(&t, 1, btable_blocks(&t, 0)[0]);
    btable_append(&t, 1, btable_blocks(&t, 0)[1]);
    btable_record(&t, 1, 0, toks, B + B / 2);
    const int32_t shared = btable_blocks(&t, 1)[1];
    CHECK_INT(p.ref[shared], 2);
    /* sequence 1 cuts back into the shared block: it writes into a private copy of its kept rows */
    btable_truncate(&t, 1, B + 10);
    CHECK_INT(btable_len(&t, 1), B + 10);
    CHECK(btable_blocks(&t, 1)[1] != shared);
    CHECK_INT(p.ref[shared], 1);
    CHECK(same_rows(&p, btable_blocks(&t, 0), btable_blocks(&t, 1), B + 10));
    check_ok(&p, &t, "copy on write");
    /* a private cached block stops being cached before a write */
    const kv_key k = cache_full(&p, btable_blocks(&t, 0)[0], false);
    CHECK(bpool_meta(&p, btable_blocks(&t, 0)[0])->cached);
    btable_truncate(&t, 1, 5); /* sequence 1's block 0 is shared with 0: copied */
    CHECK(bpool_meta(&p, btable_blocks(&t, 0)[0])->cached);
    btable_truncate(&t, 0, 7); /* sequence 0's block 0 is now private: uncached */
    CHECK(!bpool_meta(&p, btable_blocks(&t, 0)[0])->cached);
    CHECK_INT(bpool_find(&p, k), -1);
    CHECK_INT(btable_n_blocks(&t, 0), 1);
    check_ok(&p, &t, "uncached before a write");
    /* no block left for a copy: cut back to the block's start */
    btable_clear(&t, 1);
    btable_append(&t, 1, btable_blocks(&t, 0)[0]);
    btable_record(&t, 1, 0, toks, 7);
    while (bpool_take(&p) >= 0) {
    }
    btable_truncate(&t, 1, 3);
    CHECK_INT(btable_len(&t, 1), 0);
    CHECK_INT(btable_n_blocks(&t, 1), 0);
    /* reserving with no block left fails, naming it */
    CHECK(btable_reserve(&t, 1, 1, &err) < 0);
    CHECK(strstr(err.msg, "full") != NULL);
    CHECK(btable_reserve(&t, 1, 2 * B + 1, &err) < 0);
    btable_free(&t);
    bpool_free(&p);
}

int main(void) {
    RUN(test_pool);
    RUN(test_tables);
    return check_summary("test_block_pool");
}
