/* tuning_env.h — the library's reading of the environment, all in one place
 * (tuning_env.c lists every variable). Callers read it once (at model load,
 * at context creation) and pass the values on. */
#ifndef WICK_KERNELS_TUNING_ENV_H
#define WICK_KERNELS_TUNING_ENV_H

#include <stdbool.h>

#include "kernels/cpu.h"

/* kernel_tuning_default(f) with the WICK_ISA, WICK_PREFETCH, WICK_F16_HALVES,
 * WICK_BF16_KERNEL, WICK_ACT_NT and WICK_CLAIM_UNITS overrides applied. */
kernel_tuning kernel_tuning_from_env(const cpu_features *f);

/* Whether loading repacks weights into the interleaved layouts (not with WICK_REPACK=0). */
bool env_repack_weights(void);

/* Whether a new context starts with profiling on (WICK_PROFILE set, not "0"). */
bool env_profiling(void);

#endif
