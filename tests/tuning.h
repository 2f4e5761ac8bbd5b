/* tuning.h — the kernel tuning a test passes to the kernels: the CPU's,
 * with the environment's overrides, to start with; the tests change it to run
 * the same inputs through every ISA, prefetch style and kernel form. */
#ifndef WICK_TESTS_TUNING_H
#define WICK_TESTS_TUNING_H

#include <stdbool.h>

#include "kernels/cpu.h"
#include "kernels/tuning_env.h"

/* The test's tuning (one per test program). */
static inline kernel_tuning *tt(void) {
    static kernel_tuning t;
    static bool ready;
    if (!ready) {
        t = kernel_tuning_from_env(cpu_get_features());
        ready = true;
    }
    return &t;
}

/* Kernels on `isa`; false (nothing changed) where the CPU lacks it. */
static inline bool tt_set_isa(cpu_isa isa) {
    if ((int)isa < ISA_SCALAR || isa > cpu_best_isa()) return false;
    tt()->isa = isa;
    return true;
}

/* One prefetch style for every n and stream. */
static inline void tt_set_prefetch(cpu_prefetch style) {
    tt()->prefetch = style;
    tt()->per_n = false;
}

/* Back to the CPU's (or the environment's) prefetch styles. */
static inline void tt_reset_prefetch(void) {
    const kernel_tuning d = kernel_tuning_from_env(cpu_get_features());
    tt()->prefetch = d.prefetch;
    tt()->per_n = d.per_n;
    tt()->nta_bytes = d.nta_bytes;
}

static inline void tt_set_f16_halves(bool on) { tt()->f16_halves = on; }
static inline void tt_set_act_nt(bool on) { tt()->act_nt = on; }
/* on is ignored without the instruction, as for a loaded model. */
static inline void tt_set_bf16_dp(bool on) { tt()->bf16_dp = on && cpu_get_features()->avx512bf16; }
static inline void tt_set_claim_units(int units) {
    if (units >= KERNEL_CLAIM_UNITS_MIN && units <= KERNEL_CLAIM_UNITS_MAX) tt()->claim_units = units;
}

#endif
