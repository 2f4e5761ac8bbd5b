/* cpu.c — owns CPU feature detection (CPUID + XGETBV) and the tuning the
 * kernels take on a CPU by default (kernel_tuning_default; see cpu.h).
 *
 * Invariants: the feature table is computed once (pthread_once) and never
 * changes afterwards; nothing else here is state. ISA_AVX512 means AVX-512
 * F+BW+VL+VNNI (Ice Lake, Zen 4 and later); CPUs with AVX-512 but no VNNI
 * run the AVX2 kernels. The environment's overrides are tuning_env.c's. */
#include "kernels/cpu.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define WICK_X86 1
#else
#define WICK_X86 0
#endif

#if WICK_X86
static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* One CPUID pass: what the CPU and the OS support. */
static void detect(cpu_features *out) {
    cpu_features f;
    memset(&f, 0, sizeof f);
#if WICK_X86
    unsigned a, b, c, d;
    unsigned max_leaf = __get_cpuid_max(0, NULL);
    unsigned vendor[4] = {0}; /* leaf 0: the vendor string in ebx, edx, ecx */
    __cpuid(0, vendor[3], vendor[0], vendor[2], vendor[1]);
    f.amd = memcmp(vendor, "AuthenticAMD", 12) == 0;
    if (max_leaf >= 1 && __get_cpuid(1, &a, &b, &c, &d)) {
        const int base_family = (int)((a >> 8) & 0xf);
        f.family = base_family == 0xf ? base_family + (int)((a >> 20) & 0xff) : base_family;
        bool osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
        uint64_t xcr0 = osxsave ? read_xcr0() : 0;
        bool os_ymm = (xcr0 & 0x6) == 0x6;   /* SSE + AVX state */
        bool os_zmm = (xcr0 & 0xe6) == 0xe6; /* + opmask, ZMM_Hi256, Hi16_ZMM */
        bool fma = (c >> 12) & 1, f16c = (c >> 29) & 1;
        if (avx && os_ymm) {
            f.fma = fma;
            f.f16c = f16c;
        }
        if (max_leaf >= 7) {
            __cpuid_count(7, 0, a, b, c, d);
            if (avx && os_ymm) f.avx2 = (b >> 5) & 1;
            if (os_zmm) {
                f.avx512f = (b >> 16) & 1;
                f.avx512bw = (b >> 30) & 1;
                f.avx512vl = (b >> 31) & 1;
                f.avx512vnni = (c >> 11) & 1;
            }
            unsigned a1, b1, c1, d1;
            __cpuid_count(7, 1, a1, b1, c1, d1);
            (void)b1, (void)c1, (void)d1;
            if (os_ymm) f.avxvnni = (a1 >> 4) & 1;
            if (os_zmm) f.avx512bf16 = (a1 >> 5) & 1;
        }
    }
#endif
    *out = f;
}

/* The detected features: written once under pthread_once, constant after. */
static pthread_once_t features_once = PTHREAD_ONCE_INIT;
static cpu_features features_detected;
static void detect_once(void) { detect(&features_detected); }

const cpu_features *cpu_get_features(void) {
    pthread_once(&features_once, detect_once);
    return &features_detected;
}

cpu_isa cpu_features_best_isa(const cpu_features *f) {
    cpu_isa best = ISA_SCALAR;
    if (f->avx2 && f->fma && f->f16c) best = ISA_AVX2;
    if (best == ISA_AVX2 && f->avx512f && f->avx512bw && f->avx512vl && f->avx512vnni) best = ISA_AVX512;
    return best;
}

cpu_isa cpu_best_isa(void) { return cpu_features_best_isa(cpu_get_features()); }

/* Zen 4 (AMD family 0x19): the CPU several of the tuning choices below are for. */
static bool is_zen4(const cpu_features *f) { return f->amd && f->family == 0x19; }

kernel_tuning kernel_tuning_default(const cpu_features *f) {
    kernel_tuning t;
    memset(&t, 0, sizeof t);
    t.isa = cpu_features_best_isa(f);
    t.prefetch = !f->amd ? PREFETCH_L1L2 : f->family >= 0x1a ? PREFETCH_NTA : PREFETCH_OFF;
    t.per_n = is_zen4(f);
    t.nta_bytes = KERNEL_NTA_BYTES_DEFAULT;
    t.f16_halves = is_zen4(f);
    t.bf16_dp = f->avx512bf16 && f->amd;
    t.act_nt = is_zen4(f);
    t.claim_units = is_zen4(f) ? 32 : 8;
    return t;
}

const char *cpu_prefetch_name(cpu_prefetch style) {
    switch (style) {
    case PREFETCH_OFF: return "off";
    case PREFETCH_L1L2: return "l1l2";
    case PREFETCH_NTA: return "nta";
    case PREFETCH_L2: return "l2";
    }
    return "unknown";
}

const char *cpu_isa_name(cpu_isa isa) {
    switch (isa) {
    case ISA_SCALAR: return "scalar";
    case ISA_AVX2: return "avx2";
    case ISA_AVX512: return "avx512";
    }
    return "unknown";
}
