/* ops.h — the small elementwise/row kernels of the forward pass: RMSNorm,
 * RoPE, SiLU-gating, residual add, softmax. RoPE is its own step so cached
 * K rows can later be re-rotated to new positions (rotations compose). */
#ifndef WICK_KERNELS_OPS_H
#define WICK_KERNELS_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu.h"

/* out = x / sqrt(mean(x²) + eps) * w  (w may be NULL = all ones); out may alias x. */
void rmsnorm(const kernel_tuning *kt, float *out, const float *x, const float *w, int n, float eps);
/* Its Σ x² in double (the scalar twin of the SIMD sums; same bits). */
double rmsnorm_sumsq_scalar(const float *x, int n);

typedef enum rope_style {
    ROPE_INTERLEAVED = 0, /* rotate pairs (2i, 2i+1): Meta/GGUF llama layout */
    ROPE_HALVES = 1,      /* rotate pairs (i, i + rot_dim/2): HF rotate_half / NeoX */
} rope_style;

/* Rotate, in place, n_heads heads of head_dim floats in each of n rows (row r
 * starts at x + r*stride) by angle pos[r] * inv_freq[i] for pair i < rot_dim/2.
 * Dims from rot_dim to head_dim are left as they are. */
void rope(const kernel_tuning *kt, float *x, int n, int stride, int n_heads, int head_dim, int rot_dim,
          const int32_t *pos, const float *inv_freq, rope_style style);
/* rope() in two steps, so that a forward pass computes a position's angles
 * once for all its layers: cs/sn[i - i0] = cos/sin(pos * inv_freq[i]) for
 * pairs [i0, i1) (in double, rounded once), then the rotation of one row's
 * heads by them. Same bits as rope(). */
void rope_angles(int32_t pos, const float *inv_freq, int i0, int i1, float *cs, float *sn);
void rope_rotate(const kernel_tuning *kt, float *row, int n_heads, int head_dim, int rot_dim, int i0, int i1, const float *cs,
                 const float *sn, rope_style style);

/* One head's row of F16 keys rotated by cs/sn (rot_dim/2 pairs): the same
 * bits as widening it, rope_rotate and narrowing it back (span placement,
 * engine/spans.c). head_dim <= ROPE_F16_MAX_DIM; src and dst may be equal. */
#define ROPE_F16_MAX_DIM 512
void rope_rotate_f16(const kernel_tuning *kt, const uint16_t *src, uint16_t *dst, int head_dim, int rot_dim, const float *cs, const float *sn,
                     rope_style style);
void rope_rotate_f16_scalar(const uint16_t *src, uint16_t *dst, int head_dim, int rot_dim, const float *cs,
                            const float *sn, rope_style style);

/* g[i] = silu(g[i]) * u[i] */
void silu_mul(const kernel_tuning *kt, float *g, const float *u, int n);
/* g[i] = gelu(g[i]) * u[i], GELU's tanh approximation (HF gelu_pytorch_tanh):
 * 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))), computed as x / (1 + e^{-2t}),
 * the same function without the cancellation of 1 + tanh (ops_tanh.c). */
void gelu_mul(const kernel_tuning *kt, float *g, const float *u, int n);
/* x[i] = cap · tanh(x[i] / cap): soft-capping (Gemma 2 logits); cap > 0. */
void softcap_row(const kernel_tuning *kt, float *x, int n, float cap);
/* x[i] *= s */
void vec_scale(float *x, int n, float s);
/* y[i] += s · x[i] (a residual add scaled, Granite's residual_multiplier) */
void vec_add_scaled(float *restrict y, const float *restrict x, float s, int n);
/* rope_angles with cos and sin times mscale (LongRoPE's attention factor),
 * in double and rounded once; mscale 1 gives rope_angles' bits. */
void rope_angles_scaled(int32_t pos, const float *inv_freq, double mscale, int i0, int i1, float *cs, float *sn);
/* y[i] += x[i] */
void vec_add(float *restrict y, const float *restrict x, int n);
/* memcpy that writes the whole 64-byte lines of dst with non-temporal
 * stores (no read-for-ownership of lines another core holds; the data goes
 * to memory, not this core's cache), then a store fence; the rest with
 * plain stores. copy_nt_scalar is its twin: memcpy. */
void copy_nt(void *dst, const void *src, size_t n);
void copy_nt_scalar(void *dst, const void *src, size_t n);
/* y[i] = fp16(x[i]), round to nearest even (F16 KV cache rows). The F16C /
 * AVX-512 path and the scalar twin write the same bits for finite values and inf. */
void f32_to_f16_row(const float *x, uint16_t *y, int n);
void f32_to_f16_row_scalar(const float *x, uint16_t *y, int n);
/* And back (exact: every fp16 value is a float). */
void f16_to_f32_row(const uint16_t *x, float *y, int n);
void f16_to_f32_row_scalar(const uint16_t *x, float *y, int n);
/* In-place softmax of n values. */
void softmax(const kernel_tuning *kt, float *x, int n);

#endif
