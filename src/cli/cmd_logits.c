/* cmd_logits.c — `wick logits`: run the prompt and print the last position's
 * logits as JSON {"tokens": [...], "logits": [...]}. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cmd_logits(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *file = NULL;
    int threads = 0, ctx = 0, chunk = -1;
    bool no_special = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--prompt", "-p", OPT_STR, &prompt, NULL},
        {"--file", "-f", OPT_STR, &file, NULL},
        {"--threads", "-t", OPT_INT, &threads, NULL},
        {"--ctx", "-c", OPT_INT, &ctx, NULL},
        {"--prefill-chunk", NULL, OPT_INT, &chunk, NULL},
        {"--kv-type", NULL, OPT_STR, &cli_kv_type_arg, NULL},
        {"--no-special", NULL, OPT_FLAG, &no_special, NULL},
    };
    if (cli_parse("logits", argc, argv, opts, sizeof opts / sizeof opts[0]) < 0) return 1;
    if (threads < 0 || ctx < 0 || chunk < -1) return cli_error("logits: -t, --ctx and --prefill-chunk must not be negative");
    size_t len;
    char *text = cli_prompt("logits", prompt, file, &len);
    if (!text) return 1;
    wick_model *m = cli_load_model("logits", model);
    int32_t *ids = NULL;
    int n = 0, rc = 1;
    wick_context *c = NULL;
    wick_error err;
    if (!m || cli_tokenize(m, text, len, !no_special, &ids, &n) < 0) goto done;
    wick_context_params cp = {.n_ctx = ctx, .n_seq = 1, .n_threads = threads, .prefill_chunk = chunk, .kv_type = cli_kv_type_value()};
    if (!(c = wick_context_new(m, &cp, &err))) {
        cli_error("%s", err.msg);
        goto done;
    }
    if (n == 0) {
        cli_error("logits: the prompt has no tokens");
        goto done;
    }
    if (n > wick_context_n_ctx(c)) {
        cli_error("prompt is %d tokens but the context holds %d (use a larger --ctx)", n, wick_context_n_ctx(c));
        goto done;
    }
    int chunk_n = chunk < 0 ? 512 : (chunk == 0 ? n : chunk);
    int32_t *pos = malloc((size_t)n * sizeof *pos), *seq = calloc((size_t)n, sizeof *seq);
    if (!pos || !seq) {
        free(pos);
        free(seq);
        cli_error("out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) pos[i] = i;
    int ok = 0;
    for (int p = 0; p < n && ok == 0; p += chunk_n) {
        wick_batch b = {.n = n - p < chunk_n ? n - p : chunk_n, .tokens = ids + p, .pos = pos + p, .seq = seq};
        ok = wick_decode(c, &b, &err);
    }
    free(pos);
    free(seq);
    if (ok < 0) {
        cli_error("%s", err.msg);
        goto done;
    }
    const float *lg = wick_logits(c, 0);
    wick_model_info info;
    wick_model_get_info(m, &info);
    printf("{\"tokens\":[");
    for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
    printf("],\"logits\":[");
    for (int i = 0; i < info.n_vocab; i++) printf(i ? ",%.9g" : "%.9g", lg[i]);
    printf("]}\n");
    rc = 0;
done:
    free(ids);
    free(text);
    wick_context_free(c);
    wick_model_free(m);
    return rc;
}
