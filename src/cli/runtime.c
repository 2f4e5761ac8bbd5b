/* runtime.c — the options every model-running CLI command shares: threads,
 * context size, prefill chunking, KV cache type and load-time dtype. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_kv_type(const char *cmd, const char *name) {
    if (!name || strcmp(name, "f32") == 0 || strcmp(name, "F32") == 0) return 0;
    if (strcmp(name, "f16") == 0 || strcmp(name, "F16") == 0) return 1;
    cli_error("%s: --kv-type must be f32 or f16, not \"%s\"", cmd, name);
    return -1;
}

void cli_runtime_init(cli_runtime *r) {
    memset(r, 0, sizeof *r);
    r->chunk = -1;
}

int cli_runtime_opts(cli_opt *opts, int n, cli_runtime *r) {
    const cli_opt add[] = {
        {"--threads", "-t", OPT_INT, &r->threads, NULL},
        {"--ctx", "-c", OPT_INT, &r->ctx, NULL},
        {"--prefill-chunk", NULL, OPT_INT, &r->chunk, &r->chunk_set},
        {"--kv-type", NULL, OPT_STR, &r->kv_type, NULL},
        {"--dtype", NULL, OPT_STR, &r->dtype, NULL},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) opts[n++] = add[i];
    return n;
}

int cli_runtime_check(const char *cmd, cli_runtime *r) {
    const char *env = getenv("WICK_PREFILL_CHUNK");
    if (!r->chunk_set && env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (end == env || *end || v < 0 || v > 1 << 20) {
            cli_error("%s: invalid WICK_PREFILL_CHUNK \"%s\"", cmd, env);
            return -1;
        }
        r->chunk = (int)v;
    }
    if (r->threads < 0 || r->ctx < 0 || r->chunk < -1) {
        cli_error("%s: -t, --ctx and --prefill-chunk must not be negative", cmd);
        return -1;
    }
    return cli_kv_type(cmd, r->kv_type) < 0 ? -1 : 0;
}

wick_model *cli_runtime_model(const char *cmd, const char *path, const cli_runtime *r) {
    return cli_load_model_dtype(cmd, path, r->dtype);
}

wick_context *cli_runtime_context(wick_model *m, const cli_runtime *r) {
    wick_error err;
    wick_context_params cp = {.n_ctx = r->ctx, .n_seq = 1, .n_threads = r->threads,
                              .prefill_chunk = r->chunk, .kv_type = cli_kv_type("", r->kv_type),
                              .no_span_cache = r->no_span_cache};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) cli_error("%s", err.msg);
    return c;
}
