/* test_quant_kernels.c — the matmul kernels of Q4_1, Q5_0, Q5_1, IQ4_NL,
 * Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS, and their Q8_K activations: every
 * kernel is THE DEFINITION of matmul_quant.h, so all of them must agree BIT
 * FOR BIT with the scalar twin (mm_quant_rows_scalar on the file layout):
 *   - the interleaved ("R16") layout's scalar twin and, where the CPU has
 *     it, its AVX-512 kernel, decode (n <= 16) and prefill (n > 16), with
 *     rows split unevenly and at odd boundaries;
 *   - the file-layout kernel of every ISA level the CPU has;
 *   - matmul(tt(), ) on 1-3 threads, file layout and repacked;
 * on random blocks (random bytes, fp16 fields set to finite values) and
 * random activations, odd sizes included. The repack round-trips every block
 * and matmul_weight_row equals dequantize_row. And the definition itself is
 * checked against the double-precision dot product of the dequantized
 * weights and activations: |Δ| <= 1e-5·Σ|w·x| + 1e-30 (float accumulation). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tuning.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_q8k.h"
#include "kernels/matmul_quant.h"
#include "kernels/matmul_quant_r16.h"
#include "rng.h"

static const int TYPES[] = {WICK_Q4_1, WICK_Q5_0, WICK_Q5_1, WICK_IQ4_NL, WICK_Q2_K,
                            WICK_Q3_K, WICK_Q4_K, WICK_Q5_K, WICK_Q6_K, WICK_IQ4_XS};
#define N_TYPES (int)(sizeof TYPES / sizeof TYPES[0])

/* fp16 of a random value of magnitude about `scale` (sign random unless positive). */
static uint16_t rnd_half(float scale, int positive) {
    float v = scale * (0.25f + 0.75f * fabsf(rnd_f()));
    if (!positive && (rnd_u32() & 1)) v = -v;
    return f32_to_fp16(v);
}

/* Offsets of the fp16 fields of a block, -1 terminated. */
static void half_fields(int type, int at[3]) {
    at[0] = at[1] = at[2] = -1;
    switch (type) {
    case WICK_Q4_1: case WICK_Q5_1: case WICK_Q4_K: case WICK_Q5_K: at[0] = 0, at[1] = 2; break;
    case WICK_Q5_0: case WICK_IQ4_NL: case WICK_IQ4_XS: at[0] = 0; break;
    case WICK_Q6_K: at[0] = 208; break;
    case WICK_Q3_K: at[0] = 108; break;
    case WICK_Q2_K: at[0] = 80, at[1] = 82; break;
    default: break;
    }
}

static void *make_w(int type, int rows, int cols) {
    const size_t bb = dtype_block_bytes(type), nblk = (size_t)rows * (size_t)(cols / dtype_block_elems(type));
    uint8_t *w = aligned_alloc(64, (nblk * bb + 63) & ~(size_t)63);
    for (size_t k = 0; k < nblk; k++) {
        uint8_t *b = w + k * bb;
        for (size_t i = 0; i < bb; i++) b[i] = (uint8_t)rnd_u32();
        int at[3];
        half_fields(type, at);
        for (int f = 0; f < 3 && at[f] >= 0; f++) {
            const uint16_t h = rnd_half(f == 0 ? 0.01f : 0.02f, type == WICK_Q4_K || type == WICK_Q5_K || type == WICK_Q2_K);
            memcpy(b + at[f], &h, 2);
        }
    }
    return w;
}

static bool is_k(int type) { return dtype_block_elems(type) == WICK_QK_K; }

static void prepare_x(int type, const float *x, int n, int cols, void *xq) {
    if (is_k(type)) mm_q8k_quantize_x(tt(), NULL, x, n, cols, xq);
    else matmul_quantize_x(tt(), NULL, x, n, cols, xq);
}

static int n_isas(void) { return (int)cpu_best_isa() + 1; }

/* Q8_K activations: every ISA level writes the scalar level's bytes (values
 * at rounding ties, zero and constant blocks, a huge block included). */
static void test_q8k_quantize(void) {
    enum { NB = 7 };
    float *x = malloc(sizeof(float) * NB * WICK_QK_K);
    rnd_fill(x, NB * WICK_QK_K, 4.0f);
    for (int j = 0; j < WICK_QK_K; j++) {
        x[WICK_QK_K + j] = 0.0f;                          /* all zero */
        x[2 * WICK_QK_K + j] = 0.5f;                      /* constant */
        x[3 * WICK_QK_K + j] = (float)(j % 255 - 127) * 0.5f; /* halves: ties at every step */
        x[4 * WICK_QK_K + j] = rnd_f() * 1e30f;           /* huge */
    }
    block_q8_K ref[NB], got[NB];
    quantize_row_q8_k_isa(x, ref, NB, ISA_SCALAR);
    for (int b = 0; b < NB; b++) {
        float amax = 0;
        for (int j = 0; j < WICK_QK_K; j++) amax = fmaxf(amax, fabsf(x[b * WICK_QK_K + j]));
        CHECK(ref[b].d == amax / 127.0f);
        for (int g = 0; g < 16; g++) {
            int s = 0;
            for (int j = 0; j < 16; j++) s += ref[b].qs[16 * g + j];
            CHECK_INT(ref[b].bsums[g], s);
        }
    }
    for (int isa = 1; isa < n_isas(); isa++) {
        quantize_row_q8_k_isa(x, got, NB, isa);
        CHECK_MSG(memcmp(ref, got, sizeof ref) == 0, "Q8_K quantization at %s differs from scalar",
                  cpu_isa_name((cpu_isa)isa));
    }
    free(x);
}

/* The definition vs the dequantized double-precision product. */
static void test_definition(void) {
    for (int ti = 0; ti < N_TYPES; ti++) {
        const int type = TYPES[ti], cols = is_k(type) ? 768 : 224, rows = 5, n = 3;
        void *w = make_w(type, rows, cols);
        float *x = malloc(sizeof(float) * (size_t)n * cols), *y = malloc(sizeof(float) * (size_t)n * rows);
        rnd_fill(x, (int64_t)n * cols, 2.0f);
        void *xq = malloc(matmul_scratch_bytes(type, cols, n));
        prepare_x(type, x, n, cols, xq);
        mm_quant_dot_blocks(type, w, 0, cols / dtype_block_elems(type), cols, xq, n, y, rows, 0, true);
        for (int r = 1; r < rows; r++)
            mm_quant_dot_blocks(type, (const char *)w + (size_t)r * dtype_row_bytes(type, cols), 0,
                           cols / dtype_block_elems(type), cols, xq, n, y, rows, r, true);
        /* the activations as the kernels see them */
        float *xd = malloc(sizeof(float) * (size_t)cols), *wd = malloc(sizeof(float) * (size_t)cols);
        int bad = 0;
        for (int i = 0; i < n; i++) {
            if (is_k(type)) {
                const block_q8_K *xb = (const block_q8_K *)xq + (size_t)i * (cols / WICK_QK_K);
                for (int c = 0; c < cols; c++) xd[c] = xb[c / WICK_QK_K].d * (float)xb[c / WICK_QK_K].qs[c % WICK_QK_K];
            } else {
                dequantize_row(WICK_Q8_0, (const block_q8_0 *)xq + (size_t)i * (cols / WICK_QK), xd, cols);
            }
            for (int r = 0; r < rows; r++) {
                dequantize_row(type, (const char *)w + (size_t)r * dtype_row_bytes(type, cols), wd, cols);
                double s = 0, sa = 0;
                for (int c = 0; c < cols; c++) s += (double)wd[c] * xd[c], sa += fabs((double)wd[c] * xd[c]);
                if (fabs(y[(size_t)i * rows + r] - s) > 1e-5 * sa + 1e-30 && bad++ < 3)
                    fprintf(stderr, "%s row %d token %d: kernel %.9g, dequantized product %.9g\n", dtype_name(type), r,
                            i, y[(size_t)i * rows + r], s);
            }
        }
        CHECK_MSG(bad == 0, "%s: %d products off", dtype_name(type), bad);
        free(w), free(x), free(y), free(xq), free(xd), free(wd);
    }
}

static void test_repack_roundtrip(void) {
    for (int ti = 0; ti < N_TYPES; ti++) {
        const int type = TYPES[ti], be = dtype_block_elems(type), cols = 3 * be, rows = 32;
        const size_t bytes = dtype_row_bytes(type, cols) * rows;
        void *w = make_w(type, rows, cols), *wr = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
        wick_tensor W = {"w", type, 2, {cols, rows, 1, 1}, w, bytes};
        const int to = matmul_repack(tt(), NULL, &W, wr);
        CHECK_INT(to, mm_quant_r16_of(type));
        CHECK_INT(mm_quant_r16_base(to), type);
        wick_tensor R = W;
        R.type = to, R.data = wr;
        int bad = 0;
        float *a = malloc(sizeof(float) * cols), *b = malloc(sizeof(float) * cols);
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < 3; k++) {
                char blk[256];
                mm_quant_r16_unpack_block(type, (const char *)wr + (size_t)(r / 16) * 16 * dtype_row_bytes(type, cols), 3,
                                     r % 16, k, blk);
                bad += memcmp(blk, (const char *)w + (size_t)r * dtype_row_bytes(type, cols) + k * dtype_block_bytes(type),
                              dtype_block_bytes(type)) != 0;
            }
            matmul_weight_row(&W, r, a);
            matmul_weight_row(&R, r, b);
            bad += memcmp(a, b, sizeof(float) * cols) != 0;
        }
        CHECK_MSG(bad == 0, "%s: %d blocks or rows differ after the repack", dtype_name(type), bad);
        free(w), free(wr), free(a), free(b);
    }
}

/* The other prefetch styles change only the decode kernels: those runs take
 * n <= 8 and the two smaller widths. */
static bool decode_only;

static void test_kernels(void) {
    static const int ROWS[] = {16, 48, 80, 160};
    static const int NS[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 33};
    const cpu_isa saved = tt()->isa;
    wick_error err;
    wick_pool *pools[3] = {NULL, pool_new(2, &err), pool_new(3, &err)};
    for (int ti = 0; ti < N_TYPES; ti++) {
        const int type = TYPES[ti], be = dtype_block_elems(type);
        const int COLS[] = {be, 3 * be, be == 32 ? 17 * be : 5 * be, be == 32 ? 41 * be : 9 * be};
        int fails = 0, checks = 0;
        for (int ri = 0; ri < 4; ri++)
            for (int ci = 0; ci < (decode_only ? 2 : 4); ci++)
                for (int ni = 0; ni < (decode_only ? 7 : (int)(sizeof NS / sizeof NS[0])); ni++) {
                    const int rows = ROWS[ri], cols = COLS[ci], n = NS[ni], ldy = rows + 3;
                    const size_t bytes = dtype_row_bytes(type, cols) * (size_t)rows;
                    void *w = make_w(type, rows, cols), *wr = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
                    wick_tensor W = {"w", type, 2, {cols, rows, 1, 1}, w, bytes};
                    const int to = matmul_repack(tt(), NULL, &W, wr);
                    wick_tensor R = W;
                    R.type = to, R.data = wr;
                    float *x = malloc(sizeof(float) * (size_t)n * cols);
                    rnd_fill(x, (int64_t)n * cols, 3.0f);
                    void *xq = malloc(matmul_scratch_bytes(type, cols, n));
                    CHECK(matmul_scratch_bytes(to, cols, n) == matmul_scratch_bytes(type, cols, n));
                    prepare_x(type, x, n, cols, xq);
                    const size_t ny = (size_t)n * ldy;
                    float *y0 = malloc(sizeof(float) * ny), *y1 = malloc(sizeof(float) * ny);
                    for (size_t i = 0; i < ny; i++) y0[i] = -777.0f;
                    for (int r = 0; r < rows; r++)
                        mm_quant_dot_blocks(type, (const char *)w + (size_t)r * dtype_row_bytes(type, cols), 0, cols / be,
                                       cols, xq, n, y0, ldy, r, true);
                    /* the interleaved scalar twin, the file layout per ISA, the interleaved per ISA */
                    for (int isa = 0; isa < n_isas(); isa++) {
                        CHECK(tt_set_isa((cpu_isa)isa));
                        for (int v = 0; v < 3; v++) {
                            for (size_t i = 0; i < ny; i++) y1[i] = -777.0f;
                            const int cuts[] = {0, rows / 3, rows / 3 + 5 < rows ? rows / 3 + 5 : rows, rows};
                            for (int k = 0; k < 3; k++) {
                                if (v == 0) mm_quant_r16_rows_scalar(&(mm_call){tt(), to, wr, cols, x, xq, n, y1, ldy, cuts[k], cuts[k + 1]});
                                else if (v == 1) matmul_rows(&(mm_call){tt(), type, w, cols, x, xq, n, y1, ldy, cuts[k], cuts[k + 1]});
                                else matmul_rows(&(mm_call){tt(), to, wr, cols, x, xq, n, y1, ldy, cuts[k], cuts[k + 1]});
                            }
                            checks++;
                            if (memcmp(y0, y1, sizeof(float) * ny) != 0 && fails++ < 5)
                                fprintf(stderr, "%s rows %d cols %d n %d isa %s %s: differs\n", dtype_name(type), rows,
                                        cols, n, cpu_isa_name((cpu_isa)isa),
                                        v == 0 ? "r16 scalar" : v == 1 ? "file layout" : "r16");
                        }
                        for (int p = 0; p < 3; p++)
                            for (int lay = 0; lay < 2; lay++) {
                                for (size_t i = 0; i < ny; i++) y1[i] = -777.0f;
                                matmul(tt(), pools[p], lay ? &R : &W, x, n, y1, ldy, xq);
                                checks++;
                                if (memcmp(y0, y1, sizeof(float) * ny) != 0 && fails++ < 5)
                                    fprintf(stderr, "%s rows %d cols %d n %d isa %s threads %d %s: matmul differs\n",
                                            dtype_name(type), rows, cols, n, cpu_isa_name((cpu_isa)isa), p + 1,
                                            lay ? "r16" : "file");
                            }
                    }
                    tt_set_isa(saved);
                    free(w), free(wr), free(x), free(xq), free(y0), free(y1);
                }
        CHECK_MSG(fails == 0, "%s: %d of %d comparisons differ", dtype_name(type), fails, checks);
    }
    pool_free(pools[1]);
    pool_free(pools[2]);
}

int main(void) {
    SKIP_ISAS_THIS_CPU_LACKS();
    RUN(test_q8k_quantize);
    RUN(test_definition);
    RUN(test_repack_roundtrip);
    const cpu_prefetch pf = tt()->prefetch;
    RUN(test_kernels);
    decode_only = true;
    for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) { /* decode kernels in every prefetch style */
        if (style == (int)pf) continue;
        tt_set_prefetch((cpu_prefetch)style);
        RUN(test_kernels);
    }
    tt_reset_prefetch();
    tt_set_act_nt(!tt()->act_nt); /* decode activations copied out non-temporally, and not */
    RUN(test_kernels);
    tt_set_act_nt(!tt()->act_nt);
    return check_summary("test_quant_kernels");
}
