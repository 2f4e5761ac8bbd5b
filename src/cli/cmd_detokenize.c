/* cmd_detokenize.c — `wick detokenize`: token ids back to text. With --ids the
 * text is printed exactly as decoded (a newline follows only on a terminal);
 * with --jsonl FILE every line holds a JSON array of ids and one JSON string
 * is printed per line. -m takes a model or a tokenizer-only source. */
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/buf.h"

/* "1,2,3", "1 2 3" or "[1, 2, 3]" -> ids (malloc'd). -1 after printing. */
static int parse_ids(const char *s, int32_t **out, size_t *n) {
    size_t cap = 16;
    *n = 0;
    *out = malloc(cap * sizeof **out);
    if (!*out) return cli_error("out of memory"), -1;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == ',' || *p == '[' || *p == ']' || *p == '\t' || *p == '\n') p++;
        if (!*p) break;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < 0 || v > INT32_MAX ||
            (*end && *end != ',' && *end != ' ' && *end != ']' && *end != '\t' && *end != '\n')) {
            free(*out);
            *out = NULL;
            return cli_error("detokenize: bad token id list \"%s\" (want e.g. 1,2,3)", s), -1;
        }
        if (!GROW_ARRAY(*out, *n + 1, &cap)) {
            free(*out);
            *out = NULL;
            return cli_error("out of memory"), -1;
        }
        (*out)[(*n)++] = (int32_t)v;
        p = end;
    }
    return 0;
}

/* A JSON string literal of len bytes of UTF-8 (NUL bytes included). */
static void print_json_string(const char *s, size_t len) {
    putchar('"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (c < 0x20) printf("\\u%04x", c);
            else putchar(c);
        }
    }
    putchar('"');
}

/* --jsonl FILE: every non-blank line is a JSON array of ids; one JSON string per line. */
typedef struct detok_jsonl {
    const wick_tokenizer *t;
    const char *path;
    bool skip_special;
} detok_jsonl;

static int detok_line(void *ctx, char *line, size_t len, size_t line_no) {
    const detok_jsonl *c = ctx;
    if (strspn(line, " \t\r") == len) return 0; /* blank */
    int32_t *ids = NULL;
    size_t n_ids = 0;
    if (parse_ids(line, &ids, &n_ids) < 0)
        return cli_error("detokenize: %s line %zu is not a JSON array of ids", c->path, line_no);
    wick_error err;
    size_t tl;
    int rc = 0;
    char *text = wick_tokenizer_decode(c->t, ids, n_ids, c->skip_special, &tl, &err);
    if (!text) rc = cli_error("%s (%s line %zu)", err.msg, c->path, line_no);
    else {
        print_json_string(text, tl);
        putchar('\n');
    }
    free(text);
    free(ids);
    return rc;
}

int cmd_detokenize(int argc, char **argv) {
    const char *model = NULL, *ids_arg = NULL, *jsonl = NULL;
    bool skip_special = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--ids", NULL, OPT_STR, &ids_arg, NULL},
        {"--jsonl", NULL, OPT_STR, &jsonl, NULL},
        {"--skip-special", NULL, OPT_FLAG, &skip_special, NULL},
    };
    const int prc = cli_parse("detokenize", argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (prc) return prc < 0;
    if (!ids_arg == !jsonl) return cli_error("detokenize: give either --ids 1,2,3 or --jsonl FILE");
    int32_t *ids = NULL;
    size_t n = 0;
    if (ids_arg && parse_ids(ids_arg, &ids, &n) < 0) return 1;
    wick_tokenizer *t = cli_load_tokenizer("detokenize", model);
    int rc = 1;
    if (t && jsonl) {
        detok_jsonl c = {t, jsonl, skip_special};
        rc = cli_each_line(jsonl, detok_line, &c);
    } else if (t) {
        wick_error err;
        size_t len;
        char *text = wick_tokenizer_decode(t, ids, n, skip_special, &len, &err);
        if (!text) {
            rc = cli_error("%s", err.msg);
        } else {
            fwrite(text, 1, len, stdout);
            if (isatty(STDOUT_FILENO)) putchar('\n');
            rc = 0;
        }
        free(text);
    }
    if (fflush(stdout) != 0 && rc == 0) rc = cli_error("detokenize: write error on stdout");
    free(ids);
    wick_tokenizer_free(t);
    return rc;
}
