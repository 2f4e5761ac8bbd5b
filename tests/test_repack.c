/* test_repack.c — tests of the interleaved Q8_0/Q4_0 weight layouts
 * (matmul_repack.c, matmul_r16*.c): the repack (threads, in place), row dequantization,
 * the scalar twin against the file-layout scalar kernel, the AVX-512
 * kernels against the file-layout AVX-512 kernel and the AVX2 kernels
 * against the scalar one (bit-identical: same integer sums, same float
 * operations per row) for odd sizes, token counts
 * 1..33, uneven row splits and thread counts; and the arena the loader
 * carves repacked matrices from (core/weight_alloc.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tuning.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "core/weight_alloc.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

static uint64_t rng = 0x2545f4914f6cdd1dull;
static float rndf(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((rng >> 40) & 0xffffff) / (float)0x800000 - 1.0f;
}

static void *make_w(int type, int rows, int cols) {
    const size_t rb = dtype_row_bytes(type, cols);
    char *w = aligned_alloc(64, (rb * (size_t)rows + 63) & ~(size_t)63);
    float *tmp = malloc(sizeof(float) * (size_t)cols);
    for (int r = 0; r < rows; r++) {
        for (int c = 0; c < cols; c++) tmp[c] = rndf() * (r % 3 ? 1.0f : 0.01f);
        if (r % 7 == 2) memset(tmp, 0, sizeof(float) * 32); /* an all-zero block */
        quantize_row(type, tmp, w + rb * (size_t)r, cols);
    }
    free(tmp);
    return w;
}

static void test_repack_layout(void) {
    static const int TYPES[] = {WICK_Q8_0, WICK_Q4_0};
    static const int ROWS[] = {32, 96, 160};
    static const int COLS[] = {32, 64, 96, 1056};
    wick_error err;
    wick_pool *pools[3] = {NULL, pool_new(2, &err), pool_new(3, &err)};
    for (int ti = 0; ti < 2; ti++)
        for (int ri = 0; ri < (int)(sizeof ROWS / sizeof ROWS[0]); ri++)
            for (int ci = 0; ci < (int)(sizeof COLS / sizeof COLS[0]); ci++) {
                const int type = TYPES[ti], rows = ROWS[ri], cols = COLS[ci];
                const size_t bytes = dtype_row_bytes(type, cols) * (size_t)rows;
                void *w = make_w(type, rows, cols);
                wick_tensor W = {"w", type, 2, {cols, rows, 1, 1}, w, bytes};
                void *ref = malloc(bytes);
                const int to = matmul_repack(tt(), NULL, &W, ref);
                CHECK_INT(to, type == WICK_Q8_0 ? WICK_Q8_0_R16 : WICK_Q4_0_R16);
                for (int p = 1; p < 3; p++) {
                    void *d = malloc(bytes);
                    CHECK_INT(matmul_repack(tt(), pools[p], &W, d), to);
                    CHECK(memcmp(d, ref, bytes) == 0);
                    free(d);
                }
                /* in place, as the loader does with --dtype copies */
                void *ip = malloc(bytes);
                memcpy(ip, w, bytes);
                wick_tensor Wi = W;
                Wi.data = ip;
                CHECK_INT(matmul_repack(tt(), pools[1], &Wi, ip), to);
                CHECK(memcmp(ip, ref, bytes) == 0);
                /* every row dequantizes exactly as the file layout's */
                wick_tensor R = W;
                R.type = to, R.data = ref;
                float *a = malloc(sizeof(float) * (size_t)cols), *b = malloc(sizeof(float) * (size_t)cols);
                int bad = 0;
                for (int r = 0; r < rows; r++) {
                    matmul_weight_row(&W, r, a);
                    matmul_weight_row(&R, r, b);
                    bad += memcmp(a, b, sizeof(float) * (size_t)cols) != 0;
                }
                CHECK_MSG(bad == 0, "%s rows %d cols %d: %d rows differ", dtype_name(type), rows, cols, bad);
                free(a), free(b), free(ip), free(ref), free(w);
            }
    /* not repackable: rows not a multiple of 32 (groups go in pairs), float types */
    float f[32 * 48] = {0};
    static const int ODD_ROWS[] = {17, 16, 48};
    for (int i = 0; i < 3; i++)
        for (int ti = 0; ti < 2; ti++) {
            const int type = TYPES[ti], rows = ODD_ROWS[i];
            wick_tensor odd = {"w", type, 2, {32, rows, 1, 1}, f, dtype_row_bytes(type, 32) * (size_t)rows};
            CHECK_INT(matmul_repack_type(tt(), &odd), -1);
            CHECK_INT(matmul_repack(tt(), NULL, &odd, f), -1);
        }
    wick_tensor fl = {"w", WICK_F32, 2, {32, 16, 1, 1}, f, 32 * 16 * 4};
    CHECK_INT(matmul_repack_type(tt(), &fl), -1);
    pool_free(pools[1]);
    pool_free(pools[2]);
}

static int n_isas(void) { return (int)cpu_best_isa() + 1; }

static void test_repack_matmul(void) {
    static const int TYPES[] = {WICK_Q8_0, WICK_Q4_0};
    static const int ROWS[] = {32, 96, 160, 288}; /* 288: past one prefill row block (256) */
    static const int COLS[] = {32, 96, 128, 224, 1056};
    static const int NS[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 16, 33}; /* decode passes of 1-6 tokens over a pair, 1-8 over a lone group */
    const cpu_isa saved = tt()->isa;
    wick_error err;
    wick_pool *pools[3] = {NULL, pool_new(2, &err), pool_new(3, &err)};
    for (int ti = 0; ti < 2; ti++) {
        int fails = 0, checks = 0;
        for (int ri = 0; ri < (int)(sizeof ROWS / sizeof ROWS[0]); ri++)
            for (int ci = 0; ci < (int)(sizeof COLS / sizeof COLS[0]); ci++)
                for (int ni = 0; ni < (int)(sizeof NS / sizeof NS[0]); ni++) {
                    /* y's rows padded, or whole 64-byte lines (where 6-8-token Q4_0
                     * decode may store non-temporally, kernel_tuning.act_nt) */
                    const int type = TYPES[ti], rows = ROWS[ri], cols = COLS[ci], n = NS[ni], ldy = ci % 2 ? rows : rows + 5;
                    const size_t bytes = dtype_row_bytes(type, cols) * (size_t)rows;
                    void *w = make_w(type, rows, cols), *wr = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
                    wick_tensor W = {"w", type, 2, {cols, rows, 1, 1}, w, bytes};
                    const int to = matmul_repack(tt(), NULL, &W, wr);
                    wick_tensor R = W;
                    R.type = to, R.data = wr;
                    float *x = malloc(sizeof(float) * (size_t)n * cols);
                    for (int i = 0; i < n * cols; i++) x[i] = rndf() * 3.0f;
                    void *xq = malloc(matmul_scratch_bytes(to, cols, n));
                    CHECK(matmul_scratch_bytes(to, cols, n) == matmul_scratch_bytes(type, cols, n));
                    matmul_quantize_x(tt(), NULL, x, n, cols, xq);
                    const size_t ny = (size_t)n * ldy;
                    const size_t ybytes = (sizeof(float) * ny + 63) & ~(size_t)63;
                    float *y0 = aligned_alloc(64, ybytes), *y1 = aligned_alloc(64, ybytes);
                    /* scalar twin == file-layout scalar kernel */
                    for (size_t i = 0; i < ny; i++) y0[i] = y1[i] = -777.0f;
                    matmul_rows_scalar(&(mm_call){tt(), type, w, cols, x, xq, n, y0, ldy, 0, rows});
                    matmul_rows_scalar(&(mm_call){tt(), to, wr, cols, x, xq, n, y1, ldy, 0, rows});
                    checks++;
                    fails += memcmp(y0, y1, sizeof(float) * ny) != 0;
                    for (int isa = 0; isa < n_isas(); isa++) {
                        CHECK(tt_set_isa((cpu_isa)isa));
                        /* file layout under this ISA, vs the interleaved one split unevenly */
                        for (size_t i = 0; i < ny; i++) y0[i] = y1[i] = -777.0f;
                        if (isa == ISA_AVX512) matmul_rows(&(mm_call){tt(), type, w, cols, x, xq, n, y0, ldy, 0, rows});
                        else matmul_rows_scalar(&(mm_call){tt(), type, w, cols, x, xq, n, y0, ldy, 0, rows});
                        const int cuts[] = {0, rows / 3, rows / 3 + 5 < rows ? rows / 3 + 5 : rows, rows};
                        for (int k = 0; k < 3; k++) matmul_rows(&(mm_call){tt(), to, wr, cols, x, xq, n, y1, ldy, cuts[k], cuts[k + 1]});
                        checks++;
                        if (memcmp(y0, y1, sizeof(float) * ny) != 0 && fails++ < 5)
                            fprintf(stderr, "%s rows %d cols %d n %d isa %s: rows differ\n", dtype_name(type), rows,
                                    cols, n, cpu_isa_name((cpu_isa)isa));
                        /* whole matmul(tt(), ) on 1-3 threads */
                        for (int p = 0; p < 3; p++) {
                            for (size_t i = 0; i < ny; i++) y1[i] = -777.0f;
                            matmul(tt(), pools[p], &R, x, n, y1, ldy, xq);
                            checks++;
                            if (memcmp(y0, y1, sizeof(float) * ny) != 0 && fails++ < 5)
                                fprintf(stderr, "%s rows %d cols %d n %d isa %s threads %d: matmul differs\n",
                                        dtype_name(type), rows, cols, n, cpu_isa_name((cpu_isa)isa), p + 1);
                        }
                    }
                    tt_set_isa(saved);
                    free(w), free(wr), free(x), free(xq), free(y0), free(y1);
                }
        CHECK_MSG(fails == 0, "%s: %d of %d comparisons differ", dtype_name(TYPES[ti]), fails, checks);
    }
    pool_free(pools[1]);
    pool_free(pools[2]);
}

/* Takes are 64-byte aligned, back to back, never past the reservation;
 * an empty arena gives nothing; holds() tells its buffer from others. */
static void test_weight_arena(void) {
    const size_t sizes[] = {1, 64, 65, 3000, 5 << 20};
    size_t need = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) need += weight_arena_bytes(sizes[i]);
    CHECK(need == 64 + 64 + 128 + 3008 + ((size_t)5 << 20));
    weight_arena a;
    CHECK(weight_arena_init(&a, need));
    char *prev = NULL;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *p = weight_arena_take(&a, sizes[i]);
        CHECK(p && (uintptr_t)p % 64 == 0 && weight_arena_holds(&a, p) && weight_arena_holds(&a, p + sizes[i] - 1));
        CHECK(!prev || p == prev + weight_arena_bytes(sizes[i - 1]));
        memset(p, (int)i, sizes[i]); /* all of it writable (ASan) */
        prev = p;
    }
    CHECK(a.used == need && weight_arena_take(&a, 1) == NULL);
    char other[64];
    CHECK(!weight_arena_holds(&a, other) && !weight_arena_holds(&a, a.base + a.size));
    free(a.base);
    weight_arena e;
    CHECK(weight_arena_init(&e, 0) && weight_arena_take(&e, 1) == NULL && !weight_arena_holds(&e, other));
}

int main(void) {
    SKIP_ISAS_THIS_CPU_LACKS();
    RUN(test_weight_arena);
    RUN(test_repack_layout);
    for (int style = PREFETCH_OFF; style <= PREFETCH_LAST; style++) { /* decode kernels in every prefetch style */
        tt_set_prefetch((cpu_prefetch)style);
        RUN(test_repack_matmul);
    }
    tt_reset_prefetch();
    tt_set_act_nt(!tt()->act_nt); /* activations (and 6-8-token Q4_0 sums) stored plainly, and non-temporally */
    RUN(test_repack_matmul);
    tt_set_act_nt(!tt()->act_nt);
    return check_summary("test_repack");
}
