/* tuning_env.c — the one file of the library that reads the environment.
 * Every other library file gets these values passed in (the tuning in the
 * model, the profiling flag in the context). The variables:
 *   WICK_ISA=scalar|avx2|avx512  lowers the kernels' ISA (never above the CPU's best).
 *   WICK_PREFETCH=0|off, 1|l1l2, l2, nta[:BYTES]
 *                                one prefetch style for every n and stream
 *                                (BYTES: NTA's distance, a multiple of 64 in [64, 65536]).
 *   WICK_F16_HALVES=0|1          AVX-512 F16 widened 8 at a time, or 16.
 *   WICK_BF16_KERNEL=dp|fma      BF16 repacked for VDPBF16PS (with the instruction), or widened.
 *   WICK_ACT_NT=0|1              quantized activations out non-temporally, or not.
 *   WICK_CLAIM_UNITS=N           decode claim size in units of rows (1-1024).
 *   WICK_REPACK=0                keep the file's weight layout (no interleaved repack).
 *   WICK_PROFILE=<not 0>         new contexts start with per-op profiling on.
 * Unrecognised values leave the CPU's choice (cpu.c). */
#include "kernels/tuning_env.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* dflt unless env var `name` is "0" or "1". */
static bool env_flag(const char *name, bool dflt) {
    const char *v = getenv(name);
    if (v && (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)) return v[0] == '1';
    return dflt;
}

/* WICK_PREFETCH: a recognised override holds for every n and stream. */
static void prefetch_from_env(kernel_tuning *t) {
    const char *pv = getenv("WICK_PREFETCH");
    if (!pv) return;
    bool forced = false;
    if (strcmp(pv, "0") == 0 || strcasecmp(pv, "off") == 0) {
        t->prefetch = PREFETCH_OFF;
        forced = true;
    } else if (strcmp(pv, "1") == 0 || strcasecmp(pv, "l1l2") == 0) {
        t->prefetch = PREFETCH_L1L2;
        forced = true;
    } else if (strcasecmp(pv, "l2") == 0) {
        t->prefetch = PREFETCH_L2;
        forced = true;
    } else if (strncasecmp(pv, "nta", 3) == 0) {
        char *end;
        const long d = pv[3] == ':' ? strtol(pv + 4, &end, 10) : 0;
        if (pv[3] == 0 || (pv[3] == ':' && *end == 0 && d >= 64 && d <= 65536 && d % 64 == 0)) {
            t->prefetch = PREFETCH_NTA;
            forced = true;
            if (d) t->nta_bytes = (int)d;
        }
    }
    if (forced) t->per_n = false;
}

kernel_tuning kernel_tuning_from_env(const cpu_features *f) {
    kernel_tuning t = kernel_tuning_default(f);
    const char *isa = getenv("WICK_ISA");
    if (isa && *isa) {
        cpu_isa want = t.isa;
        if (strcasecmp(isa, "scalar") == 0) want = ISA_SCALAR;
        else if (strcasecmp(isa, "avx2") == 0) want = ISA_AVX2;
        else if (strcasecmp(isa, "avx512") == 0) want = ISA_AVX512;
        if (want < t.isa) t.isa = want;
    }
    prefetch_from_env(&t);
    t.f16_halves = env_flag("WICK_F16_HALVES", t.f16_halves);
    const char *bk = getenv("WICK_BF16_KERNEL");
    if (bk && strcmp(bk, "dp") == 0) t.bf16_dp = f->avx512bf16;
    else if (bk && strcmp(bk, "fma") == 0) t.bf16_dp = false;
    t.act_nt = env_flag("WICK_ACT_NT", t.act_nt);
    const char *cu = getenv("WICK_CLAIM_UNITS");
    const long units = cu ? strtol(cu, NULL, 10) : 0;
    if (units >= KERNEL_CLAIM_UNITS_MIN && units <= KERNEL_CLAIM_UNITS_MAX) t.claim_units = (int)units;
    return t;
}

bool env_repack_weights(void) {
    const char *v = getenv("WICK_REPACK");
    return !(v && strcmp(v, "0") == 0);
}

bool env_profiling(void) {
    const char *v = getenv("WICK_PROFILE");
    return v && *v && strcmp(v, "0") != 0;
}
