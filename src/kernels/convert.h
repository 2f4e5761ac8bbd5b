/* convert.h — element conversions: fp16/bf16 <-> f32, Q8_0/Q4_0 quantization
 * and dequantization of whole rows (bit-exact with llama.cpp's reference
 * quantizers quantize_row_q8_0_ref / quantize_row_q4_0_ref). Q6_K rows are
 * dequantized bit-exactly as llama.cpp does, but quantized with a simpler
 * scheme of wick's own (documented in convert.c; not llama.cpp's bytes). */
#ifndef WICK_KERNELS_CONVERT_H
#define WICK_KERNELS_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);   /* round to nearest even, IEEE inf/nan */
float bf16_to_f32(uint16_t h);
uint16_t f32_to_bf16(float f);   /* round to nearest even, nan stays nan */

/* n elements; n must be a multiple of the block size for quantized types. */
void dequantize_row(int type, const void *src, float *dst, int64_t n);
void quantize_row(int type, const float *src, void *dst, int64_t n);
/* True for the types quantize_row can write. */
bool quantize_row_supported(int type);

/* Q8_0 quantization at a given ISA level (a cpu_isa no higher than the CPU
 * supports); every level writes the same bytes. quantize_row uses the active one. */
void quantize_row_q8_0_isa(const float *x, void *y, int64_t n, int isa);
/* nb Q8_K blocks (block_q8_K, tensor.h) from nb*256 floats at a given ISA
 * level; every level writes the same bytes: d = max|x|/127, id = d ? 1/d : 0,
 * q = roundf(x*id) (half away from zero), bsums[g] = Σ of quants 16g..16g+15. */
void quantize_row_q8_k_isa(const float *x, void *y, int64_t nb, int isa);

#endif
