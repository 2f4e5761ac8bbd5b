/* test_kernels.c — tests of the compute kernels and the thread pool:
 * conversions and quantizers, matmul at every ISA level against its scalar
 * twin, RMSNorm/RoPE/softmax, paged attention against the reference.
 *
 * Tolerances (stated where used):
 *   - fp16/bf16 conversions and Q8_0/Q4_0 quantizers: bit-exact.
 *   - Q8_0/Q4_0 matmul with all scales = 1: exact equality (integer dots,
 *     every partial sum an integer below 2^24, so float sums are exact).
 *   - matmul in general: |simd - scalar| <= 1e-5 * Σ|w·x| (+1e-30).
 *   - attention vs the double-precision reference: <= 1e-5 * max|v|.
 *   - RoPE composition: <= 1e-5 * |x|. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "tuning.h"
#include "rng.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "kernels/attention.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TEST_X86 1
#else
#define TEST_X86 0
#endif

static float bits_f(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static int n_isas(void) { return (int)cpu_best_isa() + 1; }

/* ---- conversions ---- */

#if TEST_X86
__attribute__((target("f16c"))) static uint16_t hw_f32_to_fp16(float f) {
    return (uint16_t)_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT);
}
__attribute__((target("f16c"))) static float hw_fp16_to_f32(uint16_t h) { return _cvtsh_ss(h); }
#endif

static void test_fp16(void) {
    /* every half -> f32 -> half round trips (nan payloads stay nan) */
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = fp16_to_f32((uint16_t)h);
        uint16_t back = f32_to_fp16(f);
        bool is_nan = ((h >> 10) & 0x1f) == 0x1f && (h & 0x3ff);
        if (is_nan ? !isnan(f) || ((back >> 10) & 0x1f) != 0x1f || !(back & 0x3ff) : back != h) bad++;
    }
    CHECK_INT(bad, 0);
    CHECK(fp16_to_f32(0x3c00) == 1.0f);
    CHECK(fp16_to_f32(0xc000) == -2.0f);
    CHECK(fp16_to_f32(0x0001) == 0x1p-24f);
    CHECK(fp16_to_f32(0x7bff) == 65504.0f);
    CHECK_INT(f32_to_fp16(65504.0f), 0x7bff);
    CHECK_INT(f32_to_fp16(65519.99f), 0x7bff);
    CHECK_INT(f32_to_fp16(65520.0f), 0x7c00); /* tie rounds to even = inf */
    CHECK_INT(f32_to_fp16(1e10f), 0x7c00);
    CHECK_INT(f32_to_fp16(-INFINITY), 0xfc00);
    CHECK_INT(f32_to_fp16(1.0f + 0x1p-11f), 0x3c00);              /* tie to even (down) */
    CHECK_INT(f32_to_fp16(1.0f + 3 * 0x1p-11f), 0x3c02);          /* tie to even (up) */
    CHECK_INT(f32_to_fp16(0x1p-25f), 0x0000);                     /* half of min subnormal: tie to 0 */
    CHECK_INT(f32_to_fp16(0x1.8p-24f), 0x0002);                   /* 1.5 ulp -> 2 */
    CHECK_INT(f32_to_fp16(0x1.ffcp-15f), 0x0400);                 /* rounds up into normals */
    CHECK_INT(f32_to_fp16(-0.0f), 0x8000);
    CHECK(isnan(fp16_to_f32(f32_to_fp16(NAN))));
#if TEST_X86
    if (cpu_get_features()->f16c) {
        /* random bit patterns and values near every half boundary vs the F16C instruction */
        int diff = 0;
        for (int i = 0; i < 2000000; i++) {
            float f = (i & 1) ? bits_f(rnd_u32() ^ (rnd_u32() << 16))
                              : fp16_to_f32((uint16_t)rnd_u32()) * (1.0f + (float)(int)(rnd_u32() % 9 - 4) * 0x1p-12f);
            if (isnan(f)) continue;
            if (f32_to_fp16(f) != hw_f32_to_fp16(f)) diff++;
        }
        CHECK_INT(diff, 0);
        int diff2 = 0;
        for (uint32_t h = 0; h < 65536; h++) {
            float a = fp16_to_f32((uint16_t)h), b = hw_fp16_to_f32((uint16_t)h);
            if (f_bits(a) != f_bits(b)) diff2++;
        }
        CHECK_INT(diff2, 0);
    }
#endif
}

static void test_bf16(void) {
    CHECK_INT(f32_to_bf16(1.0f), 0x3f80);
    CHECK(bf16_to_f32(0x3f80) == 1.0f);
    CHECK_INT(f32_to_bf16(bits_f(0x3f808000)), 0x3f80); /* tie, even stays */
    CHECK_INT(f32_to_bf16(bits_f(0x3f818000)), 0x3f82); /* tie, odd rounds up */
    CHECK_INT(f32_to_bf16(bits_f(0x3f808001)), 0x3f81);
    CHECK_INT(f32_to_bf16(bits_f(0x7f7fffff)), 0x7f80); /* max float rounds to inf */
    CHECK_INT(f32_to_bf16(-INFINITY), 0xff80);
    uint16_t n = f32_to_bf16(bits_f(0x7f800001)); /* signalling nan with low payload only */
    CHECK((n & 0x7f80) == 0x7f80 && (n & 0x7f));
    for (uint32_t h = 0; h < 65536; h++)
        if (((h >> 7) & 0xff) != 0xff && f32_to_bf16(bf16_to_f32((uint16_t)h)) != h) {
            CHECK_MSG(0, "bf16 round trip of %#x", h);
            break;
        }
}

/* Quantizers: known outputs, round-trip error, and every ISA bit-identical. */
static void test_quantize(void) {
    /* Q8_0: a block whose amax is 127 -> d = 1, values k + 0.5 are ties: away from zero */
    float x[64];
    for (int j = 0; j < 32; j++) x[j] = (float)(j - 16) + 0.5f;
    x[0] = -127.0f;
    block_q8_0 q8;
    quantize_row(WICK_Q8_0, x, &q8, 32);
    CHECK_INT(q8.d, 0x3c00);
    CHECK_INT(q8.qs[0], -127);
    CHECK_INT(q8.qs[1], -15); /* -14.5 -> -15 */
    CHECK_INT(q8.qs[16], 1);  /* 0.5 -> 1 */
    CHECK_INT(q8.qs[31], 16); /* 15.5 -> 16 */

    /* Q4_0: max-magnitude value keeps its sign: here +4 -> d = -0.5 */
    for (int j = 0; j < 32; j++) x[j] = (float)(j % 8) * 0.5f - 1.75f; /* -1.75 .. 1.75 */
    x[5] = 4.0f;
    block_q4_0 q4;
    quantize_row(WICK_Q4_0, x, &q4, 32);
    CHECK(fp16_to_f32(q4.d) == -0.5f);
    /* x=4 -> 4*-2+8.5 = 0.5 -> 0; x=-1.75 -> 3.5+8.5=12; x=1.75 -> -3.5+8.5 = 5 */
    CHECK_INT(q4.qs[5] & 15, 0);
    CHECK_INT(q4.qs[0] & 15, 12);
    CHECK_INT(q4.qs[7] & 15, 5);
    CHECK_INT(q4.qs[0] >> 4, 12); /* x[16] = -1.75 */
    /* the most negative extreme maps to 16 and is clamped to 15 */
    for (int j = 0; j < 32; j++) x[j] = 0.0f;
    x[3] = -2.0f, x[4] = 2.0f; /* first max wins: m = -2, d = 0.25, id = 4 */
    quantize_row(WICK_Q4_0, x, &q4, 32);
    CHECK(fp16_to_f32(q4.d) == 0.25f);
    CHECK_INT(q4.qs[3] & 15, 0);  /* -2*4 + 8.5 = 0.5 -> 0 */
    CHECK_INT(q4.qs[4] & 15, 15); /* 2*4 + 8.5 = 16.5 -> 16 -> 15 */
    CHECK_INT(q4.qs[0] & 15, 8);

    /* round-trip error and ISA identity on random rows (incl. ties and zero blocks) */
    enum { NB = 37, N = NB * 32 };
    float *src = malloc(N * sizeof(float)), *dq = malloc(N * sizeof(float));
    block_q8_0 *ref = malloc(NB * sizeof(block_q8_0)), *got = malloc(NB * sizeof(block_q8_0));
    block_q4_0 *r4 = malloc(NB * sizeof(block_q4_0));
    for (int iter = 0; iter < 200; iter++) {
        rnd_fill(src, N, iter % 3 == 0 ? 1e-3f : 10.0f);
        for (int j = 0; j < 32; j++) src[j] = 0.0f;                       /* an all-zero block */
        for (int j = 0; j < 32; j++) src[32 + j] = (float)(int)(rnd_u32() % 255 - 127) + 0.5f; /* ties */
        src[32 + 7] = 127.0f;
        quantize_row_q8_0_isa(src, ref, N, ISA_SCALAR);
        for (int isa = 1; isa < n_isas(); isa++) {
            quantize_row_q8_0_isa(src, got, N, isa);
            CHECK_MSG(memcmp(ref, got, sizeof(block_q8_0) * NB) == 0, "q8_0 %s differs (iter %d)",
                      cpu_isa_name((cpu_isa)isa), iter);
        }
        dequantize_row(WICK_Q8_0, ref, dq, N);
        float worst = 0;
        for (int b = 0; b < NB; b++) {
            /* half a step, plus the fp16 rounding of the scale (coarse for tiny blocks) */
            float amax = 0;
            for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(src[b * 32 + j]));
            float d = fp16_to_f32(ref[b].d), d32 = amax / 127.0f;
            for (int j = 0; j < 32; j++) {
                float e = fabsf(dq[b * 32 + j] - src[b * 32 + j]) -
                          (0.5f * d32 + 128.0f * fabsf(d - d32) + 1e-6f * d32);
                if (e > worst) worst = e;
            }
        }
        CHECK(worst <= 0.0f);
        quantize_row(WICK_Q4_0, src, r4, N);
        dequantize_row(WICK_Q4_0, r4, dq, N);
        worst = 0;
        for (int b = 0; b < NB; b++) {
            /* one step at the clamped extreme, plus the fp16 rounding of the scale */
            float amax = 0;
            for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(src[b * 32 + j]));
            float d = fabsf(fp16_to_f32(r4[b].d)), d32 = amax / 8.0f;
            for (int j = 0; j < 32; j++) {
                float e = fabsf(dq[b * 32 + j] - src[b * 32 + j]) -
                          (d32 + 9.0f * fabsf(d - d32) + 1e-6f * d32);
                if (e > worst) worst = e;
            }
        }
        CHECK(worst <= 0.0f);
    }
    /* float types */
    uint16_t h[N];
    rnd_fill(src, N, 100.0f);
    quantize_row(WICK_F16, src, h, N);
    int bad = 0;
    for (int i = 0; i < N; i++) bad += h[i] != f32_to_fp16(src[i]);
    dequantize_row(WICK_F16, h, dq, N);
    for (int i = 0; i < N; i++) bad += dq[i] != fp16_to_f32(h[i]);
    quantize_row(WICK_BF16, src, h, N);
    for (int i = 0; i < N; i++) bad += h[i] != f32_to_bf16(src[i]);
    dequantize_row(WICK_BF16, h, dq, N);
    for (int i = 0; i < N; i++) bad += dq[i] != bf16_to_f32(h[i]);
    CHECK_INT(bad, 0);
    free(src), free(dq), free(ref), free(got), free(r4);
}

/* ---- matmul ---- */

static const int WTYPES[] = {WICK_F32, WICK_F16, WICK_BF16, WICK_Q8_0, WICK_Q4_0};

static bool is_q(int t) { return t == WICK_Q8_0 || t == WICK_Q4_0; }

/* Random weights of a type: rows x cols, made from random floats. */
static void *make_weights(int type, int rows, int cols, float *wf_out) {
    size_t rb = dtype_row_bytes(type, cols);
    void *w = malloc(rb * rows + 64);
    float *tmp = malloc(sizeof(float) * (size_t)cols);
    for (int r = 0; r < rows; r++) {
        rnd_fill(tmp, cols, 1.0f);
        if (r % 5 == 1 && cols >= 32) tmp[3] = -1.5f; /* vary block maxima / signs */
        quantize_row(type, tmp, (char *)w + rb * r, cols);
        if (wf_out) dequantize_row(type, (char *)w + rb * r, wf_out + (size_t)r * cols, cols);
    }
    free(tmp);
    return w;
}

/* Weight/activation blocks whose scales are all exactly 1.0 (fp16 0x3c00). */
static void set_unit_scales(int type, void *w, int rows, int cols) {
    int nb = cols / 32;
    for (int64_t b = 0; b < (int64_t)rows * nb; b++) {
        if (type == WICK_Q8_0) ((block_q8_0 *)w)[b].d = 0x3c00;
        else ((block_q4_0 *)w)[b].d = 0x3c00;
    }
}

static void test_matmul_isas(void) {
    static const int NS[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33};
    static const int ROWS[] = {1, 3, 7, 16, 17, 33, 50};
    static const int COLS_F[] = {1, 3, 7, 16, 33, 100, 256};
    static const int COLS_Q[] = {32, 96, 224, 256, 1056};
    const cpu_isa saved = tt()->isa;
    for (size_t ti = 0; ti < sizeof WTYPES / sizeof WTYPES[0]; ti++) {
        const int type = WTYPES[ti];
        const int *colsv = is_q(type) ? COLS_Q : COLS_F;
        const int ncols = is_q(type) ? 5 : 7;
        int fails = 0, checks = 0;
        for (int ci = 0; ci < ncols; ci++) {
            for (size_t ri = 0; ri < sizeof ROWS / sizeof ROWS[0]; ri++) {
                for (size_t ni = 0; ni < sizeof NS / sizeof NS[0]; ni++) {
                    const int cols = colsv[ci], rows = ROWS[ri], n = NS[ni];
                    if ((int64_t)rows * n * cols > 600000 && ni % 3) continue;
                    const int ldy = rows + 3;
                    float *wf = malloc(sizeof(float) * (size_t)rows * cols);
                    void *w = make_weights(type, rows, cols, wf);
                    float *x = malloc(sizeof(float) * (size_t)n * cols);
                    rnd_fill(x, (int64_t)n * cols, 2.0f);
                    void *xq = NULL;
                    if (is_q(type)) {
                        xq = malloc(matmul_scratch_bytes(type, cols, n));
                        matmul_quantize_x(tt(), NULL, x, n, cols, xq);
                    }
                    float *y0 = malloc(sizeof(float) * (size_t)n * ldy);
                    float *y1 = malloc(sizeof(float) * (size_t)n * ldy);
                    for (int i = 0; i < n * ldy; i++) y0[i] = y1[i] = -777.0f;
                    /* bound for rounding differences: Σ|w·x| over the dequantized values */
                    float *xd = malloc(sizeof(float) * (size_t)n * cols);
                    if (is_q(type)) dequantize_row(WICK_Q8_0, xq, xd, (int64_t)n * cols);
                    else memcpy(xd, x, sizeof(float) * (size_t)n * cols);
                    matmul_rows_scalar(&(mm_call){tt(), type, w, cols, x, xq, n, y0, ldy, 0, rows});
                    /* the scalar path itself against the dequantized float product */
                    for (int i = 0; i < n; i++)
                        for (int r = 0; r < rows; r++) {
                            double s = 0, a = 0;
                            for (int c = 0; c < cols; c++) {
                                double p = (double)wf[(size_t)r * cols + c] * xd[(size_t)i * cols + c];
                                s += p, a += fabs(p);
                            }
                            checks++;
                            if (fabs(s - y0[i * ldy + r]) > 1e-5 * a + 1e-30) fails++;
                        }
                    for (int isa = 1; isa < n_isas(); isa++) {
                        CHECK(tt_set_isa((cpu_isa)isa));
                        /* rows split in two uneven ranges, like two threads would */
                        int mid = rows / 3;
                        matmul_rows(&(mm_call){tt(), type, w, cols, x, xq, n, y1, ldy, 0, mid});
                        matmul_rows(&(mm_call){tt(), type, w, cols, x, xq, n, y1, ldy, mid, rows});
                        for (int i = 0; i < n; i++) {
                            for (int r = 0; r < rows; r++) {
                                double a = 0;
                                for (int c = 0; c < cols; c++)
                                    a += fabs((double)wf[(size_t)r * cols + c] * xd[(size_t)i * cols + c]);
                                checks++;
                                if (!(fabs(y1[i * ldy + r] - y0[i * ldy + r]) <= 1e-5 * a + 1e-30)) {
                                    if (fails++ < 5)
                                        fprintf(stderr, "%s %s rows=%d cols=%d n=%d: y[%d,%d] = %.9g, scalar %.9g\n",
                                                dtype_name(type), cpu_isa_name((cpu_isa)isa), rows, cols, n,
                                                i, r, y1[i * ldy + r], y0[i * ldy + r]);
                                }
                            }
                            for (int r = rows; r < ldy; r++) /* padding untouched */
                                if (y1[i * ldy + r] != -777.0f) fails++;
                        }
                    }
                    tt_set_isa(saved);
                    free(wf), free(w), free(x), free(xq), free(y0), free(y1), free(xd);
                }
            }
        }
        CHECK_MSG(fails == 0, "%s: %d of %d outputs out of tolerance", dtype_name(type), fails, checks);
    }
}

/* Integer exactness: with every scale 1.0 the quantized kernels compute exact
 * integer dot products, so every ISA must agree bit for bit. */
static void test_matmul_int_exact(void) {
    const cpu_isa saved = tt()->isa;
    static const int COLS[] = {32, 96, 224, 1056};
    static const int NS[] = {1, 2, 3, 5, 8, 13, 20};
    for (int qi = 0; qi < 2; qi++) {
        const int type = qi ? WICK_Q4_0 : WICK_Q8_0;
        int bad = 0;
        for (int ci = 0; ci < 4; ci++)
            for (int ni = 0; ni < 7; ni++) {
                const int cols = COLS[ci], n = NS[ni], rows = 37;
                void *w = make_weights(type, rows, cols, NULL);
                set_unit_scales(type, w, rows, cols);
                if (type == WICK_Q8_0) /* extreme weights, including -128 */
                    for (int r = 0; r < rows; r++) {
                        block_q8_0 *b = (block_q8_0 *)w + (size_t)r * (cols / 32);
                        b[0].qs[r % 32] = (int8_t)(r % 2 ? -128 : 127);
                    }
                float *x = malloc(sizeof(float) * (size_t)n * cols);
                rnd_fill(x, (int64_t)n * cols, 3.0f);
                void *xq = malloc(matmul_scratch_bytes(type, cols, n));
                matmul_quantize_x(tt(), NULL, x, n, cols, xq);
                block_q8_0 *xb = xq;
                for (int b = 0; b < n * cols / 32; b++) {
                    xb[b].d = 0x3c00;
                    if (b % 3 == 0) xb[b].qs[5] = -127;
                }
                matmul_xq_finish(xq, n, cols); /* per-block data of the edited quants */
                float *y0 = malloc(sizeof(float) * (size_t)n * rows), *y1 = malloc(sizeof(float) * (size_t)n * rows);
                matmul_rows_scalar(&(mm_call){tt(), type, w, cols, NULL, xq, n, y0, rows, 0, rows});
                for (int isa = 1; isa < n_isas(); isa++) {
                    tt_set_isa((cpu_isa)isa);
                    matmul_rows(&(mm_call){tt(), type, w, cols, NULL, xq, n, y1, rows, 0, rows});
                    for (int i = 0; i < n * rows; i++)
                        if (y0[i] != y1[i] || y0[i] != floorf(y0[i])) {
                            if (bad++ < 5)
                                fprintf(stderr, "%s %s cols=%d n=%d [%d]: %.1f vs scalar %.1f\n",
                                        dtype_name(type), cpu_isa_name((cpu_isa)isa), cols, n, i, y1[i], y0[i]);
                        }
                }
                tt_set_isa(saved);
                free(w), free(x), free(xq), free(y0), free(y1);
            }
        CHECK_MSG(bad == 0, "%s integer dots differ in %d places", dtype_name(type), bad);
    }
}

/* matmul(tt(), ) through thread pools of several sizes equals the scalar rows. */
static void test_matmul_threads(void) {
    wick_error err;
    wick_pool *pools[3] = {NULL, pool_new(2, &err), pool_new(3, &err)};
    CHECK(pools[1] && pools[2]);
    /* decode shapes cover ranges of many units, balanced by stealing (1000 rows) */
    static const int SHAPES[][3] = {{64, 896, 1}, {64, 896, 7}, {200, 96, 33}, {5, 64, 4}, {33, 1056, 64}, {1000, 64, 1}, {1000, 96, 3}};
    for (size_t ti = 0; ti < 5; ti++) {
        const int type = WTYPES[ti];
        for (int si = 0; si < 7; si++) {
            const int rows = SHAPES[si][0], cols = SHAPES[si][1], n = SHAPES[si][2];
            void *w = make_weights(type, rows, cols, NULL);
            wick_tensor W = {"w", type, 2, {cols, rows, 1, 1}, w, dtype_row_bytes(type, cols) * rows};
            float *x = malloc(sizeof(float) * (size_t)n * cols);
            rnd_fill(x, (int64_t)n * cols, 1.0f);
            size_t sb = matmul_scratch_bytes(type, cols, n);
            void *scratch = sb ? malloc(sb) : NULL;
            float *y0 = malloc(sizeof(float) * (size_t)n * rows), *y1 = malloc(sizeof(float) * (size_t)n * rows);
            matmul(tt(), NULL, &W, x, n, y0, rows, scratch);
            /* claims of one unit (ranges get stolen) and of the CPU's size */
            const int claims[2] = {1, tt()->claim_units};
            for (int k = 0; k < 2; k++) {
                tt_set_claim_units(claims[k]);
                for (int p = 1; p < 3; p++) {
                    memset(y1, 0, sizeof(float) * (size_t)n * rows);
                    matmul(tt(), pools[p], &W, x, n, y1, rows, scratch);
                    CHECK_MSG(memcmp(y0, y1, sizeof(float) * (size_t)n * rows) == 0,
                              "%s %dx%d n=%d with %d threads, claims of %d", dtype_name(type), rows, cols, n, p + 1,
                              claims[k]);
                }
            }
            if (is_q(type)) { /* scratch holds the Q8_0 rows, bit-exact with quantize_row */
                block_q8_0 *q = malloc(sizeof(block_q8_0) * (size_t)n * cols / 32);
                for (int i = 0; i < n; i++) quantize_row(WICK_Q8_0, x + (size_t)i * cols, q + (size_t)i * cols / 32, cols);
                CHECK(memcmp(q, scratch, sizeof(block_q8_0) * (size_t)n * cols / 32) == 0);
                free(q);
            }
            free(w), free(x), free(scratch), free(y0), free(y1);
        }
    }
    pool_free(pools[1]);
    pool_free(pools[2]);
}

/* ---- thread pool ---- */

typedef struct pool_probe {
    _Atomic int calls;
    int seen[8];
    int nth_seen;
} pool_probe;

static void probe_fn(void *arg, int ith, int nth) {
    pool_probe *p = arg;
    atomic_fetch_add(&p->calls, 1);
    p->seen[ith]++;
    if (ith == 0) p->nth_seen = nth;
}

static void test_pool(void) {
    wick_error err;
    pool_probe pr;
    memset(&pr, 0, sizeof pr);
    pool_run(NULL, probe_fn, &pr);
    CHECK_INT(atomic_load(&pr.calls), 1);
    CHECK_INT(pr.nth_seen, 1);
    CHECK_INT(pool_size(NULL), 1);
    for (int n = 1; n <= 4; n++) {
        wick_pool *p = pool_new(n, &err);
        CHECK(p != NULL);
        if (!p) continue;
        CHECK_INT(pool_size(p), n);
        memset(&pr, 0, sizeof pr);
        for (int it = 0; it < 3000; it++) pool_run(p, probe_fn, &pr);
        CHECK_INT(atomic_load(&pr.calls), 3000 * n);
        CHECK_INT(pr.nth_seen, n);
        for (int i = 0; i < n; i++) CHECK_INT(pr.seen[i], 3000);
        /* let the workers fall asleep, then run again */
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        pool_run(p, probe_fn, &pr);
        CHECK_INT(atomic_load(&pr.calls), 3001 * n);
        pool_free(p);
    }
    /* pool_split covers [0, n) in order, parts aligned */
    for (int64_t n = 0; n < 70; n += 3)
        for (int nth = 1; nth <= 5; nth++)
            for (int64_t al = 1; al <= 16; al *= 4) {
                int64_t expect = 0;
                bool ok = true;
                for (int ith = 0; ith < nth; ith++) {
                    int64_t lo, hi;
                    pool_split(n, ith, nth, al, &lo, &hi);
                    ok = ok && lo == expect && hi >= lo && (lo % al == 0) && (hi == n || hi % al == 0);
                    expect = hi;
                }
                ok = ok && expect == n;
                CHECK_MSG(ok, "pool_split n=%lld nth=%d align=%lld", (long long)n, nth, (long long)al);
            }
}

/* ---- ops ---- */

static void test_rmsnorm_softmax_silu(void) {
    float x[67], w[67], out[67];
    rnd_fill(x, 67, 3.0f);
    rnd_fill(w, 67, 1.0f);
    rmsnorm(tt(), out, x, w, 67, 1e-6f);
    double ss = 0;
    for (int i = 0; i < 67; i++) ss += (double)x[i] * x[i];
    double sc = 1.0 / sqrt(ss / 67 + 1e-6);
    for (int i = 0; i < 67; i++) CHECK_NEAR(out[i], x[i] * sc * w[i], 1e-6 * fabs(x[i] * sc) + 1e-7);
    memcpy(out, x, sizeof x);
    rmsnorm(tt(), out, out, NULL, 67, 1e-6f); /* aliasing, no weight */
    for (int i = 0; i < 67; i++) CHECK_NEAR(out[i], x[i] * sc, 1e-6 * fabs(x[i] * sc) + 1e-7);
    /* the SIMD sums of squares keep the scalar twin's lanes: same bits, odd sizes */
    {
        const cpu_isa saved = tt()->isa;
        static float big[1031], o1[1031], o2[1031], wb[1031];
        rnd_fill(big, 1031, 50.0f);
        rnd_fill(wb, 1031, 1.0f);
        for (int n = 1; n <= 1031; n += (n < 40 ? 1 : 37)) {
            const double ref = rmsnorm_sumsq_scalar(big, n);
            tt_set_isa(ISA_SCALAR);
            rmsnorm(tt(), o1, big, wb, n, 1e-5f);
            for (int isa = 1; isa < n_isas(); isa++) {
                tt_set_isa((cpu_isa)isa);
                rmsnorm(tt(), o2, big, wb, n, 1e-5f);
                CHECK_MSG(memcmp(o1, o2, sizeof(float) * (size_t)n) == 0, "rmsnorm n=%d %s differs from scalar", n,
                          cpu_isa_name((cpu_isa)isa));
            }
            double direct = 0;
            for (int i = 0; i < n; i++) direct += (double)big[i] * big[i];
            CHECK_NEAR(ref, direct, 1e-12 * direct);
        }
        tt_set_isa(saved);
    }

    float s[7] = {1, 2, 3, 1000, -5, 0, 999};
    softmax(tt(), s, 7);
    double sum = 0;
    for (int i = 0; i < 7; i++) sum += s[i];
    CHECK_NEAR(sum, 1.0, 1e-6);
    CHECK_NEAR(s[3], 1.0 / (1.0 + exp(-1.0)), 1e-6);
    CHECK(s[0] >= 0.0f && s[0] < 1e-30f);

    float g[5] = {-3, -0.5f, 0, 0.5f, 4}, u[5] = {1, 2, 3, 4, 5};
    float g0[5];
    memcpy(g0, g, sizeof g);
    silu_mul(tt(), g, u, 5);
    for (int i = 0; i < 5; i++) CHECK_NEAR(g[i], g0[i] / (1.0 + exp(-g0[i])) * u[i], 1e-6);
    /* SIMD silu/softmax vs double-precision formulas at every ISA: relative 2e-6 */
    enum { NS = 1003 };
    static float gg[NS], uu[NS], g1[NS], sm[NS], sm0[NS];
    const cpu_isa saved = tt()->isa;
    for (int isa = 0; isa < n_isas(); isa++) {
        tt_set_isa((cpu_isa)isa);
        rnd_fill(gg, NS, 30.0f);
        gg[0] = -100.0f, gg[1] = 100.0f, gg[2] = 0.0f, gg[3] = -88.5f, gg[4] = 89.0f;
        rnd_fill(uu, NS, 2.0f);
        memcpy(g1, gg, sizeof gg);
        silu_mul(tt(), g1, uu, NS);
        int bad = 0;
        for (int i = 0; i < NS; i++) {
            double ref = gg[i] / (1.0 + exp(-(double)gg[i])) * uu[i];
            if (!(fabs(g1[i] - ref) <= 2e-6 * fabs(ref) + 1e-30)) bad++;
        }
        CHECK_MSG(bad == 0, "silu_mul %s: %d off", cpu_isa_name((cpu_isa)isa), bad);
        rnd_fill(sm, NS, 20.0f);
        memcpy(sm0, sm, sizeof sm);
        softmax(tt(), sm, NS);
        double mx = -1e30, z = 0;
        for (int i = 0; i < NS; i++) mx = fmax(mx, sm0[i]);
        for (int i = 0; i < NS; i++) z += exp(sm0[i] - mx);
        bad = 0;
        for (int i = 0; i < NS; i++) {
            double ref = exp(sm0[i] - mx) / z;
            /* + the rounding of x - max in float: 1 ulp of |x - max| */
            if (!(fabs(sm[i] - ref) <= (2e-6 + 1.2e-7 * fabs(sm0[i] - mx)) * ref + 1e-37)) bad++;
        }
        CHECK_MSG(bad == 0, "softmax %s: %d off", cpu_isa_name((cpu_isa)isa), bad);
    }
    tt_set_isa(saved);

    float a[3] = {1, 2, 3}, b[3] = {0.5f, -2, 10};
    vec_add(a, b, 3);
    CHECK(a[0] == 1.5f && a[1] == 0.0f && a[2] == 13.0f);
}

/* GeGLU's GELU (tanh approximation) and soft-capping: every ISA against the
 * formulas in double (HF's 0.5·x·(1 + tanh(t)), c·tanh(x/c)), odd lengths
 * so the SIMD tails run, extreme inputs included; then each SIMD version
 * against its scalar twin. */
static void test_gelu_softcap(void) {
    enum { NG = 1003 };
    static float gg[NG], uu[NG], out[3][NG], sc[NG], sc_out[3][NG];
    const cpu_isa saved = tt()->isa;
    rnd_fill(gg, NG, 8.0f);
    gg[0] = -100.0f, gg[1] = 100.0f, gg[2] = 0.0f, gg[3] = -1e-4f, gg[4] = 12.0f, gg[5] = -9.0f;
    rnd_fill(uu, NG, 2.0f);
    rnd_fill(sc, NG, 120.0f);
    sc[0] = 0.0f, sc[1] = 1e-3f, sc[2] = -0.2f, sc[3] = 1e4f, sc[4] = -1e4f, sc[5] = 7.4f; /* tanh's branches */
    static const float CAPS[] = {30.0f, 1.5f};
    for (int n = 1; n <= NG; n += n < 40 ? 1 : 97) {
        for (int isa = 0; isa < n_isas(); isa++) {
            tt_set_isa((cpu_isa)isa);
            memcpy(out[isa], gg, sizeof(float) * (size_t)n);
            gelu_mul(tt(), out[isa], uu, n);
            int bad = 0;
            for (int i = 0; i < n; i++) {
                const double x = gg[i], t = 0.7978845608028654 * (x + 0.044715 * x * x * x);
                /* 0.5·x·(1 + tanh(t)), as x / (1 + e^{-2t}): in double, 1 + tanh(t) is 0 below t ~ -19 */
                const double ref = x / (1.0 + exp(-2.0 * t)) * uu[i];
                if (!(fabs(out[isa][i] - ref) <= 2e-6 * (1.0 + 2.0 * fabs(t)) * fabs(ref) + 1e-30)) bad++;
            }
            CHECK_MSG(bad == 0, "gelu_mul n=%d %s: %d off", n, cpu_isa_name((cpu_isa)isa), bad);
            for (int ci = 0; ci < 2; ci++) {
                const float c = CAPS[ci];
                memcpy(sc_out[isa], sc, sizeof(float) * (size_t)n);
                softcap_row(tt(), sc_out[isa], n, c);
                bad = 0;
                for (int i = 0; i < n; i++) {
                    const double ref = c * tanh((double)sc[i] / c);
                    if (!(fabs(sc_out[isa][i] - ref) <= 1e-6 * fabs(ref) + 3e-7 * c)) bad++;
                    if (fabs(sc_out[isa][i]) > c) bad++; /* never past the cap */
                }
                CHECK_MSG(bad == 0, "softcap_row n=%d cap=%g %s: %d off", n, c, cpu_isa_name((cpu_isa)isa), bad);
            }
        }
        /* the twins: each ISA within the same bounds of the scalar version */
        for (int isa = 1; isa < n_isas(); isa++) {
            int bad = 0;
            for (int i = 0; i < n; i++) {
                if (!(fabs(out[isa][i] - out[0][i]) <= 4e-6 * (1.0 + fabs((double)gg[i])) * fabs(out[0][i]) + 1e-30)) bad++;
                if (!(fabs(sc_out[isa][i] - sc_out[0][i]) <= 2e-6 * fabs(sc_out[0][i]) + 6e-7 * CAPS[1])) bad++;
            }
            CHECK_MSG(bad == 0, "gelu/softcap n=%d %s vs scalar: %d off", n, cpu_isa_name((cpu_isa)isa), bad);
        }
    }
    tt_set_isa(saved);
    float a[3] = {1, 2, 3}, b[3] = {0.5f, -2, 10};
    vec_add_scaled(a, b, 0.25f, 3);
    CHECK(a[0] == 1.125f && a[1] == 1.5f && a[2] == 5.5f);
    vec_scale(a, 3, 2.0f);
    CHECK(a[0] == 2.25f && a[1] == 3.0f && a[2] == 11.0f);
    /* LongRoPE's scaled angles: factor 1 gives rope_angles' bits */
    float inv[5] = {1.0f, 0.5f, 0.1f, 0.01f, 1e-4f}, c1[5], s1[5], c2[5], s2[5];
    rope_angles(1234, inv, 0, 5, c1, s1);
    rope_angles_scaled(1234, inv, 1.0, 0, 5, c2, s2);
    CHECK(memcmp(c1, c2, sizeof c1) == 0 && memcmp(s1, s2, sizeof s1) == 0);
    rope_angles_scaled(1234, inv, 1.19, 0, 5, c2, s2);
    for (int i = 0; i < 5; i++) CHECK_NEAR(c2[i], 1.19 * cos(1234.0 * inv[i]), 1e-6);
}

static void test_rope(void) {
    enum { NH = 3, HD = 64, ROT = 48, STRIDE = NH * HD + 5 };
    float inv_freq[HD / 2];
    for (int i = 0; i < ROT / 2; i++) inv_freq[i] = (float)pow(10000.0, -2.0 * i / ROT);
    for (int style = 0; style < 2; style++) {
        float x[2 * STRIDE], y[2 * STRIDE];
        rnd_fill(x, 2 * STRIDE, 1.0f);
        memcpy(y, x, sizeof x);
        int32_t p1[2] = {7, 1000}, p2[2] = {30, 2047}, p12[2] = {37, 3047}, z[2] = {0, 0};
        rope(tt(), x, 2, STRIDE, NH, HD, ROT, p1, inv_freq, (rope_style)style);
        rope(tt(), x, 2, STRIDE, NH, HD, ROT, p2, inv_freq, (rope_style)style);
        float x0[2 * STRIDE];
        memcpy(x0, y, sizeof y);
        rope(tt(), y, 2, STRIDE, NH, HD, ROT, p12, inv_freq, (rope_style)style);
        double worst = 0;
        for (int i = 0; i < 2 * STRIDE; i++) {
            double d = fabs(x[i] - y[i]);
            if (d > worst) worst = d;
        }
        CHECK_MSG(worst <= 1e-5, "rope style %d: p then q vs p+q differs by %g", style, worst);
        /* dims past rot_dim and the row padding untouched; position 0 is identity */
        for (int r = 0; r < 2; r++) {
            for (int h = 0; h < NH; h++)
                for (int d = ROT; d < HD; d++) CHECK(y[r * STRIDE + h * HD + d] == x0[r * STRIDE + h * HD + d]);
            for (int d = NH * HD; d < STRIDE; d++) CHECK(y[r * STRIDE + d] == x0[r * STRIDE + d]);
        }
        memcpy(y, x0, sizeof y);
        rope(tt(), y, 2, STRIDE, NH, HD, ROT, z, inv_freq, (rope_style)style);
        CHECK(memcmp(y, x0, sizeof y) == 0);
    }
    /* every ISA rotates to the scalar twin's bits (odd pair counts: vector part + tail) */
    {
        const cpu_isa saved = tt()->isa;
        static const int ROTS[] = {2, 30, 32, 48, 64, 98, 128};
        for (int style = 0; style < 2; style++)
            for (size_t ri = 0; ri < sizeof ROTS / sizeof ROTS[0]; ri++) {
                const int rot = ROTS[ri], hd = 128, nh = 3;
                float invf[64], a[3 * 128], b[3 * 128];
                for (int i = 0; i < rot / 2; i++) invf[i] = (float)pow(10000.0, -2.0 * i / rot);
                rnd_fill(a, nh * hd, 2.0f);
                memcpy(b, a, sizeof a);
                int32_t pos = 12345;
                tt_set_isa(ISA_SCALAR);
                rope(tt(), a, 1, nh * hd, nh, hd, rot, &pos, invf, (rope_style)style);
                tt_set_isa(saved);
                rope(tt(), b, 1, nh * hd, nh, hd, rot, &pos, invf, (rope_style)style);
                CHECK_MSG(memcmp(a, b, sizeof a) == 0, "rope style %d rot %d: %s differs from scalar", style, rot,
                          cpu_isa_name(saved));
            }
    }
    /* HF -> GGUF row permutation: element (half h, i) moves to 2i + h. ROPE_INTERLEAVED
     * on the permuted row equals the permutation of ROPE_HALVES on the original. */
    {
        enum { HD2 = 64, NH2 = 2 };
        float hf[NH2 * HD2], gg[NH2 * HD2];
        rnd_fill(hf, NH2 * HD2, 1.0f);
        for (int hd = 0; hd < NH2; hd++)
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < HD2 / 2; i++) gg[hd * HD2 + 2 * i + h] = hf[hd * HD2 + h * HD2 / 2 + i];
        float invf[HD2 / 2];
        for (int i = 0; i < HD2 / 2; i++) invf[i] = (float)pow(10000.0, -2.0 * i / HD2);
        int32_t pos = 123;
        rope(tt(), hf, 1, NH2 * HD2, NH2, HD2, HD2, &pos, invf, ROPE_HALVES);
        rope(tt(), gg, 1, NH2 * HD2, NH2, HD2, HD2, &pos, invf, ROPE_INTERLEAVED);
        int bad = 0;
        for (int hd = 0; hd < NH2; hd++)
            for (int h = 0; h < 2; h++)
                for (int i = 0; i < HD2 / 2; i++)
                    bad += gg[hd * HD2 + 2 * i + h] != hf[hd * HD2 + h * HD2 / 2 + i];
        CHECK_INT(bad, 0);
    }
}

/* ---- attention ---- */

static void test_attention(void) {
    wick_error err;
    wick_pool *pool = pool_new(3, &err);
    CHECK(pool != NULL);
    static const int GQA[] = {1, 2, 4, 7}; /* 7: Qwen2.5-0.5B's groups (a decode row is a batch of 7) */
    static const int WINDOWS[] = {0, 5, 40};
    static const int HDS[] = {16, 64, 80, 24, 8}; /* 24, 8: odd multiples of 8 (a half last chunk) */
    static const int BSS[] = {16, 7, 32, 256};
    const cpu_isa saved = tt()->isa;
    int cases = 0;
    for (int kt = 0; kt < 2; kt++)
        for (int gi = 0; gi < 4; gi++)
            for (int wi = 0; wi < 3; wi++)
                for (int hi = 0; hi < 5; hi++) {
                    const int type = kt ? WICK_F16 : WICK_F32;
                    const int n_kv = 2, n_heads = n_kv * GQA[gi], hd = HDS[hi];
                    const int bs = BSS[(hi + gi + wi) % 4], n_blocks = 24;
                    const int ctx = 100, row = n_kv * hd;
                    const size_t esz = kt ? 2 : 4;
                    /* block table: a random permutation of the pool's blocks */
                    int32_t table[24];
                    rnd_permutation(table, n_blocks);
                    const size_t pool_rows = (size_t)n_blocks * bs;
                    void *k = malloc(pool_rows * row * esz), *v = malloc(pool_rows * row * esz);
                    float *tmp = malloc(sizeof(float) * pool_rows * row);
                    rnd_fill(tmp, (int64_t)pool_rows * row, 2.0f);
                    quantize_row(type, tmp, k, (int64_t)pool_rows * row);
                    rnd_fill(tmp, (int64_t)pool_rows * row, 1.0f);
                    quantize_row(type, tmp, v, (int64_t)pool_rows * row);
                    float vmax = 0;
                    for (size_t i = 0; i < pool_rows * row; i++) vmax = fmaxf(vmax, fabsf(tmp[i]));
                    (void)ctx;
                    /* queries: a prefill chunk of 9 rows at positions 90..98 plus odd decode rows */
                    const int n_q = 12;
                    int32_t pos[12] = {90, 91, 92, 93, 94, 95, 96, 97, 98, 0, 1, 161};
                    if ((int64_t)bs * n_blocks <= 161) pos[11] = bs * n_blocks - 1;
                    float *q = malloc(sizeof(float) * n_q * n_heads * hd);
                    rnd_fill(q, (int64_t)n_q * n_heads * hd, 1.0f);
                    float *o1 = malloc(sizeof(float) * n_q * n_heads * hd), *o2 = malloc(sizeof(float) * n_q * n_heads * hd);
                    /* the KV pool position-major (rows of all heads) or head-major within a block (the engine's) */
                    for (int layout = 0; layout < 2; layout++) {
                    attn_kv kv = {k, v, type, table, bs, (size_t)bs * row * esz,
                                  layout ? (size_t)bs * hd * esz : (size_t)hd * esz,
                                  layout ? (size_t)hd * esz : (size_t)row * esz};
                    /* soft-capping (Gemma 2) on for half the cases, small enough to bite (scores ~ ±1) */
                    const float cap = (gi + hi) % 2 ? 0.75f : 0.0f;
                    attn_params ap = {n_heads, n_kv, hd, 1.0f / sqrtf((float)hd), WINDOWS[wi], cap};
                    attention_reference(&ap, q, n_q, pos, &kv, o1);
                    for (int isa = 0; isa < n_isas(); isa++) {
                        tt_set_isa((cpu_isa)isa);
                        memset(o2, 0, sizeof(float) * n_q * n_heads * hd);
                        attention(tt(), isa == 1 ? NULL : pool, &ap, q, n_q, pos, &kv, o2);
                        double worst = 0;
                        for (int i = 0; i < n_q * n_heads * hd; i++) worst = fmax(worst, fabs(o1[i] - o2[i]));
                        CHECK_MSG(worst <= 1e-5 * vmax, "attention %s gqa=%d window=%d hd=%d bs=%d cap=%g layout %d %s: diff %g",
                                  dtype_name(type), GQA[gi], WINDOWS[wi], hd, bs, cap, layout, cpu_isa_name((cpu_isa)isa), worst);
                        cases++;
                        /* one decode row alone (a batch of just its GQA group's heads) */
                        const size_t o11 = (size_t)11 * n_heads * hd;
                        attention(tt(), pool, &ap, q + o11, 1, &pos[11], &kv, o2);
                        worst = 0;
                        for (int i = 0; i < n_heads * hd; i++) worst = fmax(worst, fabs(o1[o11 + i] - o2[i]));
                        CHECK_MSG(worst <= 1e-5 * vmax, "attention decode row %s gqa=%d window=%d hd=%d bs=%d layout %d %s: diff %g",
                                  dtype_name(type), GQA[gi], WINDOWS[wi], hd, bs, layout, cpu_isa_name((cpu_isa)isa), worst);
                    }
                    tt_set_isa(saved);
                    /* a window of 1 returns v at the query position exactly (up to rounding) */
                    attn_params ap1 = ap;
                    ap1.window = 1;
                    attention(tt(), pool, &ap1, q, 1, pos, &kv, o2);
                    float vr[256];
                    dequantize_row(type, attn_kv_at(&kv, kv.v, pos[0], 0), vr, hd);
                    for (int d = 0; d < hd; d++) CHECK_NEAR(o2[d], vr[d], 1e-6);
                    }
                    free(k), free(v), free(tmp), free(q), free(o1), free(o2);
                }
    CHECK(cases > 0);
    pool_free(pool);
}

/* The per-token-count prefetch styles: the detected one for 1 token (a
 * dense stream: it or PREFETCH_L2, which only Zen 4 picks, and for 1 token
 * only unless WICK_PREFETCH=l2); a set style (or WICK_PREFETCH) holds for
 * every token count and stream; a reset brings the detected styles back. */
static void test_prefetch_style_n(void) {
    const cpu_prefetch pf = tt()->prefetch;
    const cpu_prefetch dense1 = kernel_prefetch_dense(tt(), 1), multi8 = kernel_prefetch_n(tt(), 8);
    CHECK(kernel_prefetch_n(tt(), 1) == pf);
    CHECK(kernel_prefetch_n(tt(), 0) == pf);
    CHECK(dense1 == pf || dense1 == PREFETCH_L2);
    for (int n = 2; n <= 16; n++) {
        CHECK(kernel_prefetch_dense(tt(), n) != PREFETCH_L2 || pf == PREFETCH_L2); /* WICK_PREFETCH=l2 */
        if (dense1 == pf) CHECK(kernel_prefetch_dense(tt(), n) == kernel_prefetch_n(tt(), n)); /* not Zen 4 */
    }
    for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) {
        tt_set_prefetch((cpu_prefetch)style);
        for (int n = 1; n <= 16; n++) {
            CHECK(kernel_prefetch_n(tt(), n) == (cpu_prefetch)style);
            CHECK(kernel_prefetch_dense(tt(), n) == (cpu_prefetch)style);
        }
        CHECK(strcmp(cpu_prefetch_name((cpu_prefetch)style), "unknown") != 0);
    }
    tt_reset_prefetch();
    CHECK(tt()->prefetch == pf);
    CHECK(kernel_prefetch_dense(tt(), 1) == dense1);
    CHECK(kernel_prefetch_n(tt(), 8) == multi8);
    printf("prefetch styles: 1 token %s, dense %s; 8 tokens %s, dense %s\n", cpu_prefetch_name(pf),
           cpu_prefetch_name(dense1), cpu_prefetch_name(multi8), cpu_prefetch_name(kernel_prefetch_dense(tt(), 8)));
}

/* copy_nt against its twin (memcpy): lengths 0-300 at destination offsets
 * across a line, unaligned sources, bytes around dst untouched. */
static void test_copy_nt(void) {
    static _Alignas(64) unsigned char src[448], dst[512], want[512];
    for (size_t i = 0; i < sizeof src; i++) src[i] = (unsigned char)(rnd_u32() >> 7);
    const cpu_isa saved = tt()->isa;
    for (int isa = 0; isa <= (int)cpu_best_isa(); isa++) {
        CHECK(tt_set_isa((cpu_isa)isa));
        for (size_t off = 0; off < 64; off += 1 + (off > 8) * 6)
            for (size_t n = 0; n <= 300; n += 1 + n / 16) {
                memset(dst, 0xa5, sizeof dst), memset(want, 0xa5, sizeof want);
                copy_nt(dst + off, src + (n % 7), n);
                copy_nt_scalar(want + off, src + (n % 7), n);
                CHECK_MSG(memcmp(dst, want, sizeof dst) == 0, "copy_nt isa %d off %zu n %zu", isa, off, n);
            }
    }
    tt_set_isa(saved);
}

int main(void) {
    printf("cpu: best isa %s\n", cpu_isa_name(cpu_best_isa()));
    SKIP_ISAS_THIS_CPU_LACKS();
    RUN(test_copy_nt);
    RUN(test_prefetch_style_n);
    RUN(test_fp16);
    RUN(test_bf16);
    RUN(test_quantize);
    RUN(test_pool);
    for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) { /* decode kernels in every prefetch style */
        tt_set_prefetch((cpu_prefetch)style);
        printf("prefetch style %s\n", cpu_prefetch_name((cpu_prefetch)style));
        RUN(test_matmul_isas);
    }
    tt_reset_prefetch();
    tt_set_f16_halves(!tt()->f16_halves); /* F16 widened 16 and 8 at a time */
    RUN(test_matmul_isas);
    tt_set_f16_halves(!tt()->f16_halves);
    RUN(test_matmul_int_exact);
    RUN(test_matmul_threads);
    RUN(test_rmsnorm_softmax_silu);
    RUN(test_gelu_softcap);
    RUN(test_rope);
    for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) { /* decode attention prefetches per style */
        tt_set_prefetch((cpu_prefetch)style);
        RUN(test_attention);
    }
    tt_reset_prefetch();
    return check_summary("test_kernels");
}
