/* cmd_quantize.c — `wick quantize IN OUT TYPE` and `wick convert HF_DIR OUT`:
 * parse the command line, call tools/quantize.h, print one summary line. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/tensor.h"
#include "tools/quant_mix.h"
#include "tools/quantize.h"

static void print_progress(void *ud, const char *name, int from, int to, int i, int n) {
    (void)ud;
    fprintf(stderr, "[%d/%d] %-40s %s -> %s\n", i + 1, n, name, dtype_name(from), dtype_name(to));
}

/* "wrote OUT: N tensors (3 Q4_K, ...), A MiB -> B MiB" */
static void print_report(const char *out, const quantize_report *r) {
    printf("wrote %s: %d tensors (", out, r->n_tensors);
    bool first = true;
    for (int t = 0; t < WICK_DTYPE_COUNT; t++)
        if (r->n_by_type[t]) {
            printf("%s%d %s", first ? "" : ", ", r->n_by_type[t], dtype_name(t));
            first = false;
        }
    printf("), %.1f MiB -> %.1f MiB", (double)r->bytes_in / 1048576.0, (double)r->bytes_out / 1048576.0);
    if (r->n_fallback) printf(", %d with fallback types (rows not a multiple of the block)", r->n_fallback);
    printf("\n");
}

int cmd_quantize(int argc, char **argv) {
    quantize_params p = {0};
    bool verbose = false;
    const cli_opt opts[] = {
        {"--threads", "-t", OPT_INT, &p.n_threads, NULL},
        {"--pure", NULL, OPT_FLAG, &p.pure, NULL},
        {"--output-type", NULL, OPT_STR, &p.output_type, NULL},
        {"--embd-type", NULL, OPT_STR, &p.embd_type, NULL},
        {"--verbose", "-v", OPT_FLAG, &verbose, NULL},
    };
    const char *pos[3];
    int n_pos;
    const int prc = cli_parse_positional("quantize", argc, argv, opts, sizeof opts / sizeof opts[0], pos, 3, &n_pos);
    if (prc) return prc < 0;
    if (n_pos != 3) return cli_error("quantize: usage: wick quantize IN OUT TYPE (TYPE: %s)", quant_mix_names());
    if (p.n_threads < 0) return cli_error("quantize: -t must not be negative");
    p.type = pos[2];
    if (verbose) p.progress = print_progress;
    quantize_report r;
    wick_error err;
    if (model_quantize(pos[0], pos[1], &p, &r, &err) < 0) return cli_error("%s", err.msg);
    print_report(pos[1], &r);
    return 0;
}

int cmd_convert(int argc, char **argv) {
    const char *outtype = "auto";
    int threads = 0;
    bool verbose = false;
    const cli_opt opts[] = {
        {"--outtype", NULL, OPT_STR, &outtype, NULL},
        {"--threads", "-t", OPT_INT, &threads, NULL},
        {"--verbose", "-v", OPT_FLAG, &verbose, NULL},
    };
    const char *pos[2];
    int n_pos;
    const int prc = cli_parse_positional("convert", argc, argv, opts, sizeof opts / sizeof opts[0], pos, 2, &n_pos);
    if (prc) return prc < 0;
    if (n_pos != 2) return cli_error("convert: usage: wick convert HF_DIR OUT.gguf [--outtype f32|f16|bf16|auto]");
    if (threads < 0) return cli_error("convert: -t must not be negative");
    quantize_report r;
    wick_error err;
    if (model_convert(pos[0], pos[1], outtype, threads, verbose ? print_progress : NULL, NULL, &r, &err) < 0)
        return cli_error("%s", err.msg);
    print_report(pos[1], &r);
    return 0;
}
