/* maskbench.c — JSONSchemaBench's MaskBench on wick's grammar engine: for
 * each schema (a line of bench/maskbench_prep.py's JSONL), compile it (one
 * thread, whitespace as JSON allows it, as the published runs had), then
 * feed each labelled instance token by token, as the model tokenizes it,
 * computing the token mask before every token (timed) and stopping at the
 * first token the mask refuses. A schema passes when every valid instance
 * is accepted and every invalid one refused; a refused schema (a compile
 * error) fails. Prints the schemas passed, the invalid instances wrongly
 * accepted (each named), the valid ones wrongly refused, compile and mask
 * time percentiles, the share of forced masks (one token allowed: what a
 * fast-forward could skip sampling for), and the commonest compile errors.
 *
 *   maskbench MODEL DATA.jsonl [--limit N] [--strict] [--no-masks] [-v]
 *
 * --no-masks checks acceptance only (the matcher takes each token or not),
 * for quick coverage runs.
 */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "core/clock.h"
#include "wick.h"

/* compile errors by reason (the message without its schema path) */
typedef struct reason {
    char text[512];
    int n;
} reason;

static void count_reason(reason *rs, int *n_rs, int cap, const char *msg) {
    char t[512];
    snprintf(t, sizeof t, "%s", msg);
    char *paren = strstr(t, " (#");
    if (paren) *paren = 0;
    for (int i = 0; i < *n_rs; i++)
        if (!strcmp(rs[i].text, t)) {
            rs[i].n++;
            return;
        }
    if (*n_rs < cap) {
        snprintf(rs[*n_rs].text, sizeof rs[*n_rs].text, "%s", t);
        rs[(*n_rs)++].n = 1;
    }
}

static int cmp_reason(const void *a, const void *b) { return ((const reason *)b)->n - ((const reason *)a)->n; }

static char *read_line(FILE *f, size_t *cap, char **buf) {
    size_t n = 0;
    int ch;
    while ((ch = fgetc(f)) != EOF && ch != '\n') {
        if (n + 2 > *cap) {
            *cap = *cap ? *cap * 2 : 1 << 16;
            *buf = realloc(*buf, *cap);
            if (!*buf) exit(1);
        }
        (*buf)[n++] = (char)ch;
    }
    if (ch == EOF && n == 0) return NULL;
    if (!*buf) {
        *buf = malloc(1);
        *cap = 1;
    }
    (*buf)[n] = 0;
    return *buf;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: maskbench MODEL DATA.jsonl [--limit N] [--strict] [--no-masks] [-v]\n");
        return 2;
    }
    int limit = 1 << 30;
    bool strict = false, verbose = false, masks = true;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--strict")) strict = true;
        else if (!strcmp(argv[i], "-v")) verbose = true;
        else if (!strcmp(argv[i], "--no-masks")) masks = false;
    }
    wick_error err;
    wick_model *m = wick_model_load(argv[1], NULL, &err);
    if (!m) {
        fprintf(stderr, "maskbench: %s\n", err.msg);
        return 1;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        fprintf(stderr, "maskbench: cannot open %s\n", argv[2]);
        return 1;
    }
    wick_model_info info;
    wick_model_get_info(m, &info);
    uint64_t *bits = malloc(((size_t)info.n_vocab + 63) / 64 * 8);
    const size_t ids_cap = 1 << 20;
    int32_t *ids = malloc(ids_cap * sizeof *ids);
    samples compile = {0}, mask = {0};
    reason *rs = calloc(4096, sizeof *rs);
    int n_rs = 0;
    int n_schemas = 0, n_with_tests = 0, n_compiled = 0, n_passed = 0;
    uint64_t digest = 0xcbf29ce484222325ull; /* FNV-1a over every mask's words */
    long n_valid = 0, n_invalid = 0, wrong_accept = 0, wrong_refuse = 0, untokenizable = 0, forced = 0;
    const size_t words = ((size_t)info.n_vocab + 63) / 64;
    size_t cap = 0;
    char *line = NULL;
    while (n_schemas < limit && read_line(f, &cap, &line)) {
        cJSON *d = cJSON_Parse(line);
        if (!d) continue;
        const cJSON *id = cJSON_GetObjectItem(d, "id"), *tests = cJSON_GetObjectItem(d, "tests");
        const char *name = cJSON_IsString(id) ? id->valuestring : "?";
        n_schemas++;
        if (cJSON_GetArraySize(tests) == 0) {
            cJSON_Delete(d);
            continue;
        }
        n_with_tests++;
        char *schema = cJSON_PrintUnformatted(cJSON_GetObjectItem(d, "schema"));
        wick_grammar_spec sp = {.kind = WICK_GRAMMAR_JSON_SCHEMA, .text = schema, .len = strlen(schema),
                                .strict = strict, .flexible_ws = true};
        wick_grammar *g = wick_grammar_compile(m, &sp, &err);
        free(schema);
        if (!g) {
            count_reason(rs, &n_rs, 4096, err.msg);
            if (verbose) printf("refused %s: %s\n", name, err.msg);
            cJSON_Delete(d);
            continue;
        }
        n_compiled++;
        samples_push(&compile, wick_grammar_compile_ms(g));
        bool pass = true;
        int k = 0;
        for (const cJSON *t = tests->child; t; t = t->next, k++) {
            const bool valid = cJSON_IsTrue(cJSON_GetObjectItem(t, "valid"));
            const char *text = cJSON_GetStringValue(cJSON_GetObjectItem(t, "text"));
            if (!text) continue;
            const int n = wick_tokenize(m, text, strlen(text), false, ids, ids_cap, &err);
            if (n < 0) {
                untokenizable++;
                continue;
            }
            valid ? n_valid++ : n_invalid++;
            wick_grammar_matcher *mt = wick_grammar_matcher_new(g, &err);
            if (!mt) {
                fprintf(stderr, "maskbench: %s: %s\n", name, err.msg);
                return 1;
            }
            bool accepted = true;
            for (int i = 0; i < n; i++) {
                bool in_mask = true;
                if (masks) {
                    const double t0 = wick_now_ms();
                    wick_grammar_matcher_mask(mt, bits);
                    samples_push(&mask, (wick_now_ms() - t0) * 1000);
                    in_mask = bits[ids[i] >> 6] >> (ids[i] & 63) & 1;
                    for (size_t w = 0; w < words; w++) digest = (digest ^ bits[w]) * 0x100000001b3ull;
                    int allowed = 0;
                    for (size_t w = 0; w < words && allowed < 2; w++) allowed += __builtin_popcountll(bits[w]);
                    forced += allowed == 1;
                }
                const bool took = wick_grammar_matcher_accept(mt, ids[i]);
                if (masks && in_mask != took) {
                    fprintf(stderr, "maskbench: %s test %d token %d: the mask says %d, the matcher %d\n", name, k, i,
                            in_mask, took);
                    return 1;
                }
                if (!took) {
                    accepted = false;
                    break;
                }
            }
            /* MaskBench ends an instance at its last token; the grammar must also
             * be complete there for wick (EOG allowed) */
            if (accepted && !wick_grammar_matcher_complete(mt)) accepted = false;
            wick_grammar_matcher_free(mt);
            if (accepted && !valid) {
                wrong_accept++;
                pass = false;
                printf("WRONGLY ACCEPTED %s test %d: %.200s\n", name, k, text);
            } else if (!accepted && valid) {
                wrong_refuse++;
                pass = false;
                if (verbose) printf("refused valid %s test %d: %.200s\n", name, k, text);
            }
        }
        n_passed += pass;
        wick_grammar_free(g);
        cJSON_Delete(d);
    }
    fclose(f);
    printf("schemas %d (%d with tests): compiled %d (%.1f%%), passed %d (%.1f%%)\n", n_schemas, n_with_tests, n_compiled,
           n_with_tests ? 100.0 * n_compiled / n_with_tests : 0, n_passed, n_with_tests ? 100.0 * n_passed / n_with_tests : 0);
    printf("instances of compiled schemas: %ld valid (%ld refused), %ld invalid (%ld WRONGLY ACCEPTED), %ld untokenizable\n",
           n_valid, wrong_refuse, n_invalid, wrong_accept, untokenizable);
    print_compile_mask_times(&compile, &mask);
    printf("forced masks (one token allowed): %ld (%.2f%%)\n", forced, mask.n ? 100.0 * (double)forced / (double)mask.n : 0);
    if (masks) printf("masks digest: %016llx\n", (unsigned long long)digest);
    qsort(rs, (size_t)n_rs, sizeof *rs, cmp_reason);
    printf("commonest compile errors:\n");
    for (int i = 0; i < n_rs && i < 25; i++) printf("  %5d  %s\n", rs[i].n, rs[i].text);
    free(rs);
    free(line);
    free(compile.v);
    free(mask.v);
    free(bits);
    free(ids);
    wick_model_free(m);
    return wrong_accept ? 1 : 0;
}
