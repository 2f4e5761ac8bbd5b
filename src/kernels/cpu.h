/* cpu.h — run-time CPU feature detection and the kernels' tuning choices
 * (struct kernel_tuning: the ISA to use, prefetch styles, F16/BF16 kernel
 * forms, non-temporal activations, claim sizes).
 *
 * Every SIMD kernel has a scalar twin. The best ISA comes from CPUID
 * (AVX-512 F/BW/VL(+VNNI) > AVX2+FMA+F16C > scalar). A kernel_tuning value is
 * chosen once (kernel_tuning_default from the CPU, with the environment's
 * overrides applied by kernel_tuning_from_env in tuning_env.c) when a model
 * is loaded, and passed to the kernels; tests build their own to run the same
 * inputs through each ISA and style. No state here changes after detection. */
#ifndef WICK_KERNELS_CPU_H
#define WICK_KERNELS_CPU_H

#include <stdbool.h>
#include <stddef.h>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

typedef enum cpu_isa { ISA_SCALAR = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 } cpu_isa;

typedef struct cpu_features {
    bool avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512vnni, avx512bf16, avxvnni;
    bool amd;   /* vendor AuthenticAMD */
    int family; /* CPUID display family (base + extended): 0x19 Zen 3/4, 0x1a Zen 5 */
} cpu_features;

/* How streaming (decode) kernels prefetch the weights ahead of the line they
 * read, chosen per CPU by decode's share of a plain read's rate (the
 * measurements: docs/performance.md, "Tuning choices"):
 *   PREFETCH_OFF   none: Zen 4 (AMD family 0x19), whose hardware prefetchers
 *                  follow the one-stream layouts by themselves, so prefetch
 *                  instructions only cost there.
 *   PREFETCH_L1L2  into L1 a little ahead and into L2 further ahead: Intel.
 *   PREFETCH_NTA   one non-temporal prefetch per 64-byte line 8 KiB ahead:
 *                  Zen 5 (family 0x1a) and later, where the hardware alone
 *                  leaves a core's stream short of a plain read's rate.
 *   PREFETCH_L2    into L2 only, PREFETCH_L2_ONLY_BYTES ahead: Zen 4's
 *                  style for a dense stream at one token.
 * That is the style for one token. Kernels applying several tokens per pass
 * over the weights (batched decode, speculative verification) ask
 * kernel_prefetch_n(kt, n): on Zen 4 PREFETCH_L1L2 from 3 tokens on, where
 * the unpacking and dot products leave the hardware prefetchers behind;
 * elsewhere the one-token style.
 * A dense stream (Q8_0's kernel) reads a line faster than Zen 4's hardware
 * prefetchers bring it and catches up with them; it asks
 * kernel_prefetch_dense(kt, n): on Zen 4 PREFETCH_L2 for 1 token, none for
 * 2-4, PREFETCH_L1L2 from 5 on; elsewhere the same as kernel_prefetch_n.
 * WICK_PREFETCH=0|off, 1|l1l2, l2 or nta[:BYTES] overrides, for every n
 * and stream. */
typedef enum cpu_prefetch { PREFETCH_OFF = 0, PREFETCH_L1L2 = 1, PREFETCH_NTA = 2, PREFETCH_L2 = 3 } cpu_prefetch;
#define PREFETCH_LAST PREFETCH_L2
/* Zen 4's styles by tokens a pass: a stream of several tokens prefetches
 * into L1 and L2 from KERNEL_MULTI_FROM tokens on; a dense one takes
 * PREFETCH_L2 up to KERNEL_DENSE_UPTO tokens and L1/L2 from
 * KERNEL_DENSE_MULTI_FROM on. */
#define KERNEL_MULTI_FROM 3
#define KERNEL_DENSE_UPTO 1
#define KERNEL_DENSE_MULTI_FROM 5
/* PREFETCH_L1L2's distances ahead of the stream: into L1 a little ahead,
 * into L2 further ahead (more lines in flight than L1's fill buffers allow). */
#define PREFETCH_L1_BYTES 4096
#define PREFETCH_L2_BYTES 16384
#define PREFETCH_L2_ONLY_BYTES 4096 /* PREFETCH_L2's distance */
const char *cpu_prefetch_name(cpu_prefetch style);
#if defined(__x86_64__) || defined(__i386__)
/* The prefetches style pf issues for the `span` bytes of a stream at p (a
 * multiple of 64): PREFETCH_L1L2 into L1 and into L2 at their distances,
 * PREFETCH_L2 into L2 at its, PREFETCH_NTA non-temporally `nta` bytes
 * ahead (kernel_tuning.nta_bytes), PREFETCH_OFF none. pf is a constant
 * where it is called, so the other styles' loops fold away. */
static inline __attribute__((always_inline)) void cpu_prefetch_ahead(const int pf, const char *p, size_t span,
                                                                     size_t nta) {
    for (size_t o = 0; pf == PREFETCH_L1L2 && o < span; o += 64) {
        _mm_prefetch(p + PREFETCH_L1_BYTES + o, _MM_HINT_T0);
        _mm_prefetch(p + PREFETCH_L2_BYTES + o, _MM_HINT_T1);
    }
    for (size_t o = 0; pf == PREFETCH_L2 && o < span; o += 64) _mm_prefetch(p + PREFETCH_L2_ONLY_BYTES + o, _MM_HINT_T1);
    for (size_t o = 0; pf == PREFETCH_NTA && o < span; o += 64) _mm_prefetch(p + nta + o, _MM_HINT_NTA);
}
/* The same with the loops unrolled, for a short constant span (a block of
 * a 32-element type or a Q8_0/Q4_0 pair's block: up to ~1 KiB): as a loop,
 * its counter, compare and branch cost a per-block kernel more than the
 * prefetches do. Not for the K types' 2-3 KiB super-blocks, whose kernels
 * fully unrolled are slower. */
static inline __attribute__((always_inline)) void cpu_prefetch_ahead_unrolled(const int pf, const char *p,
                                                                              size_t span, size_t nta) {
#pragma GCC unroll 32
    for (size_t o = 0; pf == PREFETCH_L1L2 && o < span; o += 64) {
        _mm_prefetch(p + PREFETCH_L1_BYTES + o, _MM_HINT_T0);
        _mm_prefetch(p + PREFETCH_L2_BYTES + o, _MM_HINT_T1);
    }
#pragma GCC unroll 32
    for (size_t o = 0; pf == PREFETCH_L2 && o < span; o += 64) _mm_prefetch(p + PREFETCH_L2_ONLY_BYTES + o, _MM_HINT_T1);
#pragma GCC unroll 32
    for (size_t o = 0; pf == PREFETCH_NTA && o < span; o += 64) _mm_prefetch(p + nta + o, _MM_HINT_NTA);
}
#endif

/* kernel_tuning.f16_halves: whether AVX-512 kernels widen F16 weights 8 at a time (two 256-bit
 * VCVTPH2PS) rather than 16 (one 512-bit): on Zen 4 (AMD family 0x19) the
 * 512-bit form is the bottleneck of F16 decode; on Intel and on Zen 5
 * (family 0x1a, full-width AVX-512) the 512-bit form is faster. Same values
 * either way. WICK_F16_HALVES=0|1 overrides. */

/* kernel_tuning.bf16_dp: whether BF16 matrices take VDPBF16PS's layout (BF16_R16) rather than the
 * halves (BF16_R16H, widened exactly and FMAed in float, as F16): on AMD CPUs
 * with AVX-512 BF16, where one VDPBF16PS does two multiply-adds per lane at
 * an FMA's rate; not on Intel, where it is slower than widening and FMAs.
 * Never without the instruction. WICK_BF16_KERNEL=dp|fma overrides. Read
 * when a model's weights are repacked. */

/* kernel_tuning.act_nt: whether quantized matmul activations (each writer its rows, read by every
 * thread; Q8_0 always, Q8_K for one row or a batch over the pool) go into a
 * buffer of the writer's own and out with non-temporal stores (matmul.c,
 * matmul_q8k.c): on Zen 4 (AMD family 0x19), where writing lines the other
 * core has read waits on that core's copies, most of all in the regime with
 * the most bandwidth (the cores far apart). The one-pass 6-8-token Q4_0
 * decode kernel's sums go out non-temporally under the same flag
 * (matmul_r16_avx512.c). Same values either way. WICK_ACT_NT=0|1
 * overrides. */

/* kernel_tuning.claim_units: how many units of rows a decode matmul's thread claims at a time from its
 * own range (matmul.c; the rest of a range can still be stolen, core/steal.h):
 * 32 on Zen 4 (AMD family 0x19), where every claim's break in a thread's
 * weight stream costs most with the memory quiet, else 8 (best on Zen 5).
 * Same values either way. WICK_CLAIM_UNITS=N (1-1024) overrides. */

/* The CPU's features, detected once (CPUID + XGETBV); constant afterwards. */
const cpu_features *cpu_get_features(void);
cpu_isa cpu_features_best_isa(const cpu_features *f); /* highest f supports */
cpu_isa cpu_best_isa(void);                           /* highest this CPU supports */
const char *cpu_isa_name(cpu_isa isa);

/* The kernels' tuning choices (the comments above say what each is for and
 * the CPUs that take it). Chosen once, read by the kernels through a const
 * pointer once a call; never changed while kernels run with it. */
typedef struct kernel_tuning {
    cpu_isa isa;           /* the kernels' ISA: at most the CPU's best */
    cpu_prefetch prefetch; /* the one-token stream style */
    bool per_n;            /* Zen 4's styles by tokens a pass (kernel_prefetch_n/_dense); else prefetch for every n */
    int nta_bytes;         /* PREFETCH_NTA's distance ahead: a multiple of 64 in [64, 65536] */
    bool f16_halves;       /* AVX-512 F16 widened 8 at a time */
    bool bf16_dp;          /* BF16 repacked for VDPBF16PS (only with the instruction) */
    bool act_nt;           /* quantized activations out with non-temporal stores */
    int claim_units;       /* decode claim size in units of rows: KERNEL_CLAIM_UNITS_MIN..MAX */
} kernel_tuning;

#define KERNEL_CLAIM_UNITS_MIN 1
#define KERNEL_CLAIM_UNITS_MAX 1024
#define KERNEL_NTA_BYTES_DEFAULT 8192

/* The tuning the CPU f takes (its best ISA, the styles above); the
 * environment's overrides are kernel_tuning_from_env's (tuning_env.h). */
kernel_tuning kernel_tuning_default(const cpu_features *f);
/* The style for a stream kernel applying n tokens per pass (see above). */
static inline cpu_prefetch kernel_prefetch_n(const kernel_tuning *kt, int n) {
    return kt->per_n && n >= KERNEL_MULTI_FROM ? PREFETCH_L1L2 : kt->prefetch;
}
/* The same for a dense stream (Q8_0's kernel, see PREFETCH_L2 above). */
static inline cpu_prefetch kernel_prefetch_dense(const kernel_tuning *kt, int n) {
    if (kt->per_n) {
        if (n <= KERNEL_DENSE_UPTO) return PREFETCH_L2;
        if (n >= KERNEL_DENSE_MULTI_FROM) return PREFETCH_L1L2;
    }
    return kt->prefetch;
}

#endif
