/* test_kv_cache.c — kv/kv_cache.c, the paged KV cache: every value
 * stored (each layer, sequence, position, head and dim, K and V, F32 and
 * F16) reads back through kv_view / attn_kv_at, so no two of them share
 * memory; a block's values for every layer lie within that block's run of
 * the pool (memory is committed as positions are used); blocks are handed
 * out low ids first, never to two sequences, come back on truncation and
 * are reused; reserving past the context or a full pool is an error. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/tensor.h"
#include "kv/kv_cache.h"
#include "kernels/convert.h"

/* Lengths in blocks and parts of blocks, whatever KV_BLOCK_SIZE is. */
#define B KV_BLOCK_SIZE
enum { N_LAYER = 3, N_KV = 2, HD = 16, N_CTX = 3 * B + B / 2, N_SEQ = 2 };

/* A value unique to (layer, seq, pos, head, dim, K or V), exact in F16 (an
 * integer below 2048) when the cache is F16, else a wider unique integer. */
static float value(int f16, int il, int s, int p, int h, int d, int is_v) {
    if (f16) return (float)(((il * 7 + s * 3 + p * 5 + h * 11 + d + is_v * 13) % 2000) - 1000);
    return (float)(((((il * N_SEQ + s) * N_CTX + p) * N_KV + h) * HD + d) * 2 + is_v);
}

static float read_at(const attn_kv *view, const void *base, int p, int h, int d) {
    const char *at = attn_kv_at(view, base, p, h);
    if (view->type == WICK_F16) return fp16_to_f32(((const uint16_t *)at)[d]);
    return ((const float *)at)[d];
}

static void test_store_and_read(int type) {
    const int f16 = type == WICK_F16;
    kv_cache kv;
    wick_error err;
    CHECK(kv_cache_init(&kv, N_LAYER, N_KV, HD, N_CTX, N_SEQ, type, &err) == 0);
    const int len[N_SEQ] = {2 * B + B / 4, B + 3};
    for (int s = 0; s < N_SEQ; s++) CHECK(kv_reserve(&kv, s, len[s], &err) == 0);
    float k[N_KV * HD], v[N_KV * HD];
    for (int il = 0; il < N_LAYER; il++)
        for (int s = 0; s < N_SEQ; s++)
            for (int p = 0; p < len[s]; p++) {
                for (int h = 0; h < N_KV; h++)
                    for (int d = 0; d < HD; d++) {
                        k[h * HD + d] = value(f16, il, s, p, h, d, 0);
                        v[h * HD + d] = value(f16, il, s, p, h, d, 1);
                    }
                kv_store(&kv, il, s, p, k, v);
            }
    int bad = 0, outside = 0;
    const char *base = kv.pool.base;
    for (int il = 0; il < N_LAYER; il++)
        for (int s = 0; s < N_SEQ; s++) {
            const attn_kv view = kv_view(&kv, il, s);
            for (int p = 0; p < len[s]; p++) {
                const int32_t blk = view.blocks[p / KV_BLOCK_SIZE];
                const char *lo = base + (size_t)blk * view.block_stride, *hi = lo + view.block_stride;
                for (int h = 0; h < N_KV; h++) {
                    const char *kr = attn_kv_at(&view, view.k, p, h), *vr = attn_kv_at(&view, view.v, p, h);
                    const size_t row = (size_t)HD * kv.pool.elem_bytes;
                    outside += kr < lo || kr + row > hi || vr < lo || vr + row > hi;
                    for (int d = 0; d < HD; d++) {
                        bad += read_at(&view, view.k, p, h, d) != value(f16, il, s, p, h, d, 0);
                        bad += read_at(&view, view.v, p, h, d) != value(f16, il, s, p, h, d, 1);
                    }
                }
            }
        }
    CHECK_INT(bad, 0);
    CHECK_INT(outside, 0);
    kv_cache_free(&kv);
}

static void test_blocks(void) {
    kv_cache kv;
    wick_error err;
    CHECK(kv_cache_init(&kv, N_LAYER, N_KV, HD, N_CTX, N_SEQ, WICK_F32, &err) == 0);
    const int per_seq = (N_CTX + B - 1) / B; /* 4 */
    CHECK_INT(kv_blocks_total(&kv), per_seq * N_SEQ);
    CHECK(kv_reserve(&kv, 0, 2 * B + 6, &err) == 0); /* 3 blocks: ids 0, 1, 2 */
    CHECK_INT(kv_seq_blocks(&kv, 0), 3);
    const int32_t *t0 = kv.tab.blocks, *t1 = kv.tab.blocks + per_seq;
    CHECK(t0[0] == 0 && t0[1] == 1 && t0[2] == 2);
    CHECK(kv_reserve(&kv, 1, B + 1, &err) == 0); /* 2 blocks, ids 3 and 4 */
    CHECK(t1[0] == 3 && t1[1] == 4);
    CHECK(kv_reserve(&kv, 0, 2 * B, &err) == 0); /* already held: nothing changes */
    CHECK_INT(kv_seq_blocks(&kv, 0), 3);

    /* A sequence longer than the context is an error naming both numbers. */
    char want[2][16];
    snprintf(want[0], sizeof want[0], "%d", N_CTX + 1);
    snprintf(want[1], sizeof want[1], "%d", N_CTX);
    CHECK(kv_reserve(&kv, 0, N_CTX + 1, &err) < 0);
    CHECK(strstr(err.msg, want[0]) && strstr(err.msg, want[1]));

    /* Truncation gives whole blocks back; the next sequence to grow reuses them. */
    kv.tab.len[0] = 2 * B + 6;
    kv_truncate(&kv, 0, B / 2); /* keeps block 0 */
    CHECK_INT(kv_seq_len(&kv, 0), B / 2);
    CHECK_INT(kv_seq_blocks(&kv, 0), 1);
    CHECK(kv_reserve(&kv, 1, 2 * B + 1, &err) == 0); /* needs 3 - 2 = 1 more block */
    CHECK(t1[2] == 1 || t1[2] == 2);
    kv_truncate(&kv, 0, 0);
    CHECK_INT(kv_seq_blocks(&kv, 0), 0);

    /* No block in two tables. */
    int owner[64];
    for (int i = 0; i < kv_blocks_total(&kv); i++) owner[i] = -1;
    int shared = 0;
    for (int s = 0; s < N_SEQ; s++)
        for (int i = 0; i < kv_seq_blocks(&kv, s); i++) {
            const int32_t b = kv.tab.blocks[(size_t)s * per_seq + i];
            shared += owner[b] >= 0;
            owner[b] = s;
        }
    CHECK_INT(shared, 0);
    kv_cache_free(&kv);

    /* A pool with no free block left reports it (the pool holds n_seq × n_ctx
     * positions today, so only a simulated shortage reaches it). */
    CHECK(kv_cache_init(&kv, 1, 1, HD, B, 1, WICK_F32, &err) == 0);
    CHECK(kv_reserve(&kv, 0, B, &err) == 0);
    kv.pool.n_free = 0;
    kv.tab.n_blocks[0] = 0; /* as if another sequence held the only block */
    CHECK(kv_reserve(&kv, 0, 1, &err) < 0);
    CHECK(strstr(err.msg, "full") != NULL);
    kv_cache_free(&kv);

    CHECK(kv_cache_init(&kv, 1, 1, HD, 8, 1, WICK_BF16, &err) < 0); /* F32 or F16 only */
}

static void test_f32(void) { test_store_and_read(WICK_F32); }
static void test_f16(void) { test_store_and_read(WICK_F16); }

int main(void) {
    RUN(test_f32);
    RUN(test_f16);
    RUN(test_blocks);
    return check_summary("test_kv_cache");
}
