/* kv_check.c — the invariants of the block pool and the block tables (see
 * kv_check.h), checked from scratch: references counted again from the
 * tables, list memberships counted again from the lists. */
#include "kv/kv_check.h"

#include <stdio.h>
#include <stdlib.h>

int kv_check(const block_pool *p, const block_table *t, char *msg, size_t cap) {
    const int nb = p->n_blocks;
    int *refs = calloc((size_t)nb, sizeof *refs), *seen = calloc((size_t)nb, sizeof *seen);
    int rc = -1;
    if (!refs || !seen) {
        snprintf(msg, cap, "out of memory");
        goto out;
    }
    for (int s = 0; s < t->n_seq; s++) {
        if (t->n_blocks[s] < (t->len[s] + KV_BLOCK_SIZE - 1) / KV_BLOCK_SIZE) {
            snprintf(msg, cap, "sequence %d holds %d tokens in %d blocks", s, t->len[s], t->n_blocks[s]);
            goto out;
        }
        for (int i = 0; i < t->n_blocks[s]; i++) refs[btable_blocks(t, s)[i]]++;
    }
    for (int i = 0; i < p->n_free; i++) seen[p->free_list[i]]++;
    int n_lru = 0;
    for (int32_t b = p->lru_head, prev = -1; b >= 0; prev = b, b = p->meta[b].lru_next) {
        if (p->meta[b].lru_prev != prev || !p->meta[b].in_lru || ++n_lru > nb) {
            snprintf(msg, cap, "LRU list broken at block %d", b);
            goto out;
        }
        seen[b]++;
    }
    if (n_lru != p->n_lru) {
        snprintf(msg, cap, "LRU list has %d blocks, its count says %d", n_lru, p->n_lru);
        goto out;
    }
    for (int b = 0; b < nb; b++) {
        const block_meta *m = &p->meta[b];
        if (refs[b] != p->ref[b]) {
            snprintf(msg, cap, "block %d: %d table entries, refcount %d", b, refs[b], p->ref[b]);
            goto out;
        }
        if ((refs[b] > 0) + seen[b] != 1) {
            snprintf(msg, cap, "block %d is held %d times, free/cached-idle %d times", b, refs[b], seen[b]);
            goto out;
        }
        if (m->in_lru && (!m->cached || refs[b])) {
            snprintf(msg, cap, "block %d is in the LRU list but %s", b, refs[b] ? "held" : "not cached");
            goto out;
        }
        if (m->cached && bpool_find(p, m->key) != b) {
            snprintf(msg, cap, "cached block %d is not found by its key", b);
            goto out;
        }
    }
    if (p->max_idle && p->n_lru > p->max_idle) {
        snprintf(msg, cap, "%d idle cached blocks, budget %d", p->n_lru, p->max_idle);
        goto out;
    }
    /* Every sequence's next write goes to a private block. */
    for (int s = 0; s < t->n_seq; s++) {
        const int i = t->len[s] / KV_BLOCK_SIZE;
        if (i < t->n_blocks[s]) {
            const int32_t b = btable_blocks(t, s)[i];
            if (p->ref[b] != 1 || p->meta[b].cached) {
                snprintf(msg, cap, "sequence %d writes next into shared or cached block %d", s, b);
                goto out;
            }
        }
    }
    rc = 0;
out:
    free(refs);
    free(seen);
    return rc;
}
