/* convert.h — element conversions: fp16/bf16 <-> f32, and quantization and
 * dequantization of whole rows of every type wick computes with.
 * Dequantization equals llama.cpp's dequantize_row_* bit for bit. Q8_0, Q4_0,
 * Q4_1, Q5_0 and Q5_1 quantize to llama.cpp's reference quantizers' bytes;
 * the K-quants and IQ4_NL/IQ4_XS are quantized by the same method as
 * llama.cpp's (searched scales; quantize_k.c, quantize_iq4.c), not
 * necessarily to the same bytes. */
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
/* Their names, for messages: "f32, f16, bf16, q8_0, ..." */
const char *quantize_row_type_names(void);

/* Q8_0 quantization at a given ISA level (a cpu_isa no higher than the CPU
 * supports); every level writes the same bytes. quantize_row uses the active one. */
void quantize_row_q8_0_isa(const float *x, void *y, int64_t n, int isa);
/* nb Q8_K blocks (block_q8_K, tensor.h) from nb*256 floats at a given ISA
 * level; every level writes the same bytes: d = max|x|/127, id = d ? 1/d : 0,
 * q = roundf(x*id) (half away from zero), bsums[g] = Σ of quants 16g..16g+15. */
void quantize_row_q8_k_isa(const float *x, void *y, int64_t nb, int isa);

#endif
