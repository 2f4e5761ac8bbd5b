/* cpu.c — owns CPU feature detection (CPUID + XGETBV) and the process-wide
 * choice of kernel ISA (see cpu.h).
 *
 * Invariants: the feature table is computed once (pthread_once) and never
 * changes; the active ISA is an atomic int that only ever holds a level the
 * CPU and the OS support. ISA_AVX512 means AVX-512 F+BW+VL+VNNI (Ice Lake,
 * Zen 4 and later); CPUs with AVX-512 but no VNNI run the AVX2 kernels. */
#include "kernels/cpu.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define WICK_X86 1
#else
#define WICK_X86 0
#endif

static cpu_features g_features;
static cpu_isa g_best = ISA_SCALAR;
static atomic_int g_active = ISA_SCALAR;
static atomic_int g_prefetch = PREFETCH_L1L2;
static atomic_bool g_per_n = false; /* Zen 4's styles by tokens a pass (below); else one style for every n */
static int g_nta_bytes = 8192;
static atomic_bool g_f16_halves = false;
static atomic_bool g_bf16_dp = false;
static atomic_bool g_act_nt = false;
static atomic_int g_claim_units = 8;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

#if WICK_X86
static uint64_t read_xcr0(void) {
    uint32_t lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}
#endif

/* A tuning choice: dflt unless env var `name` is "0" or "1". */
static bool env_flag(const char *name, bool dflt) {
    const char *v = getenv(name);
    if (v && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)) return v[0] == '1';
    return dflt;
}

/* Zen 4's styles by tokens a pass (cpu.h): a stream of several tokens
 * prefetches into L1 and L2 from MULTI_FROM tokens on; a dense one takes
 * PREFETCH_L2 up to DENSE_UPTO tokens and L1/L2 from DENSE_MULTI_FROM on. */
#define MULTI_FROM 3
#define DENSE_UPTO 1
#define DENSE_MULTI_FROM 5

/* Zen 4 (AMD family 0x19): the CPU several of the tuning choices below are for. */
static bool is_zen4(const cpu_features *f) { return f->amd && f->family == 0x19; }

/* The prefetch styles for the CPU (cpu.h), or WICK_PREFETCH's. */
static void detect_prefetch(const cpu_features *f) {
    cpu_prefetch pf = !f->amd ? PREFETCH_L1L2 : f->family >= 0x1a ? PREFETCH_NTA : PREFETCH_OFF;
    const char *pv = getenv("WICK_PREFETCH");
    bool forced = false; /* a recognised override holds for every n and stream */
    if (pv && (strcmp(pv, "0") == 0 || strcasecmp(pv, "off") == 0)) {
        pf = PREFETCH_OFF;
        forced = true;
    } else if (pv && (strcmp(pv, "1") == 0 || strcasecmp(pv, "l1l2") == 0)) {
        pf = PREFETCH_L1L2;
        forced = true;
    } else if (pv && strcasecmp(pv, "l2") == 0) {
        pf = PREFETCH_L2;
        forced = true;
    } else if (pv && strncasecmp(pv, "nta", 3) == 0) {
        char *end;
        const long d = pv[3] == ':' ? strtol(pv + 4, &end, 10) : 0;
        if (pv[3] == 0 || (pv[3] == ':' && *end == 0 && d >= 64 && d <= 65536 && d % 64 == 0)) {
            pf = PREFETCH_NTA;
            forced = true;
            if (d) g_nta_bytes = (int)d;
        }
    }
    atomic_store(&g_per_n, is_zen4(f) && !forced);
    atomic_store(&g_prefetch, (int)pf);
}

/* The claim sizes WICK_CLAIM_UNITS and cpu_set_claim_units accept. */
static bool claim_units_ok(long units) { return units >= 1 && units <= 1024; }

static void detect(void) {
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
    g_features = f;
    cpu_isa best = ISA_SCALAR;
    if (f.avx2 && f.fma && f.f16c) best = ISA_AVX2;
    if (best == ISA_AVX2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni)
        best = ISA_AVX512;
    g_best = best;

    cpu_isa active = best;
    const char *env = getenv("WICK_ISA");
    if (env && *env) {
        cpu_isa want = active;
        if (strcasecmp(env, "scalar") == 0) want = ISA_SCALAR;
        else if (strcasecmp(env, "avx2") == 0) want = ISA_AVX2;
        else if (strcasecmp(env, "avx512") == 0) want = ISA_AVX512;
        if (want < active) active = want;
    }
    atomic_store(&g_active, (int)active);

    detect_prefetch(&f);
    atomic_store(&g_f16_halves, env_flag("WICK_F16_HALVES", is_zen4(&f)));
    const char *bk = getenv("WICK_BF16_KERNEL");
    const bool dp = bk && strcmp(bk, "dp") == 0 ? true : bk && strcmp(bk, "fma") == 0 ? false : f.amd;
    atomic_store(&g_bf16_dp, f.avx512bf16 && dp);
    atomic_store(&g_act_nt, env_flag("WICK_ACT_NT", is_zen4(&f)));
    const char *cu = getenv("WICK_CLAIM_UNITS");
    const long units = cu ? strtol(cu, NULL, 10) : 0;
    atomic_store(&g_claim_units, claim_units_ok(units) ? (int)units : is_zen4(&f) ? 32 : 8);
}

static inline void ensure(void) { pthread_once(&g_once, detect); }

const cpu_features *cpu_get_features(void) {
    ensure();
    return &g_features;
}

cpu_isa cpu_best_isa(void) {
    ensure();
    return g_best;
}

cpu_isa cpu_isa_active(void) {
    ensure();
    return (cpu_isa)atomic_load_explicit(&g_active, memory_order_relaxed);
}

bool cpu_set_isa(cpu_isa isa) {
    ensure();
    if ((int)isa < ISA_SCALAR || isa > g_best) return false;
    atomic_store(&g_active, (int)isa);
    return true;
}

/* The tuning choices: read after detection, set by tests. */
cpu_prefetch cpu_prefetch_style(void) {
    ensure();
    return (cpu_prefetch)atomic_load_explicit(&g_prefetch, memory_order_relaxed);
}

int cpu_prefetch_nta_bytes(void) {
    ensure();
    return g_nta_bytes;
}

cpu_prefetch cpu_prefetch_style_n(int n) {
    ensure();
    if (atomic_load_explicit(&g_per_n, memory_order_relaxed) && n >= MULTI_FROM) return PREFETCH_L1L2;
    return (cpu_prefetch)atomic_load_explicit(&g_prefetch, memory_order_relaxed);
}

cpu_prefetch cpu_prefetch_style_dense(int n) {
    ensure();
    if (atomic_load_explicit(&g_per_n, memory_order_relaxed)) {
        if (n <= DENSE_UPTO) return PREFETCH_L2;
        if (n >= DENSE_MULTI_FROM) return PREFETCH_L1L2;
    }
    return (cpu_prefetch)atomic_load_explicit(&g_prefetch, memory_order_relaxed);
}

void cpu_set_prefetch_style(cpu_prefetch style) {
    ensure();
    atomic_store(&g_prefetch, (int)style);
    atomic_store(&g_per_n, false);
}

void cpu_reset_prefetch_style(void) {
    ensure();
    detect_prefetch(&g_features);
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

bool cpu_f16_by_halves(void) {
    ensure();
    return atomic_load_explicit(&g_f16_halves, memory_order_relaxed);
}

void cpu_set_f16_by_halves(bool on) {
    ensure();
    atomic_store(&g_f16_halves, on);
}

bool cpu_bf16_dp(void) {
    ensure();
    return atomic_load_explicit(&g_bf16_dp, memory_order_relaxed);
}

void cpu_set_bf16_dp(bool on) {
    ensure();
    atomic_store(&g_bf16_dp, on && g_features.avx512bf16);
}

bool cpu_act_nt(void) {
    ensure();
    return atomic_load_explicit(&g_act_nt, memory_order_relaxed);
}

int cpu_claim_units(void) {
    ensure();
    return atomic_load_explicit(&g_claim_units, memory_order_relaxed);
}

void cpu_set_claim_units(int units) {
    ensure();
    if (claim_units_ok(units)) atomic_store(&g_claim_units, units);
}

void cpu_set_act_nt(bool on) {
    ensure();
    atomic_store(&g_act_nt, on);
}

const char *cpu_isa_name(cpu_isa isa) {
    switch (isa) {
    case ISA_SCALAR: return "scalar";
    case ISA_AVX2: return "avx2";
    case ISA_AVX512: return "avx512";
    }
    return "unknown";
}
