/* cmd_tokenize.c — `wick tokenize`: print the token ids of a text as a JSON array. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cmd_tokenize(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *file = NULL;
    bool no_special = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--prompt", "-p", OPT_STR, &prompt, NULL},
        {"--file", "-f", OPT_STR, &file, NULL},
        {"--no-special", NULL, OPT_FLAG, &no_special, NULL},
    };
    if (cli_parse("tokenize", argc, argv, opts, sizeof opts / sizeof opts[0]) < 0) return 1;
    size_t len;
    char *text = cli_prompt("tokenize", prompt, file, &len);
    if (!text) return 1;
    wick_model *m = cli_load_model("tokenize", model);
    int32_t *ids = NULL;
    int n = 0, rc = 1;
    if (m && cli_tokenize(m, text, len, !no_special, &ids, &n) == 0) {
        putchar('[');
        for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", ids[i]);
        puts("]");
        rc = 0;
    }
    free(ids);
    free(text);
    wick_model_free(m);
    return rc;
}
