/* cpu.h — run-time CPU feature detection and the kernel ISA in use.
 *
 * Every SIMD kernel has a scalar twin. The ISA is chosen once from CPUID
 * (AVX-512 F/BW/VL(+VNNI) > AVX2+FMA+F16C > scalar). WICK_ISA=scalar|avx2|avx512
 * forces a lower level (never a higher one than the CPU has); tests use
 * cpu_set_isa() to run the same inputs through each level. */
#ifndef WICK_KERNELS_CPU_H
#define WICK_KERNELS_CPU_H

#include <stdbool.h>

typedef enum cpu_isa { ISA_SCALAR = 0, ISA_AVX2 = 1, ISA_AVX512 = 2 } cpu_isa;

typedef struct cpu_features {
    bool avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512vnni, avx512bf16, avxvnni;
    bool amd; /* vendor AuthenticAMD */
} cpu_features;

/* How streaming (decode) kernels prefetch weights, chosen from the vendor
 * by measurement: Intel (Ice Lake) gains from lines pulled into L1 a little
 * ahead and into L2 further ahead; AMD (Zen 4) gains nothing from L1
 * prefetches and most from L2 prefetches far ahead. WICK_PREFETCH=l1l2|l2
 * overrides (for measuring one against the other on the same machine). */
typedef enum cpu_prefetch { PREFETCH_L1L2 = 0, PREFETCH_L2_FAR = 1 } cpu_prefetch;
cpu_prefetch cpu_prefetch_style(void);

const cpu_features *cpu_get_features(void);
cpu_isa cpu_best_isa(void);     /* highest the CPU supports */
cpu_isa cpu_isa_active(void);   /* in use (best, or lowered by WICK_ISA / cpu_set_isa) */
/* Force an ISA; returns false (and changes nothing) if the CPU lacks it. */
bool cpu_set_isa(cpu_isa isa);
const char *cpu_isa_name(cpu_isa isa);

#endif
