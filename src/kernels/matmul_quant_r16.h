/* matmul_quant_r16.h — the interleaved ("R16") layouts of the types in
 * matmul_quant.h, for the AVX-512 VNNI kernels (matmul_quant_r16_avx512.c;
 * scalar twin and packing in matmul_quant_r16.c). Internal to src/kernels
 * and tests.
 *
 * As for Q8_0/Q4_0 (matmul_impl.h), a matrix is cut into groups of 16 rows,
 * each one sequential stream of whole 64-byte lines, of exactly the bytes
 * its 16 rows take in the file. Per block (32 elements; K types: 256), a
 * group holds a MAIN part of `main` 64-byte vectors and, for some types, a
 * 32-byte TAIL: the blocks' fp16 d of the 16 rows (row i at byte 2i). Blocks
 * go in pairs, [tail b][tail b+1][main b][main b+1] (a lone last block:
 * [tail][main]), so that every main part starts on a line.
 *
 * In a main part, vector v's lane i (bytes 4i..4i+3) belongs to row i. Most
 * vectors hold 4 consecutive bytes of the row's file block ("dword
 * segments": n dwords from file byte `at` onward, every `step`-th vector
 * from vector v: vector v+step·k lane i = file bytes at+4k .. at+4k+3 of row
 * i's block). Q5_0 / Q5_1 hold their 32 fifth bits as a bit plane: lane i,
 * byte k, bit g = fifth bit of element 4g+k.
 *
 *   type    main vectors (in order)                                     tail
 *   Q4_1    qs[0..15] (4), d|m (1)                                       -
 *   Q5_0    fifth-bit plane (1), qs (4)                                  d
 *   Q5_1    fifth-bit plane (1), qs (4), d|m (1)                         -
 *   IQ4_NL  qs (4)                                                        d
 *   Q4_K    scales[0..11] (3), d|dmin (1), qs[0..127] (32)               -
 *   Q5_K    scales (3), d|dmin (1), qh[0..31] (8), qs (32)               -
 *   Q6_K    scales[0..15] (4), then per half h (h = 0, 1):               d
 *           qh[32h..32h+31] and ql[64h..64h+31] alternating (8 + 8),
 *           ql[64h+32..64h+63] (8)
 *   Q3_K    scales (3), hmask[0..31] (8), qs[0..63] (16)                 d
 *   Q2_K    scales[0..15] (4), d|dmin (1), qs[0..63] (16)                -
 *   IQ4_XS  d|scales_h (1), scales_l (1), qs[0..127] (32)                -
 *
 * The order is the decode kernels' order of use, so that they meet the
 * lines of a group in address order: the tails before the pair's main
 * parts (K types read d first), the Q5 plane (which every group vector
 * takes bits from) before the nibbles, each Q6_K half's qh and ql
 * together, and a d|m vector last (family A reads its scales after the
 * dot products). On Zen 4, whose hardware prefetchers alone feed the
 * streams, a line read ahead of the rest of its block leaves the core's
 * stream waiting on it. A Q6_K half's first two units read qh c with ql c,
 * c = 0..7: with qh and ql in two runs of 8 they would meet the lines 8
 * apart, in turn; alternating, they meet them in order. The same interleave
 * of Q5_K's qh and first qs makes Q5_K slower, so Q5_K keeps its runs.
 * (The measurements: docs/performance.md, "Tuning choices".) */
#ifndef WICK_KERNELS_MATMUL_QUANT_R16_H
#define WICK_KERNELS_MATMUL_QUANT_R16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "kernels/cpu.h"

/* Interleaved type ids, after WICK_Q4_0_R16 (matmul.h). */
enum {
    WICK_Q4_1_R16 = WICK_DTYPE_COUNT + 3,
    WICK_Q5_0_R16,
    WICK_Q5_1_R16,
    WICK_IQ4_NL_R16,
    WICK_Q4_K_R16,
    WICK_Q5_K_R16,
    WICK_Q6_K_R16,
    WICK_Q3_K_R16,
    WICK_Q2_K_R16,
    WICK_IQ4_XS_R16,
    WICK_R16_END
};

/* The file type of an interleaved type of this family, or -1. */
int mm_quant_r16_base(int wtype);
/* The interleaved type of a file type (one of the ten above), or -1. */
int mm_quant_r16_of(int base);

/* Byte offsets within a group of block b's main part and tail (nb blocks):
 * see the pair layout above. */
static inline size_t mm_quant_r16_main_at(size_t main_bytes, size_t tail_bytes, int nb, int b) {
    const size_t tails = (b | 1) < nb ? 2 : 1;
    return (size_t)(b >> 1) * 2 * (main_bytes + tail_bytes) + tails * tail_bytes + (size_t)(b & 1) * main_bytes;
}
static inline size_t mm_quant_r16_tail_at(size_t main_bytes, size_t tail_bytes, int b) {
    return (size_t)(b >> 1) * 2 * (main_bytes + tail_bytes) + (size_t)(b & 1) * tail_bytes;
}

/* Repack a group's 16 file rows (src: 16 consecutive rows of nb blocks)
 * into dst, and one block of one row back into the file layout. */
void mm_quant_r16_pack_group(int base, const void *src, void *dst, int nb);
void mm_quant_r16_unpack_block(int base, const void *group, int nb, int row, int b, void *blk);

/* The kernels, mm_quant_r16_rows_* (matmul_impl.h): AVX-512 every type;
 * AVX2 Q5_0 (matmul_quant_r16_avx2.c) and, as the variant
 * mm_quant_r16_k_rows_avx2, Q4_K and Q6_K (matmul_quant_r16_k_avx2.c): on
 * AVX2 CPUs the others keep the file layout (matmul_repack_type asks the
 * kernel table, matmul_table.c); the scalar twin. */

#endif
