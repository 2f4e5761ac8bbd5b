/* profile.c — the WICK_PROFILE per-op table the CLI prints to stderr. */
#include <stdio.h>

#include "cli/cli.h"

void cli_print_profile(wick_context *c, double sampling_ms, int n_sampled) {
    if (!c || !wick_context_profiling(c)) return;
    wick_profile p;
    wick_context_profile(c, &p);
    p.ms[WICK_OP_SAMPLING] += sampling_ms; /* bench samples itself; generate books it in the context */
    double total = 0;
    for (int op = 0; op < WICK_OP_COUNT; op++) total += p.ms[op];
    fprintf(stderr, "profile: %lld forward passes, %lld tokens, %d samples\n", (long long)p.n_forward,
            (long long)p.n_tokens, n_sampled);
    fprintf(stderr, "  %-12s %10s %7s %12s\n", "op", "ms", "%", "ms/forward");
    for (int op = 0; op < WICK_OP_COUNT; op++)
        fprintf(stderr, "  %-12s %10.1f %6.1f%% %12.3f\n", wick_op_name(op), p.ms[op],
                total > 0 ? 100.0 * p.ms[op] / total : 0.0,
                p.n_forward ? p.ms[op] / (double)p.n_forward : 0.0);
    fprintf(stderr, "  %-12s %10.1f\n", "total", total);
}
