/* bench_attention.c — times decode-style attention (attention_multi, one
 * pool hand-off per layer) of S sequences × R query rows each over L layers
 * of a head-major paged KV cache at depth D, with the KV swept out of the
 * caches before every repeat (as a decode step finds it: the weights passed
 * in between). Reports the median and best time of the L layers and the KV
 * bytes read per second. Default shape: Qwen2.5-0.5B (14 heads, 2 KV heads,
 * head_dim 64, 24 layers); Qwen3-0.6B is 16 8 128 28.
 * Usage: build/bench/bench_attention [S 8] [depth 192] [threads 2] [f32|f16] [rows 1]
 *                                    [heads 14] [kv_heads 2] [head_dim 64] [layers 24] [repeats 20] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "core/threadpool.h"
#include "kernels/attention.h"
#include "kernels/convert.h"

#include "bench_tuning.h"
#include "bench_util.h"

#define MAX_S 64
#define MAX_L 128
#define BLOCK 128 /* positions per KV block, as the engine's cache */

static float rnd(void) { return (float)((double)rand() / RAND_MAX - 0.5); }

int main(int argc, char **argv) {
    const int S = arg_int(argc, argv, 1, 8), depth = arg_int(argc, argv, 2, 192);
    const int threads = arg_int(argc, argv, 3, 2), f16 = argc > 4 && strcmp(argv[4], "f16") == 0;
    const int R = arg_int(argc, argv, 5, 1), H = arg_int(argc, argv, 6, 14);
    const int KVH = arg_int(argc, argv, 7, 2), hd = arg_int(argc, argv, 8, 64);
    const int L = arg_int(argc, argv, 9, 24), reps = arg_int(argc, argv, 10, 20);
    if (S < 1 || S > MAX_S || depth < 0 || threads < 1 || R < 1 || R > 64 || KVH < 1 || H < KVH || H % KVH ||
        hd < 8 || hd > ATTN_MAX || hd % 8 || L < 1 || L > MAX_L || reps < 1 || reps > 999) {
        fprintf(stderr, "usage: bench_attention [S] [depth] [threads] [f32|f16] [rows] [heads] [kv_heads] "
                        "[head_dim] [layers] [repeats]\n");
        return 2;
    }
    const size_t esz = f16 ? 2 : 4, blk_bytes = (size_t)BLOCK * KVH * hd * esz;
    const int nbs = (depth + R + BLOCK - 1) / BLOCK; /* blocks per sequence */
    const size_t layer_bytes = (size_t)S * nbs * blk_bytes;
    char **k = calloc((size_t)L, sizeof *k), **v = calloc((size_t)L, sizeof *v);
    int32_t *table = malloc(sizeof(int32_t) * (size_t)S * nbs), *pos = malloc(sizeof(int32_t) * (size_t)S * R);
    float *q = malloc(sizeof(float) * (size_t)S * R * H * hd), *out = malloc(sizeof(float) * (size_t)S * R * H * hd);
    attn_kv *kvs = malloc(sizeof(attn_kv) * (size_t)L * S);
    attn_run *runs = malloc(sizeof(attn_run) * (size_t)L * S);
    const size_t flush_bytes = (size_t)256 << 20;
    char *flush = malloc(flush_bytes);
    double *ms = malloc(sizeof(double) * (size_t)reps);
    if (!k || !v || !table || !pos || !q || !out || !kvs || !runs || !flush || !ms) return 1;
    srand(1);
    for (int l = 0; l < L; l++) {
        k[l] = aligned_alloc(64, layer_bytes);
        v[l] = aligned_alloc(64, layer_bytes);
        if (!k[l] || !v[l]) return 1;
        for (size_t i = 0; i < layer_bytes / esz; i++) {
            const float a = rnd(), b = rnd();
            if (f16) {
                ((uint16_t *)k[l])[i] = f32_to_fp16(a);
                ((uint16_t *)v[l])[i] = f32_to_fp16(b);
            } else {
                ((float *)k[l])[i] = a;
                ((float *)v[l])[i] = b;
            }
        }
    }
    for (int i = 0; i < S * nbs; i++) table[i] = i;
    for (int s = 0; s < S; s++)
        for (int r = 0; r < R; r++) pos[s * R + r] = depth + r;
    for (size_t i = 0; i < (size_t)S * R * H * hd; i++) q[i] = rnd();
    memset(flush, 1, flush_bytes);
    const attn_params ap = {H, KVH, hd, 1.0f / sqrtf((float)hd), 0, 0.0f};
    for (int l = 0; l < L; l++)
        for (int s = 0; s < S; s++) {
            const size_t i = (size_t)l * S + s, o = (size_t)s * R * H * hd;
            kvs[i] = (attn_kv){k[l], v[l], f16 ? WICK_F16 : WICK_F32, table + (size_t)s * nbs, BLOCK,
                               blk_bytes, (size_t)BLOCK * hd * esz, (size_t)hd * esz};
            runs[i] = (attn_run){q + o, R, pos + (size_t)s * R, &kvs[i], out + o};
        }
    wick_error err;
    wick_pool *pool = threads > 1 ? pool_new(threads, &err) : NULL;
    if (threads > 1 && !pool) return 1;
    unsigned sink = 0;
    for (int rep = 0; rep < reps; rep++) {
        for (size_t i = 0; i < flush_bytes; i += 64) sink += (unsigned char)flush[i];
        const double t0 = now_s();
        for (int l = 0; l < L; l++) attention_multi(bench_kt(), pool, &ap, runs + (size_t)l * S, S);
        ms[rep] = (now_s() - t0) * 1e3;
    }
    if (sink == 1) printf(" "); /* keeps the sweep */
    double best = ms[0];
    for (int i = 1; i < reps; i++) best = ms[i] < best ? ms[i] : best;
    const double med = median(ms, reps);
    const double kv_bytes = (double)L * S * KVH * (depth + R) * hd * esz * 2;
    printf("S=%d rows=%d depth=%d %s heads %d/%d head_dim %d, %d layers, %d threads: median %.3f ms, best %.3f ms; "
           "KV %.1f MB, %.1f GB/s at the median\n",
           S, R, depth, f16 ? "f16" : "f32", H, KVH, hd, L, threads, med, best, kv_bytes / 1e6, kv_bytes / med * 1e-6);
    pool_free(pool);
    for (int l = 0; l < L; l++) {
        free(k[l]);
        free(v[l]);
    }
    free(k), free(v), free(table), free(pos), free(q), free(out), free(kvs), free(runs), free(flush), free(ms);
    return 0;
}
