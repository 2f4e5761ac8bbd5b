/* test_q6k.c — Q6_K weights: the block layout (known answers written from the
 * format description, which follows llama.cpp's dequantize_row_q6_K), wick's
 * own Q6_K quantizer, the Q6_K × Q8_K matmul at every ISA level against its
 * scalar twin, and whole models with Q6_K tensors loaded end to end.
 *
 * Tolerances (stated where used):
 *   - dequantization: bit-exact against (d * scale) * (q - 32) in float.
 *   - quantizer round trip (the quantizer itself is tested with the others in
 *     test_quantize.c): |x - x'| <= one step |d*scale| of its group (the
 *     value opposite the group's extreme may clip at +31) + 16|d| (half a
 *     scale unit times 32) + 4096 * 2^-24 (a subnormal d's rounding), and a
 *     step <= (group max|x|)/31 + |d| (+ 128 * 2^-24, a subnormal d's rounding).
 *   - matmul scalar vs the double-precision product of the dequantized
 *     operands, and SIMD vs scalar: <= 1e-5 * Σ|w·x| (+1e-30); integer
 *     super-block sums are exact, only float accumulation order differs.
 *   - a model with a Q6_K embedding (tied output) vs the same model with that
 *     embedding dequantized to F32: the embedding rows are then identical and
 *     the only difference is the Q8_K quantization of the output matmul's
 *     activations, so per position max|Δlogit| <= 0.02 * max|logit| and
 *     cosine >= 0.9999; same argmax where the F32 top-2 margin exceeds
 *     2 * max|Δlogit|. A model with every matrix Q6_K vs all-F32 dequantized
 *     copy: <= 0.05 * max|logit|, cosine >= 0.999. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tuning.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "format/gguf.h"
#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/matmul_q8k.h"
#include "cli/testmodel.h"
#include "rng.h"
#include "wick.h"


static int n_isas(void) { return (int)cpu_best_isa() + 1; }

/* The 6-bit quant of element e, straight from the format description: the
 * 256 elements are two halves of 128; in half h, element 32k + l (k < 4,
 * l < 32) keeps its low 4 bits in ql[64h + l] (k = 0: low nibble, k = 2:
 * high nibble) or ql[64h + 32 + l] (k = 1 low, k = 3 high), and its high 2
 * bits in qh[32h + l] at bit 2k. */
static int ref_q(const block_q6_K *b, int e) {
    int h = e / 128, k = (e % 128) / 32, l = e % 32;
    int byte = b->ql[64 * h + (k == 1 || k == 3 ? 32 : 0) + l];
    int low = (k >= 2) ? byte / 16 : byte % 16;
    int high = (b->qh[32 * h + l] / (1 << (2 * k))) % 4;
    return low + 16 * high;
}

static void random_block(block_q6_K *b, float dmag) {
    for (int i = 0; i < 128; i++) b->ql[i] = (uint8_t)rnd_u32();
    for (int i = 0; i < 64; i++) b->qh[i] = (uint8_t)rnd_u32();
    for (int i = 0; i < 16; i++) b->scales[i] = (int8_t)rnd_u32(); /* full int8 range, -128 included */
    b->d = f32_to_fp16(dmag * rnd_f());
}

static void test_layout(void) {
    /* hand-computed elements: ql[i] = i, qh[i] = 0xe4 (bits 00 01 10 11 from
     * bit 0 up) for half 0 and 0x1b for half 1, scales[g] = g - 8, d = 1 */
    block_q6_K b;
    for (int i = 0; i < 128; i++) b.ql[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++) b.qh[i] = i < 32 ? 0xe4 : 0x1b;
    for (int g = 0; g < 16; g++) b.scales[g] = (int8_t)(g - 8);
    b.d = 0x3c00;
    float y[256];
    dequantize_row(WICK_Q6_K, &b, y, 256);
    /* e=0: ql[0]=0 low 0, qh bits0 = 0 -> q 0; scale -8: (-8)*(0-32) = 256 */
    CHECK(y[0] == 256.0f);
    /* e=37 (k=1, l=5): ql[37]=37 low nibble 5, qh bits 2-3 = 1 -> q 21; g=2 scale -6: -6*(21-32) = 66 */
    CHECK(y[37] == 66.0f);
    /* e=70 (k=2, l=6): ql[6] high nibble 0, qh bits 4-5 = 2 -> q 32 -> 0 */
    CHECK(y[70] == 0.0f);
    /* e=127 (k=3, l=31): ql[63]=63 high nibble 3, qh bits 6-7 = 3 -> q 51; g=7 scale -1: -19 */
    CHECK(y[127] == -19.0f);
    /* e=128+97 (h=1, k=3, l=1): ql[64+32+1]=97 high 6, qh[33]=0x1b bits 6-7 = 0 -> q 6; g=14 scale 6: -156 */
    CHECK(y[225] == -156.0f);
    /* e=128+16 (h=1, k=0, l=16): ql[80]=80 low 0, 0x1b bits 0-1 = 3 -> q 48; g=9 scale 1: 16 */
    CHECK(y[144] == 16.0f);

    /* random blocks: every element against the description, bit-exact */
    int bad = 0;
    for (int it = 0; it < 200; it++) {
        block_q6_K blk[3];
        for (int i = 0; i < 3; i++) random_block(&blk[i], it % 2 ? 0.05f : 3.0f);
        float out[768];
        dequantize_row(WICK_Q6_K, blk, out, 768);
        for (int e = 0; e < 768; e++) {
            const block_q6_K *bb = &blk[e / 256];
            float want = fp16_to_f32(bb->d) * (float)bb->scales[(e % 256) / 16] * (float)(ref_q(bb, e % 256) - 32);
            if (memcmp(&want, &out[e], 4) != 0) bad++;
        }
    }
    CHECK_INT(bad, 0);
}

static void test_quantize(void) {
    const int N = 256 * 5;
    float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
    block_q6_K *q = malloc(sizeof(block_q6_K) * (N / 256));
    int bad = 0;
    for (int it = 0; it < 50; it++) {
        float scale = it % 3 == 0 ? 1e-3f : it % 3 == 1 ? 1.0f : 40.0f;
        for (int i = 0; i < N; i++) x[i] = rnd_f() * scale * (i % 37 == 0 ? 4.0f : 1.0f);
        if (it == 7) memset(x + 256, 0, sizeof(float) * 256);  /* an all-zero super-block */
        if (it == 8) memset(x + 512, 0, sizeof(float) * 16);   /* an all-zero group */
        quantize_row(WICK_Q6_K, x, q, N);
        dequantize_row(WICK_Q6_K, q, y, N);
        for (int i = 0; i < N; i++) {
            const block_q6_K *b = &q[i / 256];
            const float d = fabsf(fp16_to_f32(b->d));
            float step = d * fabsf((float)b->scales[(i % 256) / 16]);
            float amax = 0;
            for (int j = (i / 16) * 16; j < (i / 16) * 16 + 16; j++) amax = fmaxf(amax, fabsf(x[j]));
            /* a step (+ scale and subnormal rounding), and a step is at most group max/31 + |d| */
            if (!(fabsf(x[i] - y[i]) <= step * 1.0001f + 16.0f * d + 4096.0f * 0x1p-24f) ||
                !(step <= (amax / 31.0f + d) * 1.0001f + 128.0f * 0x1p-24f))
                if (bad++ < 5) fprintf(stderr, "q6_k round trip it=%d i=%d: %g -> %g (step %g)\n", it, i, x[i], y[i], step);
        }
    }
    CHECK_INT(bad, 0);
    free(x), free(y), free(q);
}

/* ---- matmul: every ISA against the scalar twin ---- */

static void *make_w(int rows, int cols, bool raw, float *wf) {
    const int nb = cols / 256;
    block_q6_K *w = malloc(sizeof(block_q6_K) * (size_t)rows * nb);
    float *tmp = malloc(sizeof(float) * cols);
    for (int r = 0; r < rows; r++) {
        if (raw) {
            for (int b = 0; b < nb; b++) random_block(&w[(size_t)r * nb + b], 0.1f);
        } else {
            for (int c = 0; c < cols; c++) tmp[c] = rnd_f() * (c % 97 == 3 ? 3.0f : 1.0f);
            quantize_row(WICK_Q6_K, tmp, &w[(size_t)r * nb], cols);
        }
        dequantize_row(WICK_Q6_K, &w[(size_t)r * nb], wf + (size_t)r * cols, cols);
    }
    free(tmp);
    return w;
}

static void dequant_x(const void *xq, int n, int cols, float *xd) {
    const block_q8_K *b = xq;
    for (int64_t k = 0; k < (int64_t)n * cols / 256; k++)
        for (int j = 0; j < 256; j++) xd[k * 256 + j] = b[k].d * (float)b[k].qs[j];
}

static void test_matmul_isas(void) {
    static const int NS[] = {1, 2, 3, 4, 5, 7, 8, 33};
    static const int ROWS[] = {1, 3, 7, 16, 17, 33};
    static const int COLS[] = {256, 512, 768, 1024, 2816};
    const cpu_isa saved = tt()->isa;
    int fails = 0, checks = 0;
    for (int raw = 0; raw < 2; raw++)
        for (size_t ci = 0; ci < sizeof COLS / sizeof COLS[0]; ci++)
            for (size_t ri = 0; ri < sizeof ROWS / sizeof ROWS[0]; ri++)
                for (size_t ni = 0; ni < sizeof NS / sizeof NS[0]; ni++) {
                    const int cols = COLS[ci], rows = ROWS[ri], n = NS[ni], ldy = rows + 3;
                    if ((int64_t)rows * n * cols > 600000 && ni % 3) continue;
                    float *wf = malloc(sizeof(float) * (size_t)rows * cols);
                    void *w = make_w(rows, cols, raw, wf);
                    float *x = malloc(sizeof(float) * (size_t)n * cols), *xd = malloc(sizeof(float) * (size_t)n * cols);
                    for (int i = 0; i < n * cols; i++) x[i] = rnd_f() * 2.0f * (i % 41 == 0 ? 5.0f : 1.0f);
                    void *xq = malloc(matmul_scratch_bytes(WICK_Q6_K, cols, n));
                    mm_q8k_quantize_x(tt(), NULL, x, n, cols, xq);
                    dequant_x(xq, n, cols, xd);
                    float *y0 = malloc(sizeof(float) * (size_t)n * ldy), *y1 = malloc(sizeof(float) * (size_t)n * ldy);
                    for (int i = 0; i < n * ldy; i++) y0[i] = y1[i] = -777.0f;
                    matmul_rows_scalar(&(mm_call){tt(), WICK_Q6_K, w, cols, x, xq, n, y0, ldy, 0, rows});
                    double *bound = malloc(sizeof(double) * (size_t)n * rows);
                    for (int i = 0; i < n; i++)
                        for (int r = 0; r < rows; r++) {
                            double s = 0, a = 0;
                            for (int c = 0; c < cols; c++) {
                                double p = (double)wf[(size_t)r * cols + c] * xd[(size_t)i * cols + c];
                                s += p, a += fabs(p);
                            }
                            bound[i * rows + r] = 1e-5 * a + 1e-30;
                            checks++;
                            if (!(fabs(s - y0[i * ldy + r]) <= bound[i * rows + r]))
                                if (fails++ < 5)
                                    fprintf(stderr, "Q6_K scalar rows=%d cols=%d n=%d: y[%d,%d] = %.9g, want %.9g\n",
                                            rows, cols, n, i, r, y0[i * ldy + r], s);
                        }
                    for (int isa = 1; isa < n_isas(); isa++) {
                        CHECK(tt_set_isa((cpu_isa)isa));
                        for (int i = 0; i < n * ldy; i++) y1[i] = -777.0f;
                        const int mid = rows / 3; /* two uneven ranges, like two threads */
                        matmul_rows(&(mm_call){tt(), WICK_Q6_K, w, cols, x, xq, n, y1, ldy, 0, mid});
                        matmul_rows(&(mm_call){tt(), WICK_Q6_K, w, cols, x, xq, n, y1, ldy, mid, rows});
                        for (int i = 0; i < n; i++) {
                            for (int r = 0; r < rows; r++) {
                                checks++;
                                if (!(fabs((double)y1[i * ldy + r] - y0[i * ldy + r]) <= bound[i * rows + r]))
                                    if (fails++ < 5)
                                        fprintf(stderr, "Q6_K %s rows=%d cols=%d n=%d raw=%d: y[%d,%d] = %.9g, scalar %.9g\n",
                                                cpu_isa_name((cpu_isa)isa), rows, cols, n, raw, i, r,
                                                y1[i * ldy + r], y0[i * ldy + r]);
                            }
                            for (int r = rows; r < ldy; r++) /* padding untouched */
                                if (y1[i * ldy + r] != -777.0f) fails++;
                        }
                    }
                    tt_set_isa(saved);
                    free(wf), free(w), free(x), free(xd), free(xq), free(y0), free(y1), free(bound);
                }
    CHECK_MSG(fails == 0, "Q6_K: %d of %d outputs out of tolerance", fails, checks);
}

/* Extreme quants: u = 0 or 63 everywhere, scales -128/127, activations ±127
 * with d = 1: the int16/int32 intermediates of the SIMD kernels must not
 * saturate. Expected values are exact integers computed in int64. */
static void test_matmul_extremes(void) {
    const int cols = 512, nb = 2, rows = 4, n = 3;
    block_q6_K w[4 * 2];
    block_q8_K xq[3 * 2];
    for (int r = 0; r < rows; r++)
        for (int b = 0; b < nb; b++) {
            block_q6_K *bl = &w[r * nb + b];
            memset(bl->ql, (r & 1) ? 0xff : 0x00, sizeof bl->ql);
            memset(bl->qh, (r & 1) ? 0xff : 0x00, sizeof bl->qh);
            for (int g = 0; g < 16; g++) bl->scales[g] = (int8_t)((r & 2) ? -128 : 127);
            bl->d = 0x3c00;
        }
    for (int i = 0; i < n; i++)
        for (int b = 0; b < nb; b++) {
            block_q8_K *xb = &xq[i * nb + b];
            xb->d = 1.0f;
            for (int j = 0; j < 256; j++) xb->qs[j] = (int8_t)(i == 0 ? 127 : i == 1 ? -127 : (j & 1 ? 127 : -127));
            for (int g = 0; g < 16; g++) {
                int s = 0;
                for (int j = 0; j < 16; j++) s += xb->qs[16 * g + j];
                xb->bsums[g] = (int16_t)s;
            }
        }
    float wf[4 * 512], xd[3 * 512];
    for (int r = 0; r < rows; r++) dequantize_row(WICK_Q6_K, &w[r * nb], wf + r * cols, cols);
    dequant_x(xq, n, cols, xd);
    const cpu_isa saved = tt()->isa;
    for (int isa = 0; isa < n_isas(); isa++) {
        CHECK(tt_set_isa((cpu_isa)isa));
        float y[3 * 4];
        matmul_rows(&(mm_call){tt(), WICK_Q6_K, w, cols, NULL, xq, n, y, rows, 0, rows});
        for (int i = 0; i < n; i++)
            for (int r = 0; r < rows; r++) {
                int64_t want = 0;
                for (int c = 0; c < cols; c++) want += (int64_t)wf[r * cols + c] * (int64_t)xd[i * cols + c];
                CHECK_MSG(fabs((double)y[i * rows + r] - (double)want) <= 1e-6 * fabs((double)want) + 0.5,
                          "%s r=%d i=%d: %.1f vs %lld", cpu_isa_name((cpu_isa)isa), r, i, y[i * rows + r], (long long)want);
            }
    }
    tt_set_isa(saved);
}

/* matmul(tt(), ) over a pool and matmul_multi (Q6_K together with Q8_0/F32 weights
 * of the same width) give what the single-threaded row kernel gives. */
static void test_matmul_pool(void) {
    wick_error err;
    wick_pool *pool = pool_new(4, &err);
    CHECK(pool != NULL);
    if (!pool) return;
    const int cols = 1024, rows = 301, n = 5;
    float *wf = malloc(sizeof(float) * (size_t)rows * cols);
    void *w = make_w(rows, cols, false, wf);
    float *x = malloc(sizeof(float) * n * cols);
    for (int i = 0; i < n * cols; i++) x[i] = rnd_f();
    wick_tensor W = {.name = "w", .type = WICK_Q6_K, .n_dims = 2, .ne = {cols, rows, 1, 1}, .data = w,
                     .nbytes = dtype_row_bytes(WICK_Q6_K, cols) * rows};
    /* a Q8_0 and an F32 companion */
    void *w8 = malloc(dtype_row_bytes(WICK_Q8_0, cols) * rows);
    for (int r = 0; r < rows; r++) quantize_row(WICK_Q8_0, wf + (size_t)r * cols, (char *)w8 + dtype_row_bytes(WICK_Q8_0, cols) * r, cols);
    wick_tensor W8 = W, WF = W;
    W8.type = WICK_Q8_0, W8.data = w8, W8.nbytes = dtype_row_bytes(WICK_Q8_0, cols) * rows;
    WF.type = WICK_F32, WF.data = wf, WF.nbytes = sizeof(float) * (size_t)rows * cols;
    size_t sb = matmul_scratch_bytes(WICK_Q6_K, cols, n);
    if (matmul_scratch_bytes(WICK_Q8_0, cols, n) > sb) sb = matmul_scratch_bytes(WICK_Q8_0, cols, n);
    void *scratch = malloc(sb);
    float *y = malloc(sizeof(float) * n * rows), *ref = malloc(sizeof(float) * n * rows);
    float *ym[3], *refm[3];
    for (int k = 0; k < 3; k++) ym[k] = malloc(sizeof(float) * n * rows), refm[k] = malloc(sizeof(float) * n * rows);
    void *xq = malloc(mm_q8k_xq_bytes(cols, n));
    mm_q8k_quantize_x(tt(), NULL, x, n, cols, xq);
    matmul_rows(&(mm_call){tt(), WICK_Q6_K, w, cols, x, xq, n, ref, rows, 0, rows});
    matmul(tt(), pool, &W, x, n, y, rows, scratch);
    CHECK(memcmp(y, ref, sizeof(float) * n * rows) == 0);
    const wick_tensor *Ws[3] = {&W8, &W, &WF};
    int ld[3] = {rows, rows, rows};
    for (int k = 0; k < 3; k++) matmul(tt(), NULL, Ws[k], x, n, refm[k], rows, scratch);
    matmul_multi(tt(), pool, Ws, 3, x, n, ym, ld, scratch);
    for (int k = 0; k < 3; k++) CHECK(memcmp(ym[k], refm[k], sizeof(float) * n * rows) == 0);
    const wick_tensor *Wq[2] = {&W, &W};
    matmul_multi(tt(), pool, Wq, 2, x, n, ym, ld, scratch);
    CHECK(memcmp(ym[0], ref, sizeof(float) * n * rows) == 0 && memcmp(ym[1], ref, sizeof(float) * n * rows) == 0);
    for (int k = 0; k < 3; k++) free(ym[k]), free(refm[k]);
    free(wf), free(w), free(w8), free(x), free(scratch), free(y), free(ref), free(xq);
    pool_free(pool);
}

/* ---- end to end: GGUF models with Q6_K tensors ---- */

static char tmpdir[64];

/* Copy GGUF src to dst; embd_q6k: token_embd.weight re-quantized to Q6_K;
 * else every Q6_K tensor dequantized to F32. */
static int rewrite(const char *src, const char *dst, bool embd_q6k) {
    wick_error err;
    gguf_file *f = gguf_open(src, &err);
    CHECK_MSG(f != NULL, "%s", err.msg);
    if (!f) return -1;
    gguf_writer *gw = gguf_writer_new();
    int rc = 0;
    for (int i = 0; i < gguf_n_kv(f) && rc == 0; i++)
        rc = gguf_set_value(gw, gguf_kv_key(f, i), gguf_kv_value(f, i), &err);
    for (int i = 0; i < gguf_n_tensors(f) && rc == 0; i++) {
        const wick_tensor *t = gguf_tensor(f, i);
        const int64_t cols = t->ne[0], rows = tensor_nelements(t) / cols;
        int to = t->type;
        if (embd_q6k && strcmp(t->name, "token_embd.weight") == 0) to = WICK_Q6_K;
        if (!embd_q6k && t->type == WICK_Q6_K) to = WICK_F32;
        if (to == t->type) {
            rc = gguf_add_tensor(gw, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes, &err);
            continue;
        }
        size_t sb = dtype_row_bytes(t->type, cols), db = dtype_row_bytes(to, cols);
        char *buf = malloc(db * (size_t)rows);
        float *row = malloc(sizeof(float) * (size_t)cols);
        for (int64_t r = 0; r < rows; r++) {
            dequantize_row(t->type, (const char *)t->data + sb * r, row, cols);
            quantize_row(to, row, buf + db * r, cols);
        }
        rc = gguf_add_tensor(gw, t->name, to, t->n_dims, t->ne, buf, db * (size_t)rows, &err);
        free(buf), free(row);
    }
    if (rc == 0) rc = gguf_write(gw, dst, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    gguf_writer_free(gw);
    gguf_close(f);
    return rc;
}

/* Logits (n_pos x n_vocab, malloc'd) of n_pos sequences decoded in one batch,
 * sequence s holding the first s+1 tokens of a fixed prompt: one batch of
 * n_pos(n_pos+1)/2 tokens whose output matmul has n_pos rows. */
static float *prompt_logits(const char *path, int *n_vocab, int n_pos, int threads, int *n_q6k) {
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    CHECK_MSG(m != NULL, "%s: %s", path, err.msg);
    if (!m) return NULL;
    wick_model_info info;
    wick_model_get_info(m, &info);
    *n_vocab = info.n_vocab;
    (void)n_q6k;
    wick_context_params cp = {.n_ctx = 64, .n_seq = n_pos, .n_threads = threads, .prefill_chunk = 0};
    wick_context *c = wick_context_new(m, &cp, &err);
    CHECK_MSG(c != NULL, "%s", err.msg);
    float *out = NULL;
    if (c) {
        int32_t tok[64], pos[64], seq[64];
        bool want[64];
        int nt = 0;
        for (int s = 0; s < n_pos && s < 10; s++)
            for (int i = 0; i <= s; i++, nt++)
                tok[nt] = (i * 37 + 5) % info.n_vocab, pos[nt] = i, seq[nt] = s, want[nt] = i == s;
        wick_batch b = {.n = nt, .tokens = tok, .pos = pos, .seq = seq, .want_logits = want};
        int rc = wick_decode(c, &b, &err);
        CHECK_MSG(rc == 0, "%s", err.msg);
        if (rc == 0) {
            out = malloc(sizeof(float) * (size_t)n_pos * info.n_vocab);
            for (int i = 0; i < n_pos; i++) memcpy(out + (size_t)i * info.n_vocab, wick_logits(c, i), sizeof(float) * info.n_vocab);
        }
        wick_context_free(c);
    }
    wick_model_free(m);
    return out;
}

static void compare_logits(const char *what, const float *a, const float *r, int n_pos, int nv, double rel_tol,
                           double min_cos) {
    for (int p = 0; p < n_pos; p++) {
        const float *x = a + (size_t)p * nv, *y = r + (size_t)p * nv;
        double mx = 0, md = 0, dot = 0, nx = 0, ny = 0;
        int ax = 0, ay = 0;
        for (int v = 0; v < nv; v++) {
            mx = fmax(mx, fabs(y[v]));
            md = fmax(md, fabs((double)x[v] - y[v]));
            dot += (double)x[v] * y[v], nx += (double)x[v] * x[v], ny += (double)y[v] * y[v];
            if (x[v] > x[ax]) ax = v;
            if (y[v] > y[ay]) ay = v;
        }
        double second = -INFINITY;
        for (int v = 0; v < nv; v++)
            if (v != ay && y[v] > second) second = y[v];
        double cosv = dot / sqrt(nx * ny);
        CHECK_MSG(md <= rel_tol * mx, "%s pos %d: max|d| %.6g > %.3g * %.6g", what, p, md, rel_tol, mx);
        CHECK_MSG(cosv >= min_cos, "%s pos %d: cosine %.7f", what, p, cosv);
        if (y[ay] - second > 2 * md) CHECK_MSG(ax == ay, "%s pos %d: argmax %d vs %d", what, p, ax, ay);
        if (p == n_pos - 1) printf("  %s: max|d| %.3g (max|logit| %.3g), cosine %.7f\n", what, md, mx, cosv);
    }
}

static void test_models(void) {
    static const char *ARCHS[] = {"qwen3", "llama"};
    for (int ai = 0; ai < 2; ai++) {
        char f32[128], emb[128], embf[128], all[128], allf[128];
        snprintf(f32, sizeof f32, "%s/%s-f32.gguf", tmpdir, ARCHS[ai]);
        snprintf(emb, sizeof emb, "%s/%s-emb-q6k.gguf", tmpdir, ARCHS[ai]);
        snprintf(embf, sizeof embf, "%s/%s-emb-q6k-dequant.gguf", tmpdir, ARCHS[ai]);
        snprintf(all, sizeof all, "%s/%s-q6k.gguf", tmpdir, ARCHS[ai]);
        snprintf(allf, sizeof allf, "%s/%s-q6k-dequant.gguf", tmpdir, ARCHS[ai]);
        wick_error err;
        test_model_params p = {.arch = ARCHS[ai], .format = "gguf", .shape = "tiny256", .dtype = "f32", .seed = 7, .out = f32};
        CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
        p.dtype = "q6_k", p.out = all;
        CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
        if (rewrite(f32, emb, true) || rewrite(emb, embf, false) || rewrite(all, allf, false)) return;
        /* (i) the Q6_K files load and (ii) match their dequantized twins */
        const int n_pos = 7;
        int nv = 0, nv2 = 0;
        float *le = prompt_logits(emb, &nv, n_pos, 2, NULL), *lef = prompt_logits(embf, &nv2, n_pos, 2, NULL);
        CHECK(le && lef && nv == nv2);
        char what[64];
        snprintf(what, sizeof what, "%s Q6_K embedding", ARCHS[ai]);
        if (le && lef && nv == nv2) compare_logits(what, le, lef, n_pos, nv, 0.02, 0.9999);
        /* the thread count does not change the logits */
        float *le1 = prompt_logits(emb, &nv, n_pos, 1, NULL);
        CHECK(le && le1 && memcmp(le, le1, sizeof(float) * (size_t)n_pos * nv) == 0);
        float *la = prompt_logits(all, &nv, n_pos, 3, NULL), *laf = prompt_logits(allf, &nv2, n_pos, 3, NULL);
        CHECK(la && laf && nv == nv2);
        snprintf(what, sizeof what, "%s all-Q6_K", ARCHS[ai]);
        if (la && laf && nv == nv2) compare_logits(what, la, laf, n_pos, nv, 0.05, 0.999);
        free(le), free(lef), free(le1), free(la), free(laf);
    }
}

/* A Q6_K tensor whose rows are not whole super-blocks is an error. */
static void test_make_bad_shape(void) {
    char out[128];
    snprintf(out, sizeof out, "%s/bad.gguf", tmpdir);
    wick_error err;
    test_model_params p = {.arch = "qwen3", .format = "gguf", .shape = "tiny", .dtype = "q6_k", .seed = 1, .out = out};
    CHECK(make_test_model(&p, &err) != 0);
    CHECK(strstr(err.msg, "Q6_K") != NULL);
}

int main(void) {
    SKIP_ISAS_THIS_CPU_LACKS();
    rng_state = 0x243f6a8885a308d3ull; /* this program's own sequence */
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-q6k-XXXXXX");
    if (!mkdtemp(tmpdir)) return 1;
    RUN(test_layout);
    RUN(test_quantize);
    RUN(test_matmul_isas);
    RUN(test_matmul_extremes);
    RUN(test_matmul_pool);
    RUN(test_models);
    RUN(test_make_bad_shape);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    return check_summary("q6k");
}
