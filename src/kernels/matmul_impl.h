/* matmul_impl.h — internal interface between the matmul entry points
 * (matmul.c, matmul_grouped.c), the kernel table (matmul_table.c) and the
 * row kernels. Not for use outside src/kernels and tests.
 *
 * NAMING. Every row kernel is mm_<family>[_<variant>]_rows_<isa>(const
 * mm_call *) with isa scalar, avx2 or avx512; the scalar one of a family is
 * the twin every SIMD kernel of that family is tested against. A family is
 * a weight layout with the activations it reads, and its helpers are named
 * mm_<family>_<op>:
 *   family     weights                                       activations  files
 *   plain      F32, F16, BF16, Q8_0, Q4_0 (file layout)      x / Q8_0     matmul_plain*.c
 *   quant      Q4_1 Q5_0 Q5_1 IQ4_NL (file layout)           Q8_0         matmul_quant*.c
 *              Q2_K..Q6_K, IQ4_XS (file layout)              Q8_K
 *   r16        Q8_0_R16, Q4_0_R16 (interleaved, below)       Q8_0         matmul_r16*.c
 *   quant_r16  the quant types interleaved                   Q8_0 / Q8_K  matmul_quant_r16*.c
 *   float_r16  F16_R16, BF16_R16, BF16_R16H (interleaved)    x / BF16     matmul_float_r16*.c
 * A variant is a second kernel of a family for one ISA that the table picks
 * by type or tuning (quant_r16_k: Q4_K and Q6_K on AVX2; plain_f16h: F16 on
 * AVX-512 widened 8 at a time). Which kernel runs a (type, ISA) is decided
 * in one place, matmul_table.c. The activations' helpers are mm_xq_* (Q8_0,
 * below) and mm_q8k_* (Q8_K, matmul_q8k.h). */
#ifndef WICK_KERNELS_MATMUL_IMPL_H
#define WICK_KERNELS_MATMUL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"

/* Geometry of the quantized activations (see matmul_quantize_x), nb = cols/32:
 *   block_q8_0 blocks[n*nb]   row i at blocks + i*nb      (padded to 64 bytes)
 *   int32_t    sums[n*nb]     Σ qs of each block          (padded to 64 bytes)
 *   float      scales[n*nb]   fp16_to_f32(d) of each block */
static inline size_t mm_pad64(size_t b) { return (b + 63) & ~(size_t)63; }
static inline size_t mm_xq_sums_offset(int cols, int n) {
    return mm_pad64((size_t)n * (size_t)(cols / WICK_QK) * sizeof(block_q8_0));
}
static inline size_t mm_xq_scales_offset(int cols, int n) {
    return mm_xq_sums_offset(cols, n) + mm_pad64((size_t)n * (size_t)(cols / WICK_QK) * 4);
}
static inline size_t mm_xq_bytes(int cols, int n) {
    return mm_xq_scales_offset(cols, n) + (size_t)n * (size_t)(cols / WICK_QK) * 4;
}

/* The interleaved (R16) layouts. Rows go in groups of 16 and groups in
 * pairs (R16 needs rows % 32 == 0): pair p at byte p*32*row_bytes, row_bytes
 * of the file type; a pair's blocks in order, block b at b*(2*WB + 64). A
 * group's block has WB bytes of quants (Q8_0: 8 vectors of 64 bytes, WB =
 * 512; Q4_0: 4 vectors, WB = 256), vector j's lane i (4 bytes) holding quant
 * bytes 4j..4j+3 of the group's row i's block (Q8_0: as unsigned q + 128;
 * Q4_0: the raw qs bytes, low nibbles = elements 4j..4j+3, high nibbles =
 * 16+4j..16+4j+3), and its 16 rows' fp16 scales take 32 bytes. In the pair's
 * block, vector j of group 0 then vector j of group 1, for j in order, then
 * the 32 rows' scales (one 64-byte line). So the kernel that runs both groups
 * together (every activation broadcast feeding both) reads one stream of
 * whole 64-byte lines in address order: the hardware prefetchers lose a
 * stream that reads a second region alongside, alternates between two
 * places or skips gaps. */
static inline int mm_r16_base(int wtype) {
    return wtype == WICK_Q8_0_R16 ? WICK_Q8_0 : wtype == WICK_Q4_0_R16 ? WICK_Q4_0 : -1;
}
static inline size_t mm_r16_block_bytes(int base) { return base == WICK_Q8_0 ? 512 : 256; }
/* Offset within a pair of block b, of its vector j of group h, of group h's scales. */
static inline size_t mm_r16_block_at(int base, int b) { return (size_t)b * (2 * mm_r16_block_bytes(base) + 64); }
static inline size_t mm_r16_vector_at(int base, int b, int h, int j) {
    return mm_r16_block_at(base, b) + (size_t)(2 * j + h) * 64;
}
static inline size_t mm_r16_scales_at(int base, int b, int h) {
    return mm_r16_block_at(base, b) + 2 * mm_r16_block_bytes(base) + (size_t)h * 32;
}
/* Pack a pair of groups (src: 32 consecutive file rows of nb blocks) into
 * dst; block b of row r of an interleaved matrix w back in the file layout
 * (matmul_r16.c). */
void mm_r16_pack_pair(int base, const char *src, char *dst, int nb);
void mm_r16_unpack_block(int base, const void *w, int nb, int64_t r, int b, void *blk);

/* Up to this many tokens the AVX-512 (and AVX2) kernels of the interleaved layouts
 * stream each pair of 16-row groups once from memory, with software
 * prefetches (the decode kernel, up to SG2 tokens per pass over the pair, the
 * next passes reading it from L1/L2), and matmul() splits the rows by work stealing as
 * for decode; more tokens take the prefill kernel (L2-blocked tiles). A
 * continuous-batching server's decode steps (one token per sequence) stay
 * memory-bound on the streaming kernel, where the prefill kernel's unprefetched
 * row blocks read memory well below its rate. */
#define MM_STREAM_MAX_N 16

/* A row kernel: computes c's rows (matmul.h). */
typedef void (*mm_kernel)(const mm_call *c);

/* THE TABLE (matmul_table.c): the kernel of weight type wtype (file layout
 * or interleaved) under kt's ISA and tuning, and its scalar twin; NULL for a
 * type no kernel takes. */
mm_kernel mm_kernel_for(const kernel_tuning *kt, int wtype);
mm_kernel mm_kernel_scalar(int wtype);
/* Whether the table has a SIMD kernel for wtype under isa (the interleaved
 * layouts are used only where one does: matmul_repack_type). */
bool mm_kernel_simd(cpu_isa isa, int wtype);

/* The row kernels, by family (see NAMING above). */
void mm_plain_rows_scalar(const mm_call *c);
void mm_quant_rows_scalar(const mm_call *c);
void mm_r16_rows_scalar(const mm_call *c);
void mm_quant_r16_rows_scalar(const mm_call *c);
void mm_float_r16_rows_scalar(const mm_call *c);
#if defined(__x86_64__) || defined(__i386__)
void mm_plain_rows_avx2(const mm_call *c);
void mm_plain_rows_avx512(const mm_call *c);
void mm_plain_f16h_rows_avx512(const mm_call *c); /* F16 only (kernel_tuning.f16_halves) */
void mm_quant_rows_avx2(const mm_call *c);        /* also the AVX-512 one */
void mm_r16_rows_avx2(const mm_call *c);
void mm_r16_rows_avx512(const mm_call *c);
void mm_quant_r16_rows_avx2(const mm_call *c);    /* Q5_0 only */
void mm_quant_r16_k_rows_avx2(const mm_call *c);  /* Q4_K and Q6_K only */
void mm_quant_r16_rows_avx512(const mm_call *c);
void mm_float_r16_rows_avx2(const mm_call *c);    /* the halves layouts only */
void mm_float_r16_rows_avx512(const mm_call *c);
#endif

#endif
