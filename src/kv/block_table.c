/* block_table.c — per-sequence block tables, token ids and lengths (see
 * block_table.h). Every reference a table entry makes goes through the pool
 * (bpool_ref / bpool_unref), so the pool's counts always match the tables. */
#include "kv/block_table.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int btable_init(block_table *t, block_pool *pool, int n_seq, int n_ctx, wick_error *err) {
    memset(t, 0, sizeof *t);
    t->pool = pool;
    t->n_seq = n_seq;
    t->n_ctx = n_ctx;
    t->max_blocks = (n_ctx + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    t->blocks = malloc((size_t)n_seq * (size_t)t->max_blocks * sizeof *t->blocks);
    t->n_blocks = calloc((size_t)n_seq, sizeof *t->n_blocks);
    t->len = calloc((size_t)n_seq, sizeof *t->len);
    t->tokens = malloc((size_t)n_seq * (size_t)n_ctx * sizeof *t->tokens);
    if (!t->blocks || !t->n_blocks || !t->len || !t->tokens) {
        btable_free(t);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory allocating the KV cache's sequences");
    }
    return 0;
}

void btable_free(block_table *t) {
    free(t->blocks);
    free(t->n_blocks);
    free(t->len);
    free(t->tokens);
    memset(t, 0, sizeof *t);
}

static int32_t *table_of(const block_table *t, int s) { return t->blocks + (size_t)s * t->max_blocks; }

void btable_append(block_table *t, int s, int32_t b) {
    bpool_ref(t->pool, b);
    table_of(t, s)[t->n_blocks[s]++] = b;
}

void btable_adopt(block_table *t, int s, int32_t b) { table_of(t, s)[t->n_blocks[s]++] = b; }

int btable_reserve(block_table *t, int s, int new_len, wick_error *err) {
    if (new_len > t->n_ctx)
        return wick_fail(err, "sequence needs %d positions but the context holds %d", new_len, t->n_ctx);
    const int need = (new_len + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    while (t->n_blocks[s] < need) {
        const int32_t b = bpool_take(t->pool);
        if (b < 0) return wick_fail(err, "KV cache is full (%d blocks)", t->pool->n_blocks);
        btable_append(t, s, b);
    }
    return 0;
}

void btable_record(block_table *t, int s, int at, const int32_t *tokens, int n) {
    if (n <= 0) return;
    memcpy(t->tokens + (size_t)s * t->n_ctx + at, tokens, (size_t)n * sizeof *tokens);
    if (at + n > t->len[s]) t->len[s] = at + n;
}

void btable_truncate(block_table *t, int s, int from) {
    if (from < 0) from = 0;
    if (from >= t->len[s]) return;
    block_pool *p = t->pool;
    const int keep = (from + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE;
    int32_t *table = table_of(t, s);
    while (t->n_blocks[s] > keep) bpool_unref(p, table[--t->n_blocks[s]]);
    const int i = from / KV_BLOCK_SIZE;
    if (from % KV_BLOCK_SIZE) {
        /* s writes into block i next: it must be private and not cached */
        const int32_t b = table[i];
        if (p->ref[b] > 1) { /* others read it: write into a private copy */
            const int32_t d = bpool_take(p);
            if (d >= 0) {
                bpool_copy(p, d, b, from % KV_BLOCK_SIZE);
                bpool_ref(p, d);
                table[i] = d;
            } else {
                t->n_blocks[s] = i;
                from = i * KV_BLOCK_SIZE;
            }
            bpool_unref(p, b);
        } else {
            bpool_uncache(p, b); /* only s holds it: it stops being cached */
        }
    }
    t->len[s] = from;
}

void btable_clear(block_table *t, int s) {
    int32_t *table = table_of(t, s);
    /* Last block first: a chain's parents end up more recent than its leaves. */
    while (t->n_blocks[s] > 0) bpool_unref(t->pool, table[--t->n_blocks[s]]);
    t->len[s] = 0;
}
