/* matmul_float_r16.h — interleaved ("R16") layouts of F16 and BF16 weight
 * matrices for the AVX-512 kernels (matmul_float_r16_avx512.c) and the AVX2
 * ones (matmul_float_r16_avx2.c); packing, activation preparation and scalar
 * twin in matmul_float_r16.c. Internal to src/kernels and tests.
 *
 * A matrix is cut into blocks of 64 rows, each four 16-row groups; for each
 * pair of columns (2j, 2j+1) a group has one 64-byte vector, and a block
 * holds the four groups' vectors of pair j one after another (group q's at
 * byte (4j + q)·64), so that a decode streams the block as ONE sequential
 * stream feeding four independent accumulators. In a pair vector:
 *   F16_R16, BF16_R16H ("halves"): the group's 16 rows' elements of column
 *     2j, then those of column 2j+1 (row i at byte 2i of each half vector);
 *   BF16_R16: lane i (bytes 4i..4i+3) = row i's (column 2j, column 2j+1),
 *     the low half first (VDPBF16PS's pairs).
 * Same bytes as the file layout; rows must be a multiple of 64, columns even.
 * BF16 takes BF16_R16 on AMD CPUs with AVX-512 BF16, else BF16_R16H (see
 * kernel_tuning.bf16_dp in kernels/cpu.h).
 *
 * THE DEFINITION, per weight row r and token t:
 *   F16_R16, BF16_R16H: acc = 0; for k in column order:
 *             acc = fmaf(w[r][k], x[t][k], acc) (w widened exactly to float)
 *   BF16_R16: the activations are first rounded to BF16 (f32_to_bf16); acc =
 *             0; for each column pair j: acc = dp(acc, 2j+1), then dp(acc, 2j),
 *             dp(a, k) = ftz(fmaf(w[r][k], xb[t][k], a)) with BF16 inputs whose
 *             exponent is zero read as zero and ftz flushing results below
 *             FLT_MIN to zero: what one VDPBF16PS step does (AVX-512 BF16).
 * The kernels of every ISA and every batch shape compute exactly this. */
#ifndef WICK_KERNELS_MATMUL_FLOAT_R16_H
#define WICK_KERNELS_MATMUL_FLOAT_R16_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tensor.h"
#include "kernels/cpu.h"

#define WICK_F16_R16 (WICK_DTYPE_COUNT + 20)
#define WICK_BF16_R16 (WICK_DTYPE_COUNT + 21)
#define WICK_BF16_R16H (WICK_DTYPE_COUNT + 22)

/* The file type of WICK_F16_R16 / WICK_BF16_R16 / WICK_BF16_R16H, else -1. */
static inline int mm_float_r16_base(int wtype) {
    return wtype == WICK_F16_R16 ? WICK_F16 : wtype == WICK_BF16_R16 || wtype == WICK_BF16_R16H ? WICK_BF16 : -1;
}
/* Whether a layout holds column halves (F16_R16, BF16_R16H), not pairs. */
static inline bool mm_float_r16_halves(int wtype) { return wtype == WICK_F16_R16 || wtype == WICK_BF16_R16H; }
#define MM_FLOAT_R16_BLOCK_ROWS 64

/* The interleaved type for a matrix of `type` with rows × cols, or -1 (not
 * F16/BF16, rows not a multiple of 64, odd columns). BF16: BF16_R16 on an AMD
 * CPU with AVX-512 BF16 (kernel_tuning.bf16_dp), else BF16_R16H. Regardless
 * of the active ISA: the caller checks that. */
int mm_float_r16_type(const kernel_tuning *kt, int type, int64_t rows, int64_t cols);

/* Byte offset, in a block, of group q's (q < 4) vector of column pair j. */
static inline size_t mm_float_r16_vec_at(int q, int j) { return ((size_t)j * 4 + (size_t)q) * 64; }

/* Repack a block's 64 file rows (src) into dst in layout `to`. */
void mm_float_r16_pack_block(int to, const void *src, void *dst, int cols);
/* Row `row` (< 64) of a block of layout wtype back as its file-layout
 * elements, or as floats. */
void mm_float_r16_unpack_row(int wtype, const void *block, int cols, int row, void *dst);
void mm_float_r16_row_f32(int wtype, const void *block, int cols, int row, float *dst);

/* Activation scratch (bytes) and preparation: BF16_R16 reads x rounded to
 * BF16 (n rows of cols); F16_R16 reads x itself (no scratch). */
size_t mm_float_r16_xq_bytes(int wtype, int cols, int n);
void mm_float_r16_prepare_x(int wtype, const float *x, int n, int cols, void *xq);

/* The kernels, mm_float_r16_rows_* (matmul_impl.h): AVX-512 every layout
 * (BF16_R16 needs AVX-512 BF16); AVX2 the halves layouts (F16_R16,
 * BF16_R16H); the scalar twin. */

#endif
