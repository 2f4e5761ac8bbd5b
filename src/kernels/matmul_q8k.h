/* matmul_q8k.h — the Q8_K activations the K-type matmul kernels read
 * (matmul_quant.h): each row of x quantized to 256-element blocks
 * (block_q8_K in tensor.h: f32 scale d, int8 qs[256] with |q| <= 127, and
 * the 16 sums of each 16-element group); row i of x has its cols/256 blocks
 * at (block_q8_K *)xq + i*(cols/256). Internal to src/kernels and tests. */
#ifndef WICK_KERNELS_MATMUL_Q8K_H
#define WICK_KERNELS_MATMUL_Q8K_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "kernels/cpu.h"
#include "core/threadpool.h"

/* Scratch bytes for n activation rows of cols (a multiple of 256). */
size_t mm_q8k_xq_bytes(int cols, int n);
/* Quantize the n rows of x into xq with the active ISA's quantizer (every
 * ISA writes the same bytes; pool may be NULL). */
void mm_q8k_quantize_x(const kernel_tuning *kt, wick_pool *pool, const float *x, int n, int cols, void *xq);

#endif
