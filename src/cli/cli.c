/* cli.c — option parsing, error lines and shared helpers of the CLI. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"

int cli_error(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("wick: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 1;
}

static int parse_value(const char *cmd, const cli_opt *o, const char *v) {
    char *end;
    errno = 0;
    switch (o->kind) {
    case OPT_STR:
        *(const char **)o->out = v;
        return 0;
    case OPT_INT: {
        long x = strtol(v, &end, 10);
        if (errno || end == v || *end || x < INT_MIN || x > INT_MAX) break;
        *(int *)o->out = (int)x;
        return 0;
    }
    case OPT_U64: {
        if (*v == '-') break;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || end == v || *end) break;
        *(uint64_t *)o->out = x;
        return 0;
    }
    case OPT_FLOAT: {
        float x = strtof(v, &end);
        if (errno || end == v || *end || !isfinite(x)) break;
        *(float *)o->out = x;
        return 0;
    }
    case OPT_LIST: {
        cli_list *l = o->out;
        if (l->n == CLI_LIST_MAX) {
            cli_error("%s: at most %d %s options", cmd, CLI_LIST_MAX, o->name);
            return -1;
        }
        l->v[l->n++] = v;
        return 0;
    }
    case OPT_FLAG:
        return 0;
    }
    cli_error("%s: invalid value \"%s\" for %s", cmd, v, o->name);
    return -1;
}

int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, int n_opts) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const cli_opt *o = NULL;
        const char *inline_val = NULL;
        for (int k = 0; k < n_opts && !o; k++) {
            size_t nl = strlen(opts[k].name);
            if (strcmp(a, opts[k].name) == 0 || (opts[k].alias && strcmp(a, opts[k].alias) == 0)) {
                o = &opts[k];
            } else if (strncmp(a, opts[k].name, nl) == 0 && a[nl] == '=') {
                o = &opts[k];
                inline_val = a + nl + 1;
            }
        }
        if (!o) {
            cli_error("%s: unknown option \"%s\" (see `wick help`)", cmd, a);
            return -1;
        }
        if (o->seen) *o->seen = true;
        if (o->kind == OPT_FLAG) {
            *(bool *)o->out = true;
            continue;
        }
        const char *v = inline_val;
        if (!v) {
            if (i + 1 >= argc) {
                cli_error("%s: %s needs a value", cmd, o->name);
                return -1;
            }
            v = argv[++i];
        }
        if (parse_value(cmd, o, v) < 0) return -1;
    }
    return 0;
}

char *cli_prompt(const char *cmd, const char *text, const char *file, size_t *len) {
    if (text && file) {
        cli_error("%s: give either -p or -f, not both", cmd);
        return NULL;
    }
    if (file) {
        wick_error err;
        char *s = file_read_all(file, len, &err);
        if (!s) cli_error("%s", err.msg);
        return s;
    }
    if (!text) {
        cli_error("%s: no prompt given (-p TEXT or -f FILE)", cmd);
        return NULL;
    }
    *len = strlen(text);
    char *s = malloc(*len + 1);
    if (s) memcpy(s, text, *len + 1);
    return s;
}

wick_model *cli_load_model(const char *cmd, const char *path) {
    if (!path) {
        cli_error("%s: no model given (-m PATH)", cmd);
        return NULL;
    }
    wick_error err;
    wick_model *m = wick_model_load(path, NULL, &err);
    if (!m) cli_error("%s", err.msg);
    return m;
}

int cli_tokenize(const wick_model *m, const char *text, size_t len, bool add_special,
                 int32_t **ids, int *n) {
    /* Nearly always enough (a token covers at least one byte, plus BOS/EOS);
     * invalid bytes replaced by U+FFFD can need more, then tokenize again. */
    wick_error err;
    size_t cap = len + 2;
    for (int attempt = 0; attempt < 2; attempt++) {
        *ids = malloc(cap * sizeof **ids);
        if (!*ids) return cli_error("out of memory"), -1;
        *n = wick_tokenize(m, text, len, add_special, *ids, (int)cap, &err);
        if (*n < 0) {
            free(*ids);
            *ids = NULL;
            return cli_error("%s", err.msg), -1;
        }
        if ((size_t)*n <= cap) return 0;
        free(*ids);
        cap = (size_t)*n;
    }
    *ids = NULL;
    return cli_error("tokenizer returned an inconsistent count"), -1;
}
