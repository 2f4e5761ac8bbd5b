/* cmd_grammar.c — `wick grammar`: compile a structured-output grammar for a
 * model and report the compile time; with --check FILE.jsonl, run each
 * line's text through the grammar token by token (tokenized as the model
 * would) and report whether it is accepted, where it is refused, and the
 * token-mask times (p50/p90/p99/max µs, one thread): the measurement of
 * JSONSchemaBench's MaskBench. A line that is a JSON string is checked as
 * its content; any other line as written. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/grammar_args.h"
#include "core/clock.h"

typedef struct check_run {
    const wick_model *m;
    const wick_grammar *g;
    const char *path;
    bool json;
    uint64_t *bits;
    double *us; /* every mask's time */
    size_t n_us, cap_us;
    int lines, accepted, rejected, untokenizable;
    double line_max_us;   /* the slowest mask of the current line */
    size_t line_max_byte; /* and the byte it was computed at */
    size_t at_byte;       /* the current mask's byte */
    cJSON *out; /* --json: the per-line results */
} check_run;

static bool add_time(check_run *r, double us) {
    if (r->n_us == r->cap_us) {
        const size_t cap = r->cap_us ? r->cap_us * 2 : 4096;
        double *p = realloc(r->us, cap * sizeof *p);
        if (!p) return false;
        r->us = p, r->cap_us = cap;
    }
    r->us[r->n_us++] = us;
    return true;
}

/* A mask, timed; whether id (-1: none) is allowed in it. */
static int timed_mask(check_run *r, wick_grammar_matcher *gm, int32_t id, bool *allowed) {
    const double t0 = wick_now_ms();
    wick_grammar_matcher_mask(gm, r->bits);
    const double us = (wick_now_ms() - t0) * 1000;
    if (!add_time(r, us)) return cli_error("grammar: out of memory");
    if (us > r->line_max_us) r->line_max_us = us, r->line_max_byte = r->at_byte;
    *allowed = id >= 0 && (r->bits[id >> 6] >> (id & 63) & 1);
    return 0;
}

static void report(check_run *r, size_t line_no, bool ok, const char *why, long byte, int token) {
    ok ? r->accepted++ : r->rejected++;
    if (r->json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "line", (double)line_no);
        cJSON_AddBoolToObject(o, "accepted", ok);
        cJSON_AddNumberToObject(o, "max_mask_us", r->line_max_us);
        cJSON_AddNumberToObject(o, "max_mask_byte", (double)r->line_max_byte);
        if (!ok) {
            cJSON_AddStringToObject(o, "reason", why);
            if (byte >= 0) cJSON_AddNumberToObject(o, "byte", (double)byte);
            if (token >= 0) cJSON_AddNumberToObject(o, "token", token);
        }
        cJSON_AddItemToArray(r->out, o);
    } else if (ok) {
        printf("line %zu: accepted\n", line_no);
    } else if (byte >= 0) {
        printf("line %zu: rejected at byte %ld (token %d): %s\n", line_no, byte, token, why);
    } else {
        printf("line %zu: rejected: %s\n", line_no, why);
    }
}

static int check_line(void *ctx, char *line, size_t len, size_t line_no) {
    check_run *r = ctx;
    if (len && line[len - 1] == '\r') len--;
    if (!len) return 0;
    r->lines++;
    cJSON *j = cJSON_ParseWithLength(line, len);
    const char *text = line;
    if (cJSON_IsString(j)) text = j->valuestring, len = strlen(text);
    wick_error err;
    const int cap = (int)(len < 1 << 28 ? len : 1 << 28) + 16;
    int32_t *ids = malloc((size_t)cap * sizeof *ids);
    const int n = ids ? wick_tokenize(r->m, text, len, false, ids, cap, &err) : -1;
    /* the tokens' bytes must be the text (a tokenizer's dummy prefix is not) */
    bool same = n >= 0 && n <= cap;
    size_t at = 0;
    char piece[1024];
    for (int i = 0; same && i < n; i++) {
        const int pl = wick_token_piece(r->m, ids[i], piece, sizeof piece);
        same = pl >= 0 && (size_t)pl <= sizeof piece && at + (size_t)pl <= len && memcmp(text + at, piece, (size_t)pl) == 0;
        at += pl > 0 ? (size_t)pl : 0;
    }
    int rc = 0;
    if (!same || at != len) {
        r->untokenizable++;
        r->lines--;
        if (!r->json) printf("line %zu: skipped: its tokens' bytes are not its text\n", line_no);
    } else {
        wick_grammar_matcher *gm = wick_grammar_matcher_new(r->g, &err);
        if (!gm) rc = cli_error("grammar: %s", err.msg);
        size_t byte = 0;
        int i = 0;
        r->line_max_us = 0;
        r->line_max_byte = 0;
        bool allowed = true;
        for (; rc == 0 && i < n; i++) {
            r->at_byte = byte;
            if ((rc = timed_mask(r, gm, ids[i], &allowed)) < 0 || !allowed) break;
            if (!wick_grammar_matcher_accept(gm, ids[i])) {
                rc = cli_error("grammar: %s line %zu: the mask allows token %d but the matcher refuses it", r->path,
                               line_no, ids[i]);
                break;
            }
            byte += (size_t)wick_token_piece(r->m, ids[i], piece, sizeof piece);
        }
        if (rc == 0) {
            bool end_ok = false;
            r->at_byte = byte;
            if (allowed) rc = timed_mask(r, gm, -1, &end_ok);
            if (rc == 0 && !allowed)
                report(r, line_no, false, "the grammar does not allow this token here", (long)byte, i);
            else if (rc == 0)
                report(r, line_no, wick_grammar_matcher_complete(gm), "the text ends before the grammar does", -1, -1);
        }
        wick_grammar_matcher_free(gm);
    }
    free(ids);
    cJSON_Delete(j);
    return rc;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *v, size_t n, double p) {
    if (!n) return 0;
    size_t k = (size_t)(p * (double)(n - 1) + 0.5);
    return v[k < n ? k : n - 1];
}

int cmd_grammar(int argc, char **argv) {
    const char *model = NULL, *check = NULL;
    bool json = false;
    cli_opt opts[16] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--check", NULL, OPT_STR, &check, NULL},
        {"--json", NULL, OPT_FLAG, &json, NULL},
    };
    cli_grammar_args ga;
    const int n_opts = cli_grammar_opts(opts, 3, &ga);
    const int prc = cli_parse("grammar", argc, argv, opts, n_opts);
    if (prc) return prc < 0;
    if (cli_grammar_check("grammar", &ga) < 0) return 1;
    if (!cli_grammar_given(&ga))
        return cli_error("grammar: give the grammar: --json-schema FILE, --grammar FILE, --regex RE, --choice TEXT or --json-object");
    cli_runtime rt;
    cli_runtime_init(&rt);
    wick_model *m = cli_runtime_model("grammar", model, &rt);
    if (!m) return 1;
    const double t0 = wick_now_ms();
    int rc = cli_grammar_build("grammar", &ga, m) < 0 ? 1 : 0;
    const double first_ms = wick_now_ms() - t0;
    check_run r = {.m = m, .g = ga.g, .path = check, .json = json};
    if (rc == 0 && check) {
        wick_model_info info;
        wick_model_get_info(m, &info);
        r.bits = calloc(((size_t)info.n_vocab + 63) / 64, sizeof *r.bits);
        r.out = json ? cJSON_CreateArray() : NULL;
        if (!r.bits || (json && !r.out)) rc = cli_error("grammar: out of memory");
        if (rc == 0 && cli_each_line(check, check_line, &r) != 0) rc = 1;
        qsort(r.us, r.n_us, sizeof *r.us, cmp_double);
    }
    if (rc == 0) {
        const double compile_ms = wick_grammar_compile_ms(ga.g);
        double mean = 0;
        for (size_t i = 0; i < r.n_us; i++) mean += r.us[i] / (double)r.n_us;
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "compile_ms", compile_ms);
            cJSON_AddNumberToObject(o, "first_compile_ms", first_ms); /* with the vocabulary's first build */
            if (check) {
                cJSON_AddNumberToObject(o, "lines", r.lines);
                cJSON_AddNumberToObject(o, "accepted", r.accepted);
                cJSON_AddNumberToObject(o, "rejected", r.rejected);
                cJSON_AddNumberToObject(o, "untokenizable", r.untokenizable);
                cJSON_AddNumberToObject(o, "masks", (double)r.n_us);
                cJSON *t = cJSON_AddObjectToObject(o, "mask_us");
                cJSON_AddNumberToObject(t, "p50", pct(r.us, r.n_us, 0.50));
                cJSON_AddNumberToObject(t, "p90", pct(r.us, r.n_us, 0.90));
                cJSON_AddNumberToObject(t, "p99", pct(r.us, r.n_us, 0.99));
                cJSON_AddNumberToObject(t, "max", r.n_us ? r.us[r.n_us - 1] : 0);
                cJSON_AddNumberToObject(t, "mean", mean);
                cJSON_AddItemToObject(o, "results", r.out);
                r.out = NULL;
            }
            char *s = cJSON_PrintUnformatted(o);
            if (s) puts(s);
            free(s);
            cJSON_Delete(o);
        } else {
            printf("compiled in %.3f ms (%.1f ms with the vocabulary's first build)\n", compile_ms, first_ms);
            if (check)
                printf("%d lines: %d accepted, %d rejected (%d skipped); %zu masks: p50 %.1f us, p90 %.1f us, p99 %.1f us, "
                       "max %.1f us, mean %.1f us\n",
                       r.lines, r.accepted, r.rejected, r.untokenizable, r.n_us, pct(r.us, r.n_us, 0.5),
                       pct(r.us, r.n_us, 0.9), pct(r.us, r.n_us, 0.99), r.n_us ? r.us[r.n_us - 1] : 0, mean);
        }
    }
    cJSON_Delete(r.out);
    free(r.us);
    free(r.bits);
    cli_grammar_free(&ga);
    wick_model_free(m);
    return rc;
}
