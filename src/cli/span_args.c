/* span_args.c — the span-request options of `wick generate` (--prefix,
 * --span FILE..., --anchor, --positions, --blend-first-k): parsing, turning
 * them into a wick_spans (P tokenized with the model's BOS, spans and the
 * question without special tokens) and the "segments" object of --json. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/span_args.h"

/* cli_error's line, then -1. */
#define cli_fail(...) (cli_error(__VA_ARGS__), -1)

int cli_span_opts(cli_opt *opts, int n, cli_span_args *a) {
    memset(a, 0, sizeof *a);
    const cli_opt add[] = {
        {"--prefix", NULL, OPT_STR, &a->prefix, NULL},
        {"--span", NULL, OPT_LIST, &a->files, NULL},
        {"--anchor", NULL, OPT_STR, &a->anchor, NULL},
        {"--positions", NULL, OPT_STR, &a->positions, NULL},
        {"--blend-first-k", NULL, OPT_INT, &a->blend, NULL},
        {"--no-span-cache", NULL, OPT_FLAG, &a->no_cache, NULL},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) opts[n++] = add[i];
    return n;
}

bool cli_span_given(const cli_span_args *a) {
    return a->prefix || a->files.n > 0 || a->anchor || a->positions || a->blend || a->no_cache;
}

int cli_span_check(const char *cmd, const cli_span_args *a) {
    if (!cli_span_given(a)) return 0;
    if (a->files.n == 0) return cli_fail("%s: --prefix, --anchor, --positions, --blend-first-k and --no-span-cache need at least one --span FILE", cmd);
    if (a->anchor && strcmp(a->anchor, "prefix") && strcmp(a->anchor, "bos") && strcmp(a->anchor, "none"))
        return cli_fail("%s: --anchor must be prefix, bos or none, not \"%s\"", cmd, a->anchor);
    if (a->positions && strcmp(a->positions, "sequential") && strcmp(a->positions, "shared"))
        return cli_fail("%s: --positions must be sequential or shared, not \"%s\"", cmd, a->positions);
    if (a->blend < 0) return cli_fail("%s: --blend-first-k must be 0 or more", cmd);
    return 0;
}

static int tokenize(const wick_model *m, const char *text, size_t len, bool bos, int32_t **ids, int *n) {
    if (len == 0) { /* an empty prefix: BOS alone, if the model adds one */
        *ids = NULL;
        *n = 0;
        if (!bos) return 0;
    }
    return cli_tokenize(m, text, len, bos, ids, n);
}

int cli_span_build(const char *cmd, const wick_model *m, const cli_span_args *a, const char *question, size_t qlen,
                   cli_span_req *r) {
    memset(r, 0, sizeof *r);
    const char *p = a->prefix ? a->prefix : "";
    if (tokenize(m, p, strlen(p), true, &r->prefix, &r->n_prefix) < 0) return -1;
    for (int k = 0; k < a->files.n; k++) {
        size_t len;
        char *text = cli_prompt(cmd, NULL, a->files.v[k], &len);
        if (!text) return -1;
        int rc = tokenize(m, text, len, false, &r->spans[k], &r->span_len[k]);
        free(text);
        if (rc < 0) return -1;
        if (r->span_len[k] == 0) return cli_fail("%s: span %d (%s) is empty", cmd, k, a->files.v[k]);
        r->n_spans++;
    }
    if (tokenize(m, question, qlen, false, &r->suffix, &r->n_suffix) < 0) return -1;
    if (r->n_suffix == 0) return cli_fail("%s: the question (-p) tokenizes to nothing", cmd);
    r->v = (wick_spans){
        .prefix = r->prefix,
        .n_prefix = r->n_prefix,
        .spans = (const int32_t *const *)r->spans,
        .span_len = r->span_len,
        .n_spans = r->n_spans,
        .suffix = r->suffix,
        .n_suffix = r->n_suffix,
        .anchor = !a->anchor || !strcmp(a->anchor, "prefix") ? WICK_ANCHOR_PREFIX
                  : !strcmp(a->anchor, "bos")                ? WICK_ANCHOR_BOS
                                                             : WICK_ANCHOR_NONE,
        .positions = a->positions && !strcmp(a->positions, "shared") ? WICK_POSITIONS_SHARED : WICK_POSITIONS_SEQUENTIAL,
        .blend_first_k = a->blend,
    };
    return 0;
}

static cJSON *ids_json(const int32_t *ids, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ids[i]));
    return a;
}

void cli_span_segments_json(cJSON *o, const cli_span_req *r) {
    cJSON *seg = cJSON_AddObjectToObject(o, "segments");
    if (!seg) return;
    cJSON_AddItemToObject(seg, "prefix", ids_json(r->prefix, r->n_prefix));
    cJSON *sp = cJSON_AddArrayToObject(seg, "spans");
    for (int k = 0; sp && k < r->n_spans; k++) cJSON_AddItemToArray(sp, ids_json(r->spans[k], r->span_len[k]));
    cJSON_AddItemToObject(seg, "suffix", ids_json(r->suffix, r->n_suffix));
}

void cli_span_free(cli_span_req *r) {
    free(r->prefix);
    free(r->suffix);
    for (int k = 0; k < CLI_LIST_MAX; k++) free(r->spans[k]);
    memset(r, 0, sizeof *r);
}
