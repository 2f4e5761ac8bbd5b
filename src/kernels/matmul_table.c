/* matmul_table.c — owns THE kernel table: which row kernel computes a weight
 * type (file layout or interleaved) under each ISA, with the special cases
 * of the tuning; matmul_rows and matmul_rows_scalar run what it gives.
 * Every other place asks here (kernel names: matmul_impl.h). */
#include "kernels/matmul.h"

#include "kernels/matmul_float_r16.h"
#include "kernels/matmul_impl.h"
#include "kernels/matmul_quant_r16.h"

#if defined(__x86_64__) || defined(__i386__)
#define SIMD(k) k
#else
#define SIMD(k) NULL /* no SIMD kernels: kernel_tuning.isa is always ISA_SCALAR */
#endif

#define MM_TYPE_END (WICK_BF16_R16H + 1)

/* [weight type][cpu_isa]: the scalar twin, the AVX2 kernel, the AVX-512
 * kernel. A type without a kernel of its own under an ISA names the one it
 * falls back to: the file-layout quant types run their AVX2 kernel under
 * AVX-512; interleaved types without AVX2 kernels run the scalar twin (on
 * AVX2 CPUs matmul_repack_type keeps them in the file layout). */
static const mm_kernel TABLE[MM_TYPE_END][3] = {
#define PLAIN {mm_plain_rows_scalar, SIMD(mm_plain_rows_avx2), SIMD(mm_plain_rows_avx512)}
    [WICK_F32] = PLAIN, [WICK_F16] = PLAIN, [WICK_BF16] = PLAIN, [WICK_Q8_0] = PLAIN, [WICK_Q4_0] = PLAIN,
#define QUANT {mm_quant_rows_scalar, SIMD(mm_quant_rows_avx2), SIMD(mm_quant_rows_avx2)}
    [WICK_Q4_1] = QUANT, [WICK_Q5_0] = QUANT, [WICK_Q5_1] = QUANT, [WICK_IQ4_NL] = QUANT,
    [WICK_Q2_K] = QUANT, [WICK_Q3_K] = QUANT, [WICK_Q4_K] = QUANT, [WICK_Q5_K] = QUANT, [WICK_Q6_K] = QUANT,
    [WICK_IQ4_XS] = QUANT,
#define R16 {mm_r16_rows_scalar, SIMD(mm_r16_rows_avx2), SIMD(mm_r16_rows_avx512)}
    [WICK_Q8_0_R16] = R16, [WICK_Q4_0_R16] = R16,
#define QUANT_R16(avx2) {mm_quant_r16_rows_scalar, avx2, SIMD(mm_quant_r16_rows_avx512)}
    [WICK_Q4_1_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
    [WICK_Q5_0_R16] = QUANT_R16(SIMD(mm_quant_r16_rows_avx2)),
    [WICK_Q5_1_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
    [WICK_IQ4_NL_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
    [WICK_Q4_K_R16] = QUANT_R16(SIMD(mm_quant_r16_k_rows_avx2)),
    [WICK_Q5_K_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
    [WICK_Q6_K_R16] = QUANT_R16(SIMD(mm_quant_r16_k_rows_avx2)),
    [WICK_Q3_K_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
    [WICK_Q2_K_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
    [WICK_IQ4_XS_R16] = QUANT_R16(mm_quant_r16_rows_scalar),
#define FLOAT_R16(avx2) {mm_float_r16_rows_scalar, avx2, SIMD(mm_float_r16_rows_avx512)}
    [WICK_F16_R16] = FLOAT_R16(SIMD(mm_float_r16_rows_avx2)),
    [WICK_BF16_R16H] = FLOAT_R16(SIMD(mm_float_r16_rows_avx2)),
    [WICK_BF16_R16] = FLOAT_R16(mm_float_r16_rows_scalar), /* VDPBF16PS's pairs: AVX-512 BF16 only */
#undef PLAIN
#undef QUANT
#undef R16
#undef QUANT_R16
#undef FLOAT_R16
};

static const mm_kernel *row_of(int wtype) { return wtype >= 0 && wtype < MM_TYPE_END ? TABLE[wtype] : NULL; }

mm_kernel mm_kernel_scalar(int wtype) {
    const mm_kernel *k = row_of(wtype);
    return k ? k[ISA_SCALAR] : NULL;
}

mm_kernel mm_kernel_for(const kernel_tuning *kt, int wtype) {
    const mm_kernel *k = row_of(wtype);
    if (!k) return NULL;
#if defined(__x86_64__) || defined(__i386__)
    /* kernel_tuning.f16_halves: AVX-512 F16 weights widened 8 at a time */
    if (kt->isa == ISA_AVX512 && wtype == WICK_F16 && kt->f16_halves) return mm_plain_f16h_rows_avx512;
#endif
    return k[kt->isa] ? k[kt->isa] : k[ISA_SCALAR];
}

bool mm_kernel_simd(cpu_isa isa, int wtype) {
    const mm_kernel *k = row_of(wtype);
    return k && isa != ISA_SCALAR && k[isa] && k[isa] != k[ISA_SCALAR];
}

void matmul_rows(const mm_call *c) {
    if (c->r1 <= c->r0 || c->n <= 0) return;
    const mm_kernel k = mm_kernel_for(c->kt, c->wtype);
    if (k) k(c);
}

void matmul_rows_scalar(const mm_call *c) {
    const mm_kernel k = mm_kernel_scalar(c->wtype);
    if (k) k(c);
}
