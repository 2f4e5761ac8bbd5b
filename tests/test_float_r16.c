/* test_float_r16.c — the F16/BF16 interleaved layouts and their kernels
 * (matmul_float_r16.h). Every kernel computes THE DEFINITION, so:
 *   - the scalar twin equals the AVX-512 and AVX2 kernels (each ISA the CPU
 *     has) BIT FOR BIT (decode and prefill; rows split unevenly; every
 *     prefetch style), and so does matmul(tt(), ) on 1-3 threads;
 *   - the definition is within 1e-5·Σ|w·x| of the double-precision dot
 *     product of the weights with the activations as the kernel reads them
 *     (BF16_R16: rounded to BF16);
 *   - BF16_R16's emulated VDPBF16PS handles zero-exponent inputs (read as zero)
 *     as the instruction does (checked where the CPU has it, on rows full of
 *     tiny values);
 *   - the repack round-trips and matmul_weight_row reads rows back. */
#include <math.h>
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
#include "kernels/matmul_float_r16.h"
#include "kernels/matmul_impl.h"
#include "rng.h"

static uint16_t *make_w(int type, int rows, int cols, int tiny) {
    uint16_t *w = aligned_alloc(64, ((size_t)rows * cols * 2 + 63) & ~(size_t)63);
    for (size_t i = 0; i < (size_t)rows * cols; i++) {
        float v = rnd_f() * 0.5f;
        if (tiny && i % 3 == 0) v *= 1e-38f; /* BF16 zero-exponent values */
        w[i] = type == WICK_F16 ? f32_to_fp16(v) : f32_to_bf16(v);
    }
    return w;
}

/* Whether the active ISA has a kernel for layout `to`: AVX-512 for all
 * (BF16_R16 with AVX-512 BF16 only), AVX2 for the halves layouts. */
static bool have_kernel(int to) {
    if (tt()->isa == ISA_AVX512) return to != WICK_BF16_R16 || cpu_get_features()->avx512bf16;
    return tt()->isa == ISA_AVX2 && mm_float_r16_halves(to);
}

static void test_kernels(int to) {
    static const int ROWS[] = {64, 128, 320, 576};
    static const int COLS[] = {2, 30, 64, 258, 1030};
    static const int NS[] = {1, 2, 3, 4, 5, 8, 13, 16, 17, 30};
    const int type = mm_float_r16_base(to);
    wick_error err;
    wick_pool *pools[3] = {NULL, pool_new(2, &err), pool_new(3, &err)};
    int fails = 0, checks = 0, bad_def = 0;
    for (int ri = 0; ri < 4; ri++)
        for (int ci = 0; ci < 5; ci++)
            for (int ni = 0; ni < 10; ni++) {
                const int rows = ROWS[ri], cols = COLS[ci], n = NS[ni], ldy = rows + 3;
                if (rows == 576 && cols == 1030 && n > 5) continue;
                const int tiny = to == WICK_BF16_R16 && ci == 2;
                uint16_t *w = make_w(type, rows, cols, tiny);
                const size_t bytes = (size_t)rows * cols * 2;
                uint16_t *wr = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
                for (int b = 0; b < rows / 64; b++)
                    mm_float_r16_pack_block(to, w + (size_t)b * 64 * cols, (char *)wr + (size_t)b * 64 * cols * 2, cols);
                float *x = malloc(sizeof(float) * (size_t)n * cols);
                rnd_fill(x, (int64_t)n * cols, 2.0f);
                if (tiny)
                    for (int i = 0; i < n * cols; i += 5) x[i] *= 1e-38f;
                void *xq = malloc(mm_float_r16_xq_bytes(to, cols, n) + 1);
                mm_float_r16_prepare_x(to, x, n, cols, xq);
                const size_t ny = (size_t)n * ldy;
                float *y0 = malloc(sizeof(float) * ny), *y1 = malloc(sizeof(float) * ny);
                for (size_t i = 0; i < ny; i++) y0[i] = -777.0f;
                mm_float_r16_rows_scalar(&(mm_call){tt(), to, wr, cols, x, xq, n, y0, ldy, 0, rows});
                /* the definition against double precision (inputs as the kernel reads them) */
                for (int t = 0; t < n && !tiny; t++)
                    for (int r = 0; r < rows; r++) {
                        double s = 0, a = 0;
                        for (int k = 0; k < cols; k++) {
                            const uint16_t h = w[(size_t)r * cols + k];
                            const double wv = type == WICK_F16 ? fp16_to_f32(h) : bf16_to_f32(h);
                            const double xv = to != WICK_BF16_R16 ? x[(size_t)t * cols + k]
                                                                  : bf16_to_f32(((uint16_t *)xq)[(size_t)t * cols + k]);
                            s += wv * xv, a += fabs(wv * xv);
                        }
                        if (fabs(s - y0[(size_t)t * ldy + r]) > 1e-5 * a + 1e-30) bad_def++;
                    }
                if (have_kernel(to)) {
                    const int cuts[] = {0, rows / 3, rows / 3 + 5 < rows ? rows / 3 + 5 : rows, rows};
                    for (size_t i = 0; i < ny; i++) y1[i] = -777.0f;
                    for (int k = 0; k < 3; k++) matmul_rows(&(mm_call){tt(), to, wr, cols, x, xq, n, y1, ldy, cuts[k], cuts[k + 1]});
                    checks++;
                    if (memcmp(y0, y1, sizeof(float) * ny) != 0 && fails++ < 5)
                        fprintf(stderr, "%s layout %d rows %d cols %d n %d: %s differs from the twin\n",
                                dtype_name(type), to, rows, cols, n, cpu_isa_name(tt()->isa));
                    wick_tensor R = {"w", to, 2, {cols, rows, 1, 1}, wr, bytes};
                    void *scratch = malloc(matmul_scratch_bytes(to, cols, n) + 1);
                    for (int p = 0; p < 3; p++) {
                        for (size_t i = 0; i < ny; i++) y1[i] = -777.0f;
                        matmul(tt(), pools[p], &R, x, n, y1, ldy, scratch);
                        checks++;
                        if (memcmp(y0, y1, sizeof(float) * ny) != 0 && fails++ < 5)
                            fprintf(stderr, "%s rows %d cols %d n %d threads %d: matmul differs\n", dtype_name(type),
                                    rows, cols, n, p + 1);
                    }
                    free(scratch);
                }
                free(w), free(wr), free(x), free(xq), free(y0), free(y1);
            }
    CHECK_MSG(fails == 0, "%s layout %d: %d of %d comparisons differ", dtype_name(type), to, fails, checks);
    CHECK_MSG(bad_def == 0, "%s layout %d: %d products off the double-precision dot", dtype_name(type), to, bad_def);
    pool_free(pools[1]);
    pool_free(pools[2]);
}

/* Layout `to` on every SIMD ISA the CPU has, best first (the scalar twin
 * and the definition check run on each pass). */
static void test_every_isa(int to) {
    const cpu_isa best = tt()->isa;
    for (int isa = best; isa >= ISA_AVX2; isa--) {
        tt_set_isa((cpu_isa)isa);
        test_kernels(to);
    }
    tt_set_isa(best);
}

static void test_f16(void) { test_every_isa(WICK_F16_R16); }
static void test_bf16(void) {
    test_every_isa(WICK_BF16_R16);
    test_every_isa(WICK_BF16_R16H);
}

static void test_layout(void) {
    static const int LAYOUTS[] = {WICK_F16_R16, WICK_BF16_R16, WICK_BF16_R16H};
    for (int li = 0; li < 3; li++) {
        const int to = LAYOUTS[li], type = mm_float_r16_base(to), rows = 128, cols = 70;
        uint16_t *w = make_w(type, rows, cols, 0);
        uint16_t *wr = malloc((size_t)rows * cols * 2), back[70];
        float a[70], b[70];
        for (int blk = 0; blk < 2; blk++)
            mm_float_r16_pack_block(to, w + (size_t)blk * 64 * cols, (char *)wr + (size_t)blk * 64 * cols * 2, cols);
        wick_tensor W = {"w", type, 2, {cols, rows, 1, 1}, w, (size_t)rows * cols * 2};
        wick_tensor R = W;
        R.type = to, R.data = wr;
        int bad = 0;
        for (int r = 0; r < rows; r++) {
            mm_float_r16_unpack_row(to, (char *)wr + (size_t)(r / 64) * 64 * cols * 2, cols, r % 64, back);
            bad += memcmp(back, w + (size_t)r * cols, sizeof back) != 0;
            matmul_weight_row(&W, r, a);
            matmul_weight_row(&R, r, b);
            bad += memcmp(a, b, sizeof a) != 0;
        }
        CHECK_MSG(bad == 0, "%s layout %d: %d rows differ after the repack", dtype_name(type), to, bad);
        CHECK_INT(mm_float_r16_type(tt(), type, 48, 64), -1); /* rows: whole 64-row blocks */
        CHECK_INT(mm_float_r16_type(tt(), type, 16, 63), -1);
        free(w), free(wr);
    }
    /* BF16 takes VDPBF16PS's layout on AMD CPUs with the instruction, else the
     * halves (unless WICK_BF16_KERNEL says otherwise); never without it */
    const cpu_features *f = cpu_get_features();
    const char *bk = getenv("WICK_BF16_KERNEL");
    if (!bk) CHECK_INT(mm_float_r16_type(tt(), WICK_BF16, 64, 64), f->avx512bf16 && f->amd ? WICK_BF16_R16 : WICK_BF16_R16H);
    const bool was = tt()->bf16_dp;
    tt_set_bf16_dp(true);
    CHECK_INT(mm_float_r16_type(tt(), WICK_BF16, 64, 64), f->avx512bf16 ? WICK_BF16_R16 : WICK_BF16_R16H);
    tt_set_bf16_dp(false);
    CHECK_INT(mm_float_r16_type(tt(), WICK_BF16, 64, 64), WICK_BF16_R16H);
    tt_set_bf16_dp(was);
}

int main(void) {
    SKIP_ISAS_THIS_CPU_LACKS();
    if (cpu_best_isa() == ISA_AVX512 && !cpu_get_features()->avx512bf16)
        SKIP_PART("the VDPBF16PS kernel of the BF16_R16 layout: this CPU has no AVX-512 BF16 (its scalar twin runs)");
    RUN(test_layout);
    RUN(test_f16);
    RUN(test_bf16);
    const cpu_prefetch pf = tt()->prefetch;
    for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) {
        if (style == (int)pf) continue;
        tt_set_prefetch((cpu_prefetch)style);
        RUN(test_f16);
        RUN(test_bf16);
    }
    tt_reset_prefetch();
    return check_summary("test_float_r16");
}
