/* cmd_tokenize.c — `wick tokenize`: print the token ids of a text as a JSON
 * array, or with --jsonl FILE one array per line of a file of JSON strings.
 * -m takes a model or a tokenizer-only source (wick_tokenizer_load); invalid
 * UTF-8 in the input gets one warning line. */
#include <cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Print "[1,2,3]\n" with one fwrite per chunk (inputs of megabytes give
 * millions of ids). */
static void print_ids(const int32_t *ids, size_t n) {
    char buf[1 << 14];
    size_t o = 0;
    buf[o++] = '[';
    for (size_t i = 0; i < n; i++) {
        if (o > sizeof buf - 16) {
            fwrite(buf, 1, o, stdout);
            o = 0;
        }
        if (i) buf[o++] = ',';
        char tmp[12];
        int k = 0;
        uint32_t v = (uint32_t)ids[i]; /* ids are >= 0 */
        do tmp[k++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        while (k) buf[o++] = tmp[--k];
    }
    buf[o++] = ']';
    buf[o++] = '\n';
    fwrite(buf, 1, o, stdout);
}

static int tokenize_one(const wick_tokenizer *t, const char *text, size_t len, bool add_special,
                        size_t *n_invalid) {
    int32_t *ids = NULL;
    size_t n = 0, bad = 0;
    wick_error err;
    if (wick_tokenizer_encode(t, text, len, add_special, &ids, &n, &bad, &err) < 0)
        return cli_error("%s", err.msg);
    *n_invalid += bad;
    print_ids(ids, n);
    free(ids);
    return 0;
}

/* --jsonl FILE: every non-empty line is a JSON string; one array per line. */
typedef struct tokenize_jsonl {
    const wick_tokenizer *t;
    const char *path;
    bool add_special;
    size_t *n_invalid;
} tokenize_jsonl;

static int tokenize_line(void *ctx, char *line, size_t len, size_t line_no) {
    const tokenize_jsonl *c = ctx;
    if (len && line[len - 1] == '\r') len--;
    if (!len) return 0;
    cJSON *j = cJSON_ParseWithLength(line, len);
    int rc;
    if (!cJSON_IsString(j))
        rc = cli_error("tokenize: %s line %zu is not a JSON string", c->path, line_no);
    else
        rc = tokenize_one(c->t, j->valuestring, strlen(j->valuestring), c->add_special,
                          c->n_invalid);
    cJSON_Delete(j);
    return rc;
}

int cmd_tokenize(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *file = NULL, *jsonl = NULL;
    bool no_special = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--prompt", "-p", OPT_STR, &prompt, NULL},
        {"--file", "-f", OPT_STR, &file, NULL},
        {"--jsonl", NULL, OPT_STR, &jsonl, NULL},
        {"--no-special", NULL, OPT_FLAG, &no_special, NULL},
    };
    const int prc = cli_parse("tokenize", argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (prc) return prc < 0;
    if (jsonl && (prompt || file)) return cli_error("tokenize: give one of -p, -f or --jsonl");
    size_t len = 0;
    char *text = NULL;
    if (!jsonl) {
        text = cli_prompt("tokenize", prompt, file, &len);
        if (!text) return 1;
    }
    wick_tokenizer *t = cli_load_tokenizer("tokenize", model);
    size_t n_invalid = 0;
    int rc = 1;
    if (t) {
        tokenize_jsonl c = {t, jsonl, !no_special, &n_invalid};
        rc = jsonl ? cli_each_line(jsonl, tokenize_line, &c)
                   : tokenize_one(t, text, len, !no_special, &n_invalid);
        if (rc == 0) cli_warn_invalid_utf8(n_invalid > INT_MAX ? INT_MAX : (int)n_invalid);
    }
    if (fflush(stdout) != 0 && rc == 0) rc = cli_error("tokenize: write error on stdout");
    free(text);
    wick_tokenizer_free(t);
    return rc;
}
