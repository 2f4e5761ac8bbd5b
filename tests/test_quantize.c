/* test_quantize.c — the row quantizers of every weight type (quantize_row):
 * known answers from the format definitions, round trips within per-type
 * error bounds, quality against llama.cpp's measured quality, zero, constant,
 * huge and non-finite rows, and rows of many blocks against block by block.
 *
 * Bounds (per type in TYPES below), for x' = dequantize(quantize(x)):
 *   - max |x - x'| <= bound × max|x| of x's block (32, or the 256 of a
 *     super-block) + dmul × 2^-24. For the types whose grid is fixed by the
 *     block's extremes the first term is half a step (Q8_0: amax/254, Q4_1:
 *     range/30, Q5_1: range/62) or one step where the opposite extreme clips
 *     (Q4_0: amax/8, Q5_0: amax/16), plus fp16 rounding of the scales (2^-11
 *     relative); for the searched types (K-quants, IQ4) about one step of the
 *     grid including the sub-block scale's own quantization. The second term
 *     is fp16's absolute rounding of a subnormal scale (spacing 2^-24) times
 *     the largest integer the format multiplies that scale by (dmul; e.g.
 *     Q6_K: 128 × 32) — Q6_K's d is subnormal for any super-block below
 *     max|x| ≈ 0.25, as in llama.cpp.
 *   - on Gaussian rows, sqrt(Σ(x - x')² / Σx²) <= rmse: 1.04 × what
 *     llama.cpp's own quantizer (ggml_quantize_chunk of its library)
 *     measured on such rows (the comparison with llama.cpp on the same rows
 *     is tests/quantize_llamacpp.test.sh).
 *   - huge rows (|x| up to 6e4: every value, and so every scale and min, still
 *     inside fp16's range): the same bounds; rows of ±1e30, ±inf or NaN: no
 *     crash, and the searched types keep finite values (their scales saturate
 *     at fp16's 65504). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/tensor.h"
#include "kernels/convert.h"
#include "rng.h"

typedef struct qtype {
    int type;
    double bound; /* max |x - x'| / block max|x| */
    double dmul;  /* the largest integer an fp16 scale is multiplied by */
    double rmse;  /* relative RMSE on Gaussian rows */
} qtype;

static const qtype TYPES[] = {
    {WICK_Q8_0, 0.0045, 127, 0.0056},         {WICK_Q4_0, 0.1256, 8, 0.0894},
    {WICK_Q4_1, 0.0682, 16, 0.0812},          {WICK_Q5_0, 0.0630, 16, 0.0445},
    {WICK_Q5_1, 0.0340, 32, 0.0394},          {WICK_IQ4_NL, 0.15, 127, 0.0792},
    {WICK_IQ4_XS, 0.15, 32 * 127, 0.0797},    {WICK_Q2_K, 0.45, 15 * 3 + 15, 0.308},
    {WICK_Q3_K, 0.25, 32 * 4, 0.157},         {WICK_Q4_K, 0.11, 63 * 15 + 63, 0.0743},
    {WICK_Q5_K, 0.07, 63 * 31 + 63, 0.0376},  {WICK_Q6_K, 0.021, 128 * 32, 0.0186},
};
#define N_TYPES (int)(sizeof TYPES / sizeof TYPES[0])

static float gauss(void) {
    float u = (rnd_f() + 1.0f) * 0.5f + 1e-7f, v = rnd_f();
    return sqrtf(-2.0f * logf(u)) * cosf(3.14159265f * v);
}

/* Round trip of n values; worst (|x - x'| - dmul·2^-24) / block amax over the
 * row (the bound's absolute term taken off first). */
static double roundtrip(int type, const float *x, float *y, int64_t n) {
    double dmul = 0;
    for (size_t t = 0; t < sizeof TYPES / sizeof TYPES[0]; t++)
        if (TYPES[t].type == type) dmul = TYPES[t].dmul;
    void *q = malloc(dtype_row_bytes(type, n) + 1);
    quantize_row(type, x, q, n);
    dequantize_row(type, q, y, n);
    free(q);
    const int blk = dtype_block_elems(type);
    double worst = 0.0;
    for (int64_t b = 0; b < n; b += blk) {
        float amax = 0.0f;
        for (int j = 0; j < blk; j++) amax = fmaxf(amax, fabsf(x[b + j]));
        for (int j = 0; j < blk; j++) {
            const double e = fabs((double)x[b + j] - y[b + j]) - dmul * 0x1p-24;
            if (e > 0) worst = fmax(worst, amax > 0 ? e / amax : INFINITY);
        }
    }
    return worst;
}

/* ---- every type can be written ---- */

static void test_supported(void) {
    for (int i = 0; i < N_TYPES; i++) CHECK(quantize_row_supported(TYPES[i].type));
    CHECK(quantize_row_supported(WICK_F32) && quantize_row_supported(WICK_F16) && quantize_row_supported(WICK_BF16));
    CHECK(!quantize_row_supported(WICK_IQ2_XXS));
    CHECK(!quantize_row_supported(WICK_Q8_K));
}

/* ---- known answers from the definitions (llama.cpp's reference quantizers) ---- */

static void test_known_legacy(void) {
    float x[32];
    for (int j = 0; j < 32; j++) x[j] = (float)j * 0.25f - 2.0f; /* -2 .. 5.75 */
    /* Q4_1: min -2, max 5.75, d = 7.75/15; q = trunc((x + 2)/d + 0.5) */
    block_q4_1 a;
    quantize_row(WICK_Q4_1, x, &a, 32);
    CHECK_INT(a.d, f32_to_fp16(7.75f / 15.0f));
    CHECK_INT(a.m, f32_to_fp16(-2.0f));
    const float id1 = 1.0f / (7.75f / 15.0f);
    int bad = 0;
    for (int j = 0; j < 32; j++) {
        int q = (int)((x[j] + 2.0f) * id1 + 0.5f);
        q = q > 15 ? 15 : q;
        const int got = j < 16 ? (a.qs[j] & 15) : (a.qs[j - 16] >> 4);
        bad += got != q;
    }
    CHECK_INT(bad, 0);
    /* Q5_0: the largest |x| is 5.75 (positive), d = 5.75 / -16; q = min(31, trunc(x/d + 16.5)) */
    block_q5_0 b;
    quantize_row(WICK_Q5_0, x, &b, 32);
    CHECK_INT(b.d, f32_to_fp16(5.75f / -16.0f));
    const float id0 = 1.0f / (5.75f / -16.0f);
    uint32_t h = (uint32_t)b.qh[0] | (uint32_t)b.qh[1] << 8 | (uint32_t)b.qh[2] << 16 | (uint32_t)b.qh[3] << 24;
    bad = 0;
    for (int j = 0; j < 32; j++) {
        int q = (int)(x[j] * id0 + 16.5f);
        q = q > 31 ? 31 : q;
        const int got = (j < 16 ? (b.qs[j] & 15) : (b.qs[j - 16] >> 4)) | (int)((h >> j) & 1) << 4;
        bad += got != q;
    }
    CHECK_INT(bad, 0);
    CHECK_INT(h & 1, 1);               /* x[0] = -2 -> q = trunc(-2 * -2.78 + 16.5) = 22 */
    CHECK_INT((h >> 31) & 1, 0);       /* x[31] = 5.75 -> q = 0 */
    /* Q5_1: d = 7.75/31, q = trunc((x + 2)/d + 0.5) */
    block_q5_1 c;
    quantize_row(WICK_Q5_1, x, &c, 32);
    CHECK_INT(c.d, f32_to_fp16(7.75f / 31.0f));
    CHECK_INT(c.m, f32_to_fp16(-2.0f));
    const float id5 = 1.0f / (7.75f / 31.0f);
    h = (uint32_t)c.qh[0] | (uint32_t)c.qh[1] << 8 | (uint32_t)c.qh[2] << 16 | (uint32_t)c.qh[3] << 24;
    bad = 0;
    for (int j = 0; j < 32; j++) {
        const int q = (int)((x[j] + 2.0f) * id5 + 0.5f);
        const int got = (j < 16 ? (c.qs[j] & 15) : (c.qs[j - 16] >> 4)) | (int)((h >> j) & 1) << 4;
        bad += got != q;
    }
    CHECK_INT(bad, 0);
}

/* Super-blocks whose every sub-block holds evenly spaced values that the
 * search finds and whose scales fp16 holds exactly come back exactly. */
static void test_known_grid(void) {
    float x[256], y[256];
    /* Q6_K: -2 .. -0.125 per group: step 1/16 (q = -32..-2), d = -2^-11, scales -128 */
    for (int e = 0; e < 256; e++) x[e] = (float)(e % 16 - 16) * 0.125f;
    CHECK(roundtrip(WICK_Q6_K, x, y, 256) == 0.0);
    /* Q4_K: 0..15 × 63/64 (step 63/64: d = 1/64, scales 63, offsets 0); Q5_K: 0..31 × 63/64 */
    for (int e = 0; e < 256; e++) x[e] = (float)(e % 16) * (63.0f / 64.0f);
    CHECK(roundtrip(WICK_Q4_K, x, y, 256) == 0.0);
    for (int e = 0; e < 256; e++) x[e] = (float)(e % 32) * (63.0f / 64.0f);
    CHECK(roundtrip(WICK_Q5_K, x, y, 256) == 0.0);
    /* Q2_K: 0..3 × 15/16 (d = 1/16, scales 15) */
    for (int e = 0; e < 256; e++) x[e] = (float)(e % 4) * (15.0f / 16.0f);
    CHECK(roundtrip(WICK_Q2_K, x, y, 256) == 0.0);
    /* Q3_K: -4..3 × 0.25 */
    for (int e = 0; e < 256; e++) x[e] = (float)(e % 8 - 4) * 0.25f;
    CHECK(roundtrip(WICK_Q3_K, x, y, 256) == 0.0);
    /* IQ4_NL / IQ4_XS: the table itself, times 1/64 */
    for (int e = 0; e < 256; e++) x[e] = (float)IQ4_NL_VALUES[e % 16] / 64.0f;
    CHECK(roundtrip(WICK_IQ4_NL, x, y, 256) == 0.0);
    CHECK(roundtrip(WICK_IQ4_XS, x, y, 256) == 0.0);
}

/* ---- round-trip bounds and quality ---- */

static void test_bounds(void) {
    const int64_t n = 256 * 7; /* 7 super-blocks, 56 blocks of 32 */
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    for (int t = 0; t < N_TYPES; t++) {
        double worst = 0.0;
        for (int it = 0; it < 40; it++) {
            const float scale = it % 4 == 0 ? 1e-3f : it % 4 == 1 ? 1.0f : it % 4 == 2 ? 37.0f : 1500.0f;
            for (int64_t i = 0; i < n; i++) {
                float v = it % 2 ? gauss() : rnd_f();
                if (it % 5 == 3 && i % 61 == 7) v *= 8.0f;         /* outliers */
                if (it % 7 == 4 && (i / 16) % 5 == 2) v *= 0.01f;  /* quiet sub-blocks */
                x[i] = v * scale;
            }
            worst = fmax(worst, roundtrip(TYPES[t].type, x, y, n));
        }
        CHECK_MSG(worst <= TYPES[t].bound, "%s: max |x - x'| = %.4f of the block max (bound %.4f)",
                  dtype_name(TYPES[t].type), worst, TYPES[t].bound);
    }
    free(x), free(y);
}

static void test_quality(void) {
    const int64_t n = 256 * 64;
    float *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * n);
    for (int64_t i = 0; i < n; i++) x[i] = 0.02f * gauss();
    for (int t = 0; t < N_TYPES; t++) {
        roundtrip(TYPES[t].type, x, y, n);
        double se = 0, sx = 0;
        for (int64_t i = 0; i < n; i++) {
            se += ((double)x[i] - y[i]) * ((double)x[i] - y[i]);
            sx += (double)x[i] * x[i];
        }
        const double rel = sqrt(se / sx);
        CHECK_MSG(rel <= TYPES[t].rmse, "%s: relative RMSE %.5f (bound %.5f)", dtype_name(TYPES[t].type), rel,
                  TYPES[t].rmse);
    }
    free(x), free(y);
}

/* ---- special rows ---- */

static void test_special_rows(void) {
    const int64_t n = 512;
    float x[512], y[512];
    for (int t = 0; t < N_TYPES; t++) {
        const int type = TYPES[t].type;
        const char *name = dtype_name(type);
        /* zero: exactly zero back */
        memset(x, 0, sizeof x);
        CHECK_MSG(roundtrip(type, x, y, n) == 0.0, "%s zero row", name);
        /* negative zero and denormals count as zero-sized groups */
        for (int i = 0; i < n; i++) x[i] = i % 2 ? -0.0f : 1e-40f;
        roundtrip(type, x, y, n);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += !(fabsf(y[i]) <= 1e-30f);
        CHECK_MSG(bad == 0, "%s: tiny row", name);
        /* constant rows, positive and negative */
        for (int s = 0; s < 2; s++) {
            for (int i = 0; i < n; i++) x[i] = s ? -0.37f : 1234.5f;
            const double w = roundtrip(type, x, y, n);
            CHECK_MSG(w <= TYPES[t].bound, "%s constant row %g: %.4f", name, x[0], w);
        }
        /* one non-zero element per block */
        memset(x, 0, sizeof x);
        for (int i = 5; i < n; i += 32) x[i] = i % 64 == 5 ? 2.5f : -0.75f;
        const double w1 = roundtrip(type, x, y, n);
        CHECK_MSG(w1 <= TYPES[t].bound, "%s sparse row: %.4f", name, w1);
        /* huge but representable: |x| up to 6e4 */
        for (int i = 0; i < n; i++) x[i] = 6e4f * rnd_f();
        const double w2 = roundtrip(type, x, y, n);
        CHECK_MSG(w2 <= TYPES[t].bound, "%s huge row: %.4f", name, w2);
    }
    /* beyond fp16's range, infinities and NaN: no crash, and the searched types
     * keep finite scales (1e30 saturates them) */
    const int searched[] = {WICK_Q2_K, WICK_Q3_K, WICK_Q4_K, WICK_Q5_K, WICK_Q6_K, WICK_IQ4_NL, WICK_IQ4_XS,
                            WICK_Q4_1, WICK_Q5_0, WICK_Q5_1};
    for (size_t k = 0; k < sizeof searched / sizeof searched[0]; k++) {
        const int type = searched[k];
        for (int i = 0; i < n; i++) x[i] = 1e30f * rnd_f();
        roundtrip(type, x, y, n);
        int bad = 0;
        for (int i = 0; i < n; i++) bad += !isfinite(y[i]);
        CHECK_MSG(bad == 0, "%s: %d non-finite values from a 1e30 row", dtype_name(type), bad);
        for (int i = 0; i < n; i++) x[i] = i % 7 == 0 ? INFINITY : i % 11 == 0 ? NAN : i % 13 == 0 ? -INFINITY : rnd_f();
        roundtrip(type, x, y, n); /* any values; must not crash or trip the sanitizers */
    }
}

/* Quantizing many blocks at once equals quantizing them one by one (no state
 * carried across blocks), and the same input gives the same bytes. */
static void test_blockwise(void) {
    const int64_t rows = 7, cols = 768; /* an odd count of rows, 3 super-blocks each */
    float *x = malloc(sizeof(float) * rows * cols);
    for (int64_t i = 0; i < rows * cols; i++) x[i] = gauss() * (i % 97 == 0 ? 5.0f : 1.0f);
    for (int t = 0; t < N_TYPES; t++) {
        const int type = TYPES[t].type, blk = dtype_block_elems(type);
        const size_t bb = dtype_block_bytes(type), total = dtype_row_bytes(type, rows * cols);
        char *whole = malloc(total), *again = malloc(total), *parts = malloc(total);
        quantize_row(type, x, whole, rows * cols);
        quantize_row(type, x, again, rows * cols);
        for (int64_t b = 0; b < rows * cols / blk; b++) quantize_row(type, x + b * blk, parts + b * bb, blk);
        CHECK_MSG(memcmp(whole, again, total) == 0, "%s: not deterministic", dtype_name(type));
        CHECK_MSG(memcmp(whole, parts, total) == 0, "%s: blocks depend on each other", dtype_name(type));
        free(whole), free(again), free(parts);
    }
    free(x);
}

int main(void) {
    rng_state = 0x13198a2e03707344ull; /* this program's own sequence */
    RUN(test_supported);
    RUN(test_known_legacy);
    RUN(test_known_grid);
    RUN(test_bounds);
    RUN(test_quality);
    RUN(test_special_rows);
    RUN(test_blockwise);
    return check_summary("test_quantize");
}
