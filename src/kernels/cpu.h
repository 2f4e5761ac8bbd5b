/* cpu.h — run-time CPU feature detection and the kernel ISA in use.
 *
 * Every SIMD kernel has a scalar twin. The ISA is chosen once from CPUID
 * (AVX-512 F/BW/VL(+VNNI) > AVX2+FMA+F16C > scalar). WICK_ISA=scalar|avx2|avx512
 * forces a lower level (never a higher one than the CPU has); tests use
 * cpu_set_isa() to run the same inputs through each level. */
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
 * cpu_prefetch_style_n(n): on Zen 4 PREFETCH_L1L2 from 3 tokens on, where
 * the unpacking and dot products leave the hardware prefetchers behind;
 * elsewhere the one-token style.
 * A dense stream (Q8_0's kernel) reads a line faster than Zen 4's hardware
 * prefetchers bring it and catches up with them; it asks
 * cpu_prefetch_style_dense(n): on Zen 4 PREFETCH_L2 for 1 token, none for
 * 2-4, PREFETCH_L1L2 from 5 on; elsewhere the same as cpu_prefetch_style_n.
 * WICK_PREFETCH=0|off, 1|l1l2, l2 or nta[:BYTES] overrides, for every n
 * and stream. */
typedef enum cpu_prefetch { PREFETCH_OFF = 0, PREFETCH_L1L2 = 1, PREFETCH_NTA = 2, PREFETCH_L2 = 3 } cpu_prefetch;
#define PREFETCH_LAST PREFETCH_L2
/* PREFETCH_L1L2's distances ahead of the stream: into L1 a little ahead,
 * into L2 further ahead (more lines in flight than L1's fill buffers allow). */
#define PREFETCH_L1_BYTES 4096
#define PREFETCH_L2_BYTES 16384
#define PREFETCH_L2_ONLY_BYTES 4096 /* PREFETCH_L2's distance */
cpu_prefetch cpu_prefetch_style(void);
/* The style for a stream kernel applying n tokens per pass (see above). */
cpu_prefetch cpu_prefetch_style_n(int n);
/* The same for a dense stream (Q8_0's kernel, see PREFETCH_L2 above). */
cpu_prefetch cpu_prefetch_style_dense(int n);
/* PREFETCH_NTA's distance ahead of the stream in bytes: 8192, or N from
 * WICK_PREFETCH=nta:N (a multiple of 64 in [64, 65536]). */
int cpu_prefetch_nta_bytes(void);
void cpu_set_prefetch_style(cpu_prefetch style); /* tests: run the kernels every way (one style for every n) */
void cpu_reset_prefetch_style(void);              /* back to the detected styles (or WICK_PREFETCH's) */
const char *cpu_prefetch_name(cpu_prefetch style);
#if defined(__x86_64__) || defined(__i386__)
/* The prefetches style pf issues for the `span` bytes of a stream at p (a
 * multiple of 64): PREFETCH_L1L2 into L1 and into L2 at their distances,
 * PREFETCH_L2 into L2 at its, PREFETCH_NTA non-temporally `nta` bytes
 * ahead (cpu_prefetch_nta_bytes()), PREFETCH_OFF none. pf is a constant
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

/* Whether AVX-512 kernels widen F16 weights 8 at a time (two 256-bit
 * VCVTPH2PS) rather than 16 (one 512-bit): on Zen 4 (AMD family 0x19) the
 * 512-bit form is the bottleneck of F16 decode; on Intel and on Zen 5
 * (family 0x1a, full-width AVX-512) the 512-bit form is faster. Same values
 * either way. WICK_F16_HALVES=0|1 overrides. */
bool cpu_f16_by_halves(void);
void cpu_set_f16_by_halves(bool on); /* tests: run the kernels both ways */

/* Whether BF16 matrices take VDPBF16PS's layout (BF16_R16) rather than the
 * halves (BF16_R16H, widened exactly and FMAed in float, as F16): on AMD CPUs
 * with AVX-512 BF16, where one VDPBF16PS does two multiply-adds per lane at
 * an FMA's rate; not on Intel, where it is slower than widening and FMAs.
 * Never without the instruction. WICK_BF16_KERNEL=dp|fma overrides. Read
 * when a model's weights are repacked. */
bool cpu_bf16_dp(void);
void cpu_set_bf16_dp(bool on); /* tests: on is ignored without the instruction */

/* Whether quantized matmul activations (each writer its rows, read by every
 * thread; Q8_0 always, Q8_K for one row or a batch over the pool) go into a
 * buffer of the writer's own and out with non-temporal stores (matmul.c,
 * matmul_q8k.c): on Zen 4 (AMD family 0x19), where writing lines the other
 * core has read waits on that core's copies, most of all in the regime with
 * the most bandwidth (the cores far apart). The one-pass 6-8-token Q4_0
 * decode kernel's sums go out non-temporally under the same flag
 * (matmul_repack_avx512.c). Same values either way. WICK_ACT_NT=0|1
 * overrides. */
bool cpu_act_nt(void);
void cpu_set_act_nt(bool on); /* tests: run both ways */

/* How many units of rows a decode matmul's thread claims at a time from its
 * own range (matmul.c; the rest of a range can still be stolen, core/steal.h):
 * 32 on Zen 4 (AMD family 0x19), where every claim's break in a thread's
 * weight stream costs most with the memory quiet, else 8 (best on Zen 5).
 * Same values either way. WICK_CLAIM_UNITS=N (1-1024) overrides. */
int cpu_claim_units(void);
void cpu_set_claim_units(int units); /* tests: small claims, so that ranges get stolen */

const cpu_features *cpu_get_features(void);
cpu_isa cpu_best_isa(void);     /* highest the CPU supports */
cpu_isa cpu_isa_active(void);   /* in use (best, or lowered by WICK_ISA / cpu_set_isa) */
/* Force an ISA; returns false (and changes nothing) if the CPU lacks it. */
bool cpu_set_isa(cpu_isa isa);
const char *cpu_isa_name(cpu_isa isa);

#endif
