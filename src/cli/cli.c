/* cli.c — option parsing, error lines and shared helpers of the CLI. */
#include "cli/cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cJSON.h>
#include <unistd.h>

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
        if (!o && (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)) {
            if (cli_usage(cmd) < 0) printf("usage: wick %s\n", cmd);
            return CLI_HELP;
        }
        if (!o) {
            cli_error("%s: unknown option \"%s\" (see `wick %s --help`)", cmd, a, cmd);
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

int cli_parse_positional(const char *cmd, int argc, char **argv, const cli_opt *opts, int n_opts, const char **pos,
                         int max_pos, int *n_pos) {
    char **rest = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *rest);
    if (!rest) {
        cli_error("%s: out of memory", cmd);
        return -1;
    }
    int n_rest = 0;
    *n_pos = 0;
    if (argc > 0) rest[n_rest++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && a[1]) { /* an option, and its value when it takes one */
            rest[n_rest++] = argv[i];
            for (int k = 0; k < n_opts; k++)
                if ((strcmp(a, opts[k].name) == 0 || (opts[k].alias && strcmp(a, opts[k].alias) == 0)) &&
                    opts[k].kind != OPT_FLAG && i + 1 < argc) {
                    rest[n_rest++] = argv[++i];
                    break;
                }
            continue;
        }
        if (*n_pos == max_pos) {
            cli_error("%s: unexpected argument \"%s\" (see `wick help`)", cmd, a);
            free(rest);
            return -1;
        }
        pos[(*n_pos)++] = a;
    }
    const int rc = cli_parse(cmd, n_rest, rest, opts, n_opts);
    free(rest);
    return rc;
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

int cli_each_line(const char *path, cli_line_fn *fn, void *ctx) {
    wick_error err;
    size_t n;
    char *data = file_read_all(path, &n, &err);
    if (!data) return cli_error("%s", err.msg);
    int rc = 0;
    size_t pos = 0, line = 0;
    while (pos < n && rc == 0) {
        char *nl = memchr(data + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - data) : n;
        line++;
        data[end] = 0; /* the buffer is NUL-terminated at n */
        rc = fn(ctx, data + pos, end - pos, line);
        pos = end + 1;
    }
    free(data);
    return rc;
}

/* The built-in demo model's place relative to the binary (build/wick →
 * models/ beside build/) and to the working directory. */
#define DEMO_MODEL_REL "models/stories260K/stories260K-f32.gguf"

static bool is_file(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *cli_default_model(void) {
    static char buf[PATH_MAX + 64];
    const char *env = getenv("WICK_MODEL");
    if (env && *env) return env;
    ssize_t n = readlink("/proc/self/exe", buf, PATH_MAX);
    if (n > 0) {
        buf[n] = 0;
        char *slash = strrchr(buf, '/');
        if (slash) {
            *slash = 0;
            char *up = strrchr(buf, '/');
            size_t at = up ? (size_t)(up - buf) + 1 : 0; /* the binary's parent folder */
            snprintf(buf + at, sizeof buf - at, "%s", DEMO_MODEL_REL);
            if (is_file(buf)) return buf;
        }
    }
    return is_file(DEMO_MODEL_REL) ? DEMO_MODEL_REL : NULL;
}

wick_model *cli_load_model(const char *cmd, const char *path) {
    return cli_load_model_dtype(cmd, path, NULL);
}

const char *cli_dtype(const char *given) { return given ? given : getenv("WICK_DTYPE"); }

void cli_print_json(cJSON *o) {
    char *s = cJSON_PrintUnformatted(o);
    if (s) puts(s);
    free(s);
    cJSON_Delete(o);
}

wick_model *cli_load_model_dtype(const char *cmd, const char *path, const char *dtype) {
    if (!path) path = cli_default_model();
    if (!path) {
        cli_error("%s: no model given (-m PATH) and the built-in demo model (%s) is not there", cmd, DEMO_MODEL_REL);
        return NULL;
    }
    wick_error err;
    wick_model_params mp = {.dtype = cli_dtype(dtype)};
    wick_model *m = wick_model_load(path, &mp, &err);
    if (!m) cli_error("%s", err.msg);
    return m;
}

int cli_tokenize(const wick_model *m, const char *text, size_t len, bool add_special,
                 int32_t **ids, int *n) {
    wick_error err;
    size_t n_ids = 0, n_invalid = 0;
    if (wick_tokenizer_encode(wick_model_tokenizer(m), text, len, add_special, ids, &n_ids, &n_invalid,
                              &err) < 0)
        return cli_error("%s", err.msg), -1;
    if (n_ids > (size_t)INT32_MAX) {
        free(*ids);
        *ids = NULL;
        return cli_error("the prompt is too long to tokenize"), -1;
    }
    cli_warn_invalid_utf8(n_invalid > INT32_MAX ? INT32_MAX : (int)n_invalid);
    *n = (int)n_ids;
    return 0;
}

void cli_sampling_init(cli_sampling *s) {
    memset(s, 0, sizeof *s);
    s->v = wick_sampling_default();
    s->v.seed = (uint64_t)time(NULL);
}

int cli_sampling_opts(cli_opt *opts, int n, cli_sampling *s) {
    const cli_opt add[] = {
        {"--temp", NULL, OPT_FLOAT, &s->v.temperature, &s->temp},
        {"--top-k", NULL, OPT_INT, &s->v.top_k, &s->top_k},
        {"--top-p", NULL, OPT_FLOAT, &s->v.top_p, &s->top_p},
        {"--min-p", NULL, OPT_FLOAT, &s->v.min_p, &s->min_p},
        {"--repeat-penalty", NULL, OPT_FLOAT, &s->v.repeat_penalty, &s->rep},
        {"--repeat-last-n", NULL, OPT_INT, &s->v.repeat_last_n, &s->rep_n},
        {"--presence-penalty", NULL, OPT_FLOAT, &s->v.presence_penalty, &s->pres},
        {"--frequency-penalty", NULL, OPT_FLOAT, &s->v.frequency_penalty, &s->freq},
        {"--seed", NULL, OPT_U64, &s->v.seed, &s->seed},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) opts[n++] = add[i];
    return n;
}

int cli_sampling_check(const char *cmd, const cli_sampling *s) {
    const wick_sampling *v = &s->v;
    if (v->temperature < 0 || v->top_k < 0 || v->top_p < 0 || v->top_p > 1 || v->min_p < 0 ||
        v->min_p > 1 || v->repeat_penalty < 0 || v->repeat_last_n < -1) {
        cli_error("%s: sampling values out of range (--temp, --top-k, --repeat-penalty >= 0; "
                  "--top-p, --min-p in [0, 1]; --repeat-last-n >= -1)", cmd);
        return -1;
    }
    return 0;
}

void cli_sampling_apply_model(cli_sampling *s, const wick_model *m) {
    wick_sampling d = wick_sampling_default();
    if (!wick_model_sampling_defaults(m, &d)) return;
    if (!s->temp) s->v.temperature = d.temperature;
    if (!s->top_k) s->v.top_k = d.top_k;
    if (!s->top_p) s->v.top_p = d.top_p;
    if (!s->min_p) s->v.min_p = d.min_p;
    if (!s->rep) s->v.repeat_penalty = d.repeat_penalty;
}

wick_tokenizer *cli_load_tokenizer(const char *cmd, const char *path) {
    if (!path) {
        cli_error("%s: no model or tokenizer given (-m PATH)", cmd);
        return NULL;
    }
    wick_error err;
    wick_tokenizer *t = wick_tokenizer_load(path, &err);
    if (!t) cli_error("%s", err.msg);
    return t;
}

void cli_warn_invalid_utf8(int n) {
    if (n > 0) fprintf(stderr, "wick: warning: input has %d invalid UTF-8 bytes; replaced with U+FFFD\n", n);
}

static void done_cb(void *user, const wick_request_result *res) {
    cli_done *d = user;
    d->done = true;
    d->res = *res;
    d->res.error = NULL;
    d->res.tail = NULL;
    snprintf(d->error, sizeof d->error, "%s", res->error ? res->error : "");
}

int cli_run_request(wick_context *c, wick_request *r) {
    cli_done *d = r->user;
    memset(d, 0, sizeof *d);
    r->on_done = done_cb;
    wick_error err;
    wick_sched *s = wick_sched_new(c, NULL, &err);
    if (!s) return cli_error("bench: %s", err.msg), -1;
    int rc = wick_sched_submit(s, r, &err) > 0 ? 0 : -1;
    while (rc == 0 && !d->done)
        if (wick_sched_step(s, &err) < 0) rc = -1;
    wick_sched_free(s);
    if (rc < 0) return cli_error("bench: %s", err.msg), -1;
    if (d->error[0]) return cli_error("bench: %s", d->error), -1;
    return 0;
}


static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

cli_stat cli_stats(const double *v, int n) {
    cli_stat s = {0, 0};
    double *t = n > 0 ? malloc((size_t)n * sizeof *t) : NULL, mean = 0;
    if (!t) return s;
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s.med = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
    for (int i = 0; i < n; i++) mean += v[i] / n;
    for (int i = 0; i < n && n > 1; i++) s.sd += (v[i] - mean) * (v[i] - mean) / (n - 1);
    s.sd = sqrt(s.sd);
    free(t);
    return s;
}
