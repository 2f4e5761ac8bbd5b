/* matmul_quant.h — internal interface of the matmul kernels for the block
 * types Q4_1, Q5_0, Q5_1, IQ4_NL (32-element blocks, against Q8_0
 * activations) and Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS (256-element super-blocks,
 * against Q8_K activations, see matmul_q8k.h), the "quant" family of
 * matmul_impl.h. Not for use outside src/kernels and tests.
 *
 * THE DEFINITION. Every kernel of every ISA computes, for weight row r and
 * token i, exactly the same float: acc = 0, then per block in order an exact
 * int32 sum and one or two fmaf steps (x: the token's activation block, its
 * int8 quants xq, scale dx, Σxq xsum; Q8_K: per-16 sums bsum_g):
 *   Q5_0   isum = Σ (q-16)·xq                  acc = fma(isum, d·dx, acc)
 *   IQ4_NL isum = Σ v[q]·xq                    acc = fma(isum, d·dx, acc)
 *   Q4_1,
 *   Q5_1   isum = Σ q·xq                       acc = fma(isum, d·dx, acc)
 *                                              acc = fma(m, dx·xsum, acc)
 *   Q4_K,  i1 = Σ_j sc_j·Σ_{e∈j} q·xq          acc = fma(i1, d·dx, acc)
 *   Q5_K   i2 = Σ_j m_j·(bsum_2j + bsum_2j+1)  acc = fma(i2, -(dmin·dx), acc)
 *   Q2_K   i1 = Σ_g sc_g·Σ_{e∈g} q·xq          (then as Q4_K)
 *          i2 = Σ_g m_g·bsum_g
 *   Q3_K   isum = Σ_g s_g·Σ_{e∈g} q·xq         acc = fma(isum, d·dx, acc)
 *   Q6_K   isum = Σ_g sc_g·Σ_{e∈g} (q-32)·xq   acc = fma(isum, d·dx, acc)
 *   IQ4_XS isum = Σ_j s_j·Σ_{e∈j} v[q]·xq      acc = fma(isum, d·dx, acc)
 * (q, sc, m, s, v: tensor.h; d·dx, dx·xsum, dmin·dx: float products; ints
 * converted to float with round-to-nearest). Integer sums are exact in any
 * order, so SIMD kernels differ from the scalar twin only in speed: results
 * are bit-identical on every ISA and for any split of rows and tokens. */
#ifndef WICK_KERNELS_MATMUL_QUANT_H
#define WICK_KERNELS_MATMUL_QUANT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/tensor.h"
#include "kernels/cpu.h"

/* The activation format a weight type's kernels read. */
typedef enum mm_act {
    MM_ACT_F32 = 0,  /* F32 / F16 / BF16: x as floats */
    MM_ACT_Q8_0 = 1, /* 32-element Q8_0 blocks + sums + f32 scales (matmul_impl.h) */
    MM_ACT_Q8_K = 2, /* 256-element Q8_K blocks (matmul_q8k.h) */
    MM_ACT_BF16 = 3, /* x rounded to BF16 (matmul_float_r16.h) */
} mm_act;

/* The kernels (mm_quant_rows_*: matmul_impl.h) take xq prepared in the
 * type's activation format. */
/* THE DEFINITION for one weight row r (of any type above) over its
 * blocks [b0, b0 + nbk), wb pointing at block b0 in the file layout: y[i*ldy
 * + r] of every token i < n continues from its value (or from 0 if first). */
void mm_quant_dot_blocks(int wtype, const void *wb, int b0, int nbk, int cols, const void *xq, int n, float *y, int ldy,
                    int r, bool first);

#endif
