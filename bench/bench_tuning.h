/* bench_tuning.h — the kernels' tuning for the bench/ programs that call
 * kernels directly: the CPU's, with the environment's overrides, as a model
 * load picks it (kernels/tuning_env.h). */
#ifndef WICK_BENCH_TUNING_H
#define WICK_BENCH_TUNING_H

#include "kernels/tuning_env.h"

static inline const kernel_tuning *bench_kt(void) {
    static kernel_tuning t;
    static int ready;
    if (!ready) {
        t = kernel_tuning_from_env(cpu_get_features());
        ready = 1;
    }
    return &t;
}

#endif
