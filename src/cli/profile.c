/* profile.c — CLI helpers shared by generate/logits/bench: the WICK_PROFILE
 * per-op table (printed to stderr) and the --kv-type option value. */
#include <stdio.h>
#include <string.h>

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

int cli_kv_type(const char *cmd, const char *name) {
    if (!name || strcmp(name, "f32") == 0 || strcmp(name, "F32") == 0) return 0;
    if (strcmp(name, "f16") == 0 || strcmp(name, "F16") == 0) return 1;
    cli_error("%s: --kv-type must be f32 or f16, not \"%s\"", cmd, name);
    return -1;
}

const char *cli_kv_type_arg;

int cli_kv_type_value(void) {
    if (!cli_kv_type_arg) return 0;
    if (strcmp(cli_kv_type_arg, "f32") == 0 || strcmp(cli_kv_type_arg, "F32") == 0) return 0;
    if (strcmp(cli_kv_type_arg, "f16") == 0 || strcmp(cli_kv_type_arg, "F16") == 0) return 1;
    return -1; /* wick_context_new reports it */
}
