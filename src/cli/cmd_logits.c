/* cmd_logits.c — `wick logits`: run the prompt and print the last position's
 * logits as JSON {"tokens": [...], "logits": [...]}. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cmd_logits(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *file = NULL;
    bool no_special = false;
    cli_runtime rt;
    cli_runtime_init(&rt);
    cli_opt opts[16] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--prompt", "-p", OPT_STR, &prompt, NULL},
        {"--file", "-f", OPT_STR, &file, NULL},
        {"--no-special", NULL, OPT_FLAG, &no_special, NULL},
    };
    int n_opts = cli_runtime_opts(opts, 4, &rt);
    const int prc = cli_parse("logits", argc, argv, opts, n_opts);
    if (prc) return prc < 0;
    if (cli_runtime_check("logits", &rt) < 0) return 1;
    size_t len;
    char *text = cli_prompt("logits", prompt, file, &len);
    if (!text) return 1;
    wick_model *m = cli_runtime_model("logits", model, &rt);
    int32_t *ids = NULL;
    int n = 0, rc = 1;
    wick_context *c = NULL;
    wick_error err;
    if (!m || cli_tokenize(m, text, len, !no_special, &ids, &n) < 0 || !(c = cli_runtime_context(m, &rt)))
        goto done;
    /* Prefill (in chunks) and generate nothing: the last position's logits remain. */
    wick_generate_params gp = {.n_predict = 0};
    if (wick_generate(c, ids, n, &gp, NULL, NULL, NULL, NULL, &err) < 0) {
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
