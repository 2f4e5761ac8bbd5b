/* matmul_plain_avx512.c — owns the AVX-512 (F, BW, VL, VNNI) matmul kernels.
 *
 * Float weights (F32/F16/BF16): rows of at most 256 columns (tiny and
 * draft models) 16 at a time with their sums packed into one vector (fsmall);
 * longer ones in register tiles of 4 weight rows × up to 4 activation
 * rows; every weight vector loaded (and converted to f32) is used for 4
 * tokens; 16 FMA accumulators, reduced horizontally at the end. One
 * token (decode) goes row after row instead, one sequential stream (frow1).
 * Batch invariance: per (row, token) both compute the same four partial
 * sums (16-column chunk j goes to partial j mod 4 of its 64-column step, the
 * remainder to partials 0 and 1) combined in the same order, so a token's
 * outputs are bit-identical whatever the number of tokens in the call, its
 * place in a tile and the split of rows over threads (the tile computes the
 * four partials in four passes, see ftile).
 *
 * Q8_0/Q4_0 weights: 16 weight rows are repacked, KC blocks at a time, into
 * an on-stack buffer in which vector lane i belongs to row i: for each block
 * and each 4-element group g (8 per block) one 64-byte vector holds bytes
 * 4g..4g+3 of the 16 rows, as unsigned values u = q + 128 (Q8_0) or the raw
 * nibble q (Q4_0: the weight is q - 8). The inner loop then does, per token
 * and block, 8 VPDPBUSD with a broadcast of the token's 4 activation bytes;
 * the lane ends up holding Σ u·x for its row, and Σ (u - off)·x = Σ u·x -
 * off·Σx uses the block sums prepared with the activations (off = 128 or 8).
 * Each block costs one int->float conversion and one FMA per 16 rows, and
 * each repacked vector is reused by every token (up to 8 per register tile).
 * The repack is an 8×8 dword transpose (Q8_0) / 4×4 transpose plus nibble
 * split (Q4_0) in registers. With at most FUSED_MAX_N tokens (decode) the
 * transposed block is used straight from registers, no buffer, and the next
 * 16-row tile is software-prefetched while this one is computed (decode is a
 * stream of weight bytes; the prefetch lifts 2 threads to ~DRAM bandwidth).
 * Integer sums are exact; only the float accumulation order differs from
 * the scalar kernel. */
#if defined(__x86_64__) || defined(__i386__)

#include <immintrin.h>
#include <stdalign.h>
#include <string.h>

#include "kernels/convert.h"
#include "kernels/cpu.h"
#include "kernels/matmul_impl.h"
#include "kernels/simd_math.h"

#define T512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))
#define INLINE static inline __attribute__((always_inline))

/* ---------------- float weights ---------------- */

/* F16 widened 8 at a time (kernel_tuning.f16_halves): a kernel-local weight type. */
#define WT_F16_HALVES (-16)

/* 16 weights of a row from element k as f32 (mask selects valid lanes). */
T512 INLINE __m512 load_w(const int wt, const void *row, int k, __mmask16 m, const bool full) {
    if (wt == WICK_F32) {
        const float *p = (const float *)row + k;
        return full ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(m, p);
    }
    const uint16_t *p = (const uint16_t *)row + k;
    if (wt == WT_F16_HALVES && full) {
        const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 8)));
        return _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castps_pd(_mm512_castps256_ps512(lo)), _mm256_castps_pd(hi), 1));
    }
    __m256i h = full ? _mm256_loadu_si256((const __m256i *)p) : _mm256_maskz_loadu_epi16(m, p);
    if (wt == WICK_F16 || wt == WT_F16_HALVES) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); /* BF16 */
}

/* acc[r][c] += w[r][k..k+15] · x[c][k..k+15] (lanes outside m zero unless full). */
T512 INLINE void ftile_step(const int wt, const int RB, const int CB, const char *w, size_t row_bytes,
                            const float *x, int cols, int k, __mmask16 m, const bool full,
                            __m512 acc[4][4]) {
    __m512 xv[4];
#pragma GCC unroll 4
    for (int c = 0; c < CB; c++)
        xv[c] = full ? _mm512_loadu_ps(x + (size_t)c * cols + k) : _mm512_maskz_loadu_ps(m, x + (size_t)c * cols + k);
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++) {
        const __m512 wv = load_w(wt, w + r * row_bytes, k, m, full);
#pragma GCC unroll 4
        for (int c = 0; c < CB; c++) acc[r][c] = _mm512_fmadd_ps(wv, xv[c], acc[r][c]);
    }
}

/* One pass of ftile: the FMA chain of frow1's accumulator u (below) for
 * every (row, token) of the tile, left in acc. Pass u takes the 16 columns at
 * k + 16u of every 64-column step k; pass 0 then the 16-column steps after
 * the last 64, pass 1 the masked tail, as frow1 does. */
T512 INLINE void ftile_pass(const int wt, const int RB, const int CB, const int u, const char *w,
                            size_t row_bytes, const float *x, int cols, __m512 acc[4][4]) {
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < CB; c++) acc[r][c] = _mm512_setzero_ps();
    const int k64 = cols & ~63, k16 = cols & ~15;
    for (int k = 16 * u; k < k64; k += 64) ftile_step(wt, RB, CB, w, row_bytes, x, cols, k, 0xffff, true, acc);
    if (u == 0)
        for (int k = k64; k < k16; k += 16) ftile_step(wt, RB, CB, w, row_bytes, x, cols, k, 0xffff, true, acc);
    if (u == 1 && k16 < cols)
        ftile_step(wt, RB, CB, w, row_bytes, x, cols, k16, (__mmask16)((1u << (cols - k16)) - 1), false, acc);
}

/* RB rows × CB tokens. Per (row, token) the same float operations in the same
 * order as frow1, the one-token decode kernel (batch invariance: a token's
 * outputs do not depend on how many tokens share the call or where in a tile
 * it sits): four partial sums a[u] over the 64-column steps, combined as
 * (a0 + a1) + (a2 + a3) and reduced. With 16 accumulators per tile in
 * registers the four partial sums are computed in four passes over the
 * tile's weights (L1-resident), kept on the stack in between. */
T512 INLINE void ftile(const int wt, const int RB, const int CB, const char *w, size_t row_bytes,
                       const float *x, int cols, float *y, int ldy) {
    alignas(64) float part[2][4][4][16]; /* a0 + a1, then a2: in L1 between the passes */
    __m512 acc[4][4];
    ftile_pass(wt, RB, CB, 0, w, row_bytes, x, cols, acc);
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < CB; c++) _mm512_store_ps(part[0][r][c], acc[r][c]);
    ftile_pass(wt, RB, CB, 1, w, row_bytes, x, cols, acc);
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < CB; c++) _mm512_store_ps(part[0][r][c], _mm512_add_ps(_mm512_load_ps(part[0][r][c]), acc[r][c]));
    ftile_pass(wt, RB, CB, 2, w, row_bytes, x, cols, acc);
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < CB; c++) _mm512_store_ps(part[1][r][c], acc[r][c]);
    ftile_pass(wt, RB, CB, 3, w, row_bytes, x, cols, acc);
#pragma GCC unroll 4
    for (int r = 0; r < RB; r++)
#pragma GCC unroll 4
        for (int c = 0; c < CB; c++)
            y[(size_t)c * ldy + r] = _mm512_reduce_add_ps(
                _mm512_add_ps(_mm512_load_ps(part[0][r][c]), _mm512_add_ps(_mm512_load_ps(part[1][r][c]), acc[r][c])));
}

/* Decode (one token): row after row, so that the weights are read as one
 * sequential stream (rows in step are several streams, which the hardware
 * prefetchers of some CPUs, Zen 4, follow poorly); four accumulators. */
T512 INLINE void frow1(const int wt, const int pf, const size_t ntab, const char *row, const float *x, int cols, float *y) {
    __m512 a[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    const size_t es = wt == WICK_F32 ? 4 : 2, nta = pf == PREFETCH_NTA ? ntab : 0;
    int k = 0;
    for (; k + 64 <= cols; k += 64) {
#pragma GCC unroll 4
        for (size_t o = 0; o < 64 * es; o += 64) {
            if (pf == PREFETCH_L1L2) _mm_prefetch(row + (size_t)k * es + PREFETCH_L2_BYTES + o, _MM_HINT_T1); /* L2 only */
            if (pf == PREFETCH_NTA) _mm_prefetch(row + (size_t)k * es + nta + o, _MM_HINT_NTA);
        }
#pragma GCC unroll 4
        for (int u = 0; u < 4; u++)
            a[u] = _mm512_fmadd_ps(load_w(wt, row, k + 16 * u, 0xffff, true), _mm512_loadu_ps(x + k + 16 * u), a[u]);
    }
    for (; k + 16 <= cols; k += 16)
        a[0] = _mm512_fmadd_ps(load_w(wt, row, k, 0xffff, true), _mm512_loadu_ps(x + k), a[0]);
    if (k < cols) {
        const __mmask16 m = (__mmask16)((1u << (cols - k)) - 1);
        a[1] = _mm512_fmadd_ps(load_w(wt, row, k, m, false), _mm512_maskz_loadu_ps(m, x + k), a[1]);
    }
    *y = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a[0], a[1]), _mm512_add_ps(a[2], a[3])));
}

/* Short rows (cols <= FSMALL_COLS: tiny models and draft models, whose
 * weights sit in L1/L2): 16 rows at a time, their 16 sums packed into one
 * vector by the reduction tree of simd_math.h (hsum4x, hsum16) instead of a
 * horizontal reduction per output, which costs more than a 64-column row's
 * four FMAs. Per (row,
 * token): one FMA chain over the 16-column chunks in order (the last
 * masked), then the tree, which treats every lane alike; so a token's
 * outputs are the same whatever the number of tokens in the call, the tile
 * a row falls in and the split of rows over threads (batch invariance).
 * Tokens go 4 at a time (a group of 4 rows × 4 tokens: 16 FMA chains, each
 * weight vector used 4 times), 3 as 4 with the third repeated, 2 as 8 rows ×
 * 2, 1 as 16 rows × 1; a tile of fewer than 16 rows is copied with its last
 * row repeated, and only its rows are stored. */
#define FSMALL_COLS 256

/* Rows g·RG.. of a 16-row tile (rows rb bytes apart from w), RG = 16 / C of
 * them, × C tokens (x[c] = x + c·cols): 16 independent FMA chains,
 * P[c][r] += w[r][k..k+15] · x[c][k..k+15] over the full 16-column chunks,
 * then the masked tail. */
T512 INLINE void fsmall_group(const int wt, const int C, const char *w, size_t rb, const float *x,
                              const float *x_last, int cols, __m512 P[4][16]) {
    const int RG = 16 / C;
#pragma GCC unroll 4
    for (int c = 0; c < C; c++)
#pragma GCC unroll 16
        for (int r = 0; r < RG; r++) P[c][r] = _mm512_setzero_ps();
    const int k16 = cols & ~15;
    for (int k = 0; k < k16; k += 16) {
        __m512 xv[4];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) xv[c] = _mm512_loadu_ps((c == 3 ? x_last : x + (size_t)c * cols) + k);
#pragma GCC unroll 16
        for (int r = 0; r < RG; r++) {
            const __m512 wv = load_w(wt, w + r * rb, k, 0xffff, true);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) P[c][r] = _mm512_fmadd_ps(wv, xv[c], P[c][r]);
        }
    }
    if (k16 < cols) {
        const __mmask16 m = (__mmask16)((1u << (cols - k16)) - 1);
        __m512 xv[4];
#pragma GCC unroll 4
        for (int c = 0; c < C; c++) xv[c] = _mm512_maskz_loadu_ps(m, (c == 3 ? x_last : x + (size_t)c * cols) + k16);
#pragma GCC unroll 16
        for (int r = 0; r < RG; r++) {
            const __m512 wv = load_w(wt, w + r * rb, k16, m, false);
#pragma GCC unroll 4
            for (int c = 0; c < C; c++) P[c][r] = _mm512_fmadd_ps(wv, xv[c], P[c][r]);
        }
    }
}

/* 16 rows (rb bytes apart from w) × C = 1, 2 or 4 tokens (x + c·cols); the
 * sums of the rows in `store` go to y + c·ldy for the first `real` tokens. */
T512 INLINE void fsmall_tile(const int wt, const int C, const char *w, size_t rb, const float *x,
                             const float *x_last, int cols, float *y, int ldy, int real, __mmask16 store) {
    const int RG = 16 / C;
    __m512 R[4][4]; /* R[c][q]: hsum4x of rows 4q..4q+3 */
#pragma GCC unroll 4
    for (int g = 0; g < C; g++) {
        __m512 P[4][16];
        fsmall_group(wt, C, w + (size_t)(g * RG) * rb, rb, x, x_last, cols, P);
#pragma GCC unroll 4
        for (int c = 0; c < C; c++)
#pragma GCC unroll 4
            for (int q = 0; q < RG / 4; q++) R[c][g * (RG / 4) + q] = hsum4x(&P[c][4 * q]);
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; c++)
        if (c < real) _mm512_mask_storeu_ps(y + (size_t)c * ldy, store, hsum16(R[c]));
}

T512 INLINE void fsmall(const int wt, const void *w, size_t rb, int cols, const float *x, int n, float *y, int ldy,
                        int r0, int r1) {
    alignas(64) char tail[16 * FSMALL_COLS * 4]; /* a last tile of < 16 rows, its last row repeated */
    for (int rt = r0; rt < r1; rt += 16) {
        const int nr = r1 - rt < 16 ? r1 - rt : 16;
        const char *wt0 = (const char *)w + (size_t)rt * rb;
        if (nr < 16) {
            for (int r = 0; r < 16; r++) memcpy(tail + r * rb, wt0 + (size_t)(r < nr ? r : nr - 1) * rb, rb);
            wt0 = tail;
        }
        const __mmask16 store = (__mmask16)((1u << nr) - 1);
        for (int i = 0; i < n; i += 4) {
            const int real = n - i < 4 ? n - i : 4;
            const float *xi = x + (size_t)i * cols;
            float *yi = y + (size_t)i * ldy + rt;
            if (real >= 3) /* 3 tokens: the third twice */
                fsmall_tile(wt, 4, wt0, rb, xi, xi + (size_t)(real - 1) * cols, cols, yi, ldy, real, store);
            else if (real == 2) fsmall_tile(wt, 2, wt0, rb, xi, NULL, cols, yi, ldy, 2, store);
            else fsmall_tile(wt, 1, wt0, rb, xi, NULL, cols, yi, ldy, 1, store);
        }
    }
}

/* Rows [r0, r1) × all n tokens for one float type; RB = 4 rows or 1 (tail). */
T512 INLINE void frows(const kernel_tuning *kt, const int wt, const void *w, int cols, const float *x, int n, float *y,
                       int ldy, int r0, int r1) {
    const size_t rb = (size_t)cols * (wt == WICK_F32 ? 4 : 2);
    const char *wc = w;
    int r = r0;
    if (cols <= FSMALL_COLS) {
        fsmall(wt, w, rb, cols, x, n, y, ldy, r0, r1);
        return;
    }
    if (n == 1) {
        const size_t ntab = (size_t)kt->nta_bytes;
        switch (kt->prefetch) {
        case PREFETCH_NTA:
            for (; r < r1; r++) frow1(wt, PREFETCH_NTA, ntab, wc + r * rb, x, cols, y + r);
            break;
        case PREFETCH_L1L2:
            for (; r < r1; r++) frow1(wt, PREFETCH_L1L2, ntab, wc + r * rb, x, cols, y + r);
            break;
        default:
            for (; r < r1; r++) frow1(wt, PREFETCH_OFF, ntab, wc + r * rb, x, cols, y + r);
            break;
        }
        return;
    }
    for (; r + 4 <= r1; r += 4) {
        int i = 0;
        for (; i + 4 <= n; i += 4)
            ftile(wt, 4, 4, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
        switch (n - i) {
        case 3: ftile(wt, 4, 3, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy); break;
        case 2: ftile(wt, 4, 2, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy); break;
        case 1: ftile(wt, 4, 1, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy); break;
        default: break;
        }
    }
    for (; r < r1; r++) {
        int i = 0;
        for (; i + 4 <= n; i += 4)
            ftile(wt, 1, 4, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
        for (; i < n; i++)
            ftile(wt, 1, 1, wc + r * rb, rb, x + (size_t)i * cols, cols, y + (size_t)i * ldy + r, ldy);
    }
}

/* ---------------- quantized weights ---------------- */

#define KC 32 /* blocks per repacked chunk: 16 rows × 32 blocks = 16 KiB + scales */

typedef struct qpack {
    alignas(64) uint8_t q[KC][8][64]; /* [block][group][row*4 + byte] */
    alignas(64) float d[KC][16];      /* [block][row] weight scales */
} qpack;

/* Transpose: R[k] = (row k | row k+8) as 8 dwords each → G[g] lane i = dword g of row i. */
T512 INLINE void transpose_8x8_halves(__m512i R[8], __m512i G[8]) {
    __m512i t[8], u[8];
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        t[2 * k] = _mm512_unpacklo_epi32(R[2 * k], R[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(R[2 * k], R[2 * k + 1]);
    }
    /* u[0..3]: dwords (0|4),(1|5),(2|6),(3|7) of rows 0-3 per 128-bit lane; u[4..7] rows 4-7 */
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        u[4 * h + 0] = _mm512_unpacklo_epi64(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 1] = _mm512_unpackhi_epi64(t[4 * h + 0], t[4 * h + 2]);
        u[4 * h + 2] = _mm512_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]);
        u[4 * h + 3] = _mm512_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]);
    }
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
#pragma GCC unroll 4
    for (int g = 0; g < 4; g++) {
        G[g] = _mm512_permutex2var_epi64(u[g], lo, u[g + 4]);
        G[g + 4] = _mm512_permutex2var_epi64(u[g], hi, u[g + 4]);
    }
}

/* The 16 rows' fp16 scales of one block as f32, assembled in general
 * registers (a vector load of 16 separate narrow stores would stall). */
T512 INLINE __m512 load_scales(const char *const rows[16], size_t boff) {
    uint64_t q[4];
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        uint16_t h0, h1, h2, h3;
        memcpy(&h0, rows[4 * j] + boff, 2);
        memcpy(&h1, rows[4 * j + 1] + boff, 2);
        memcpy(&h2, rows[4 * j + 2] + boff, 2);
        memcpy(&h3, rows[4 * j + 3] + boff, 2);
        q[j] = (uint64_t)h0 | (uint64_t)h1 << 16 | (uint64_t)h2 << 32 | (uint64_t)h3 << 48;
    }
    const __m128i lo = _mm_set_epi64x((long long)q[1], (long long)q[0]);
    const __m128i hi = _mm_set_epi64x((long long)q[3], (long long)q[2]);
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

/* One block of 16 rows in the packed form: G[g] lane i = bytes 4g..4g+3 of
 * row i as unsigned values (Q8_0: q + 128; Q4_0: the nibbles). */
T512 INLINE void load_tile(const int wt, const char *const rows[16], size_t boff, __m512i G[8]) {
    if (wt == WICK_Q8_0) {
        __m512i R[8];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(rows[k] + boff + 2));
            __m256i b = _mm256_loadu_si256((const __m256i *)(rows[k + 8] + boff + 2));
            R[k] = _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
        }
        transpose_8x8_halves(R, G);
        const __m512i bias = _mm512_set1_epi8((char)0x80);
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) G[g] = _mm512_xor_si512(G[g], bias);
        return;
    }
    /* Q4_0: A[k] = rows k, k+4, k+8, k+12 (16 bytes = 4 dwords each) */
    __m512i A[4];
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
        __m512i v = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(rows[k] + boff + 2)));
        v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(rows[k + 4] + boff + 2)), 1);
        v = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(rows[k + 8] + boff + 2)), 2);
        A[k] = _mm512_inserti32x4(v, _mm_loadu_si128((const __m128i *)(rows[k + 12] + boff + 2)), 3);
    }
    /* 4×4 dword transpose inside each 128-bit lane: Q[j] lane i = dword j of row i */
    const __m512i t0 = _mm512_unpacklo_epi32(A[0], A[1]), t1 = _mm512_unpackhi_epi32(A[0], A[1]);
    const __m512i t2 = _mm512_unpacklo_epi32(A[2], A[3]), t3 = _mm512_unpackhi_epi32(A[2], A[3]);
    const __m512i Q[4] = {_mm512_unpacklo_epi64(t0, t2), _mm512_unpackhi_epi64(t0, t2),
                          _mm512_unpacklo_epi64(t1, t3), _mm512_unpackhi_epi64(t1, t3)};
    /* dword j holds elements 4j..4j+3 (low nibbles) and 16+4j.. (high nibbles) */
    const __m512i m4 = _mm512_set1_epi8(0x0f);
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
        G[j] = _mm512_and_si512(Q[j], m4);
        G[j + 4] = _mm512_and_si512(_mm512_srli_epi16(Q[j], 4), m4);
    }
}

/* Repack blocks [b0, b0+nbk) of 16 rows (row pointers at block 0). */
T512 INLINE void pack_chunk(const int wt, const char *const rows[16], int b0, int nbk, qpack *pk) {
    const size_t bb = wt == WICK_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
    for (int kb = 0; kb < nbk; kb++) {
        const size_t boff = (size_t)(b0 + kb) * bb;
        __m512i G[8];
        load_tile(wt, rows, boff, G);
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) _mm512_store_si512((__m512i *)pk->q[kb][g], G[g]);
        _mm512_store_ps(pk->d[kb], load_scales(rows, boff));
    }
}

/* Σ over the 8 groups of one block: is = -off·Σx + Σ_g dpbusd(G[g], x group g). */
T512 INLINE __m512i block_dot(const __m512i G[8], const block_q8_0 *xb, int32_t xsum, int off) {
    __m512i is = _mm512_set1_epi32(-off * xsum);
#pragma GCC unroll 8
    for (int g = 0; g < 8; g++) {
        int32_t xg;
        memcpy(&xg, xb->qs + 4 * g, 4);
        is = _mm512_dpbusd_epi32(is, G[g], _mm512_set1_epi32(xg));
    }
    return is;
}

/* One tile: the 16 packed rows × C tokens over nbk blocks. y[c] points at
 * token c's output for row 0 of the tile; acc starts from y unless first. */
T512 INLINE void qtile(const int C, const qpack *pk, int nbk, const block_q8_0 *const xb[8],
                       const int32_t *const xs[8], const float *const xd[8], int off,
                       float *const yp[8], bool first, __mmask16 m) {
    __m512 acc[8];
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) acc[c] = first ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(m, yp[c]);
    for (int kb = 0; kb < nbk; kb++) {
        __m512i is[8];
#pragma GCC unroll 8
        for (int c = 0; c < C; c++) is[c] = _mm512_set1_epi32(-off * xs[c][kb]);
#pragma GCC unroll 8
        for (int g = 0; g < 8; g++) {
            const __m512i wv = _mm512_load_si512((const __m512i *)pk->q[kb][g]);
#pragma GCC unroll 8
            for (int c = 0; c < C; c++) {
                int32_t xg;
                memcpy(&xg, xb[c][kb].qs + 4 * g, 4);
                is[c] = _mm512_dpbusd_epi32(is[c], wv, _mm512_set1_epi32(xg));
            }
        }
        const __m512 dw = _mm512_load_ps(pk->d[kb]);
#pragma GCC unroll 8
        for (int c = 0; c < C; c++)
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is[c]), _mm512_mul_ps(dw, _mm512_set1_ps(xd[c][kb])), acc[c]);
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(yp[c], m, acc[c]);
}

/* Few tokens (decode): no repacking buffer; each 16-row block is transposed
 * in registers and used at once by the C <= 3 tokens. */
T512 INLINE void qfused(const int wt, const int C, const char *const rows[16], int nb,
                        const block_q8_0 *const xb[3], const int32_t *const xs[3],
                        const float *const xd[3], float *const yp[3], __mmask16 m) {
    const size_t bb = wt == WICK_Q8_0 ? sizeof(block_q8_0) : sizeof(block_q4_0);
    const int off = wt == WICK_Q8_0 ? 128 : 8;
    __m512 acc[3];
#pragma GCC unroll 3
    for (int c = 0; c < C; c++) acc[c] = _mm512_setzero_ps();
    const char *next = rows[0] + 16 * (size_t)nb * bb;
    for (int b = 0; b < nb; b++) {
        for (size_t o = (size_t)b * 16 * bb; o < (size_t)(b + 1) * 16 * bb; o += 64) _mm_prefetch(next + o, _MM_HINT_T0);
        __m512i G[8];
        load_tile(wt, rows, (size_t)b * bb, G);
        const __m512 dw = load_scales(rows, (size_t)b * bb);
#pragma GCC unroll 3
        for (int c = 0; c < C; c++) {
            const __m512i is = block_dot(G, xb[c] + b, xs[c][b], off);
            acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(dw, _mm512_set1_ps(xd[c][b])), acc[c]);
        }
    }
#pragma GCC unroll 3
    for (int c = 0; c < C; c++) _mm512_mask_storeu_ps(yp[c], m, acc[c]);
}

#define FUSED_MAX_N 3 /* up to this many tokens, skip the repacking buffer */

T512 INLINE void qrows(const int wt, const void *w, int cols, const void *xq, int n, float *y,
                       int ldy, int r0, int r1) {
    const int nb = cols / WICK_QK;
    const size_t rb = dtype_row_bytes(wt, cols);
    const int off = wt == WICK_Q8_0 ? 128 : 8;
    const block_q8_0 *xblocks = xq;
    const int32_t *xsums = (const int32_t *)((const char *)xq + mm_xq_sums_offset(cols, n));
    const float *xscales = (const float *)((const char *)xq + mm_xq_scales_offset(cols, n));
    qpack pk;
    for (int rt = r0; rt < r1; rt += 16) {
        const int nr = r1 - rt < 16 ? r1 - rt : 16;
        const __mmask16 m = (__mmask16)((1u << nr) - 1);
        const char *rows[16];
        for (int r = 0; r < 16; r++) rows[r] = (const char *)w + (size_t)(rt + (r < nr ? r : nr - 1)) * rb;
        if (n <= FUSED_MAX_N) {
            const block_q8_0 *xb[3];
            const int32_t *xs[3];
            const float *xd[3];
            float *yp[3];
            for (int c = 0; c < 3; c++) {
                const int i = c < n ? c : 0;
                xb[c] = xblocks + (size_t)i * nb, xs[c] = xsums + (size_t)i * nb, xd[c] = xscales + (size_t)i * nb;
                yp[c] = y + (size_t)i * ldy + rt;
            }
            if (n == 1) qfused(wt, 1, rows, nb, xb, xs, xd, yp, m);
            else if (n == 2) qfused(wt, 2, rows, nb, xb, xs, xd, yp, m);
            else qfused(wt, 3, rows, nb, xb, xs, xd, yp, m);
            continue;
        }
        for (int b0 = 0; b0 < nb; b0 += KC) {
            const int nbk = nb - b0 < KC ? nb - b0 : KC;
            pack_chunk(wt, rows, b0, nbk, &pk);
            for (int i = 0; i < n; i += 8) {
                const int C = n - i < 8 ? n - i : 8;
                const block_q8_0 *xb[8];
                const int32_t *xs[8];
                const float *xd[8];
                float *yp[8];
                for (int c = 0; c < 8; c++) {
                    const size_t xi = (size_t)(i + (c < C ? c : 0)) * nb + b0;
                    xb[c] = xblocks + xi, xs[c] = xsums + xi, xd[c] = xscales + xi;
                    yp[c] = y + (size_t)(i + (c < C ? c : 0)) * ldy + rt;
                }
                const bool first = b0 == 0;
                switch (C) {
                case 8: qtile(8, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                case 7: qtile(7, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                case 6: qtile(6, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                case 5: qtile(5, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                case 4: qtile(4, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                case 3: qtile(3, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                case 2: qtile(2, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                default: qtile(1, &pk, nbk, xb, xs, xd, off, yp, first, m); break;
                }
            }
        }
    }
}

T512 void mm_plain_rows_avx512(const mm_call *c) {
    switch (c->wtype) {
    case WICK_F32: frows(c->kt, WICK_F32, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_F16: frows(c->kt, WICK_F16, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_BF16: frows(c->kt, WICK_BF16, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q8_0: qrows(WICK_Q8_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    case WICK_Q4_0: qrows(WICK_Q4_0, c->w, c->cols, c->xq, c->n, c->y, c->ldy, c->r0, c->r1); break;
    default: break;
    }
}

T512 void mm_plain_f16h_rows_avx512(const mm_call *c) {
    frows(c->kt, WT_F16_HALVES, c->w, c->cols, c->x, c->n, c->y, c->ldy, c->r0, c->r1);
}

#endif
