/* span_args.h — `wick generate`'s span-request options (span_args.c). */
#ifndef WICK_CLI_SPAN_ARGS_H
#define WICK_CLI_SPAN_ARGS_H

#include <cJSON.h>

#include "cli/cli.h"

typedef struct cli_span_args {
    const char *prefix, *anchor, *positions;
    cli_list files;
    int blend;
    bool no_cache;
} cli_span_args;

/* The request built from them: segments tokenized, and the wick_spans over them. */
typedef struct cli_span_req {
    int32_t *prefix, *suffix, *spans[CLI_LIST_MAX];
    int n_prefix, n_suffix, span_len[CLI_LIST_MAX], n_spans;
    wick_spans v;
} cli_span_req;

/* Append the options (zeroing a); returns the new count. */
int cli_span_opts(cli_opt *opts, int n, cli_span_args *a);
bool cli_span_given(const cli_span_args *a);
/* After parsing: -1 after printing if the options do not make a span request. */
int cli_span_check(const char *cmd, const cli_span_args *a);
/* Read the span files and tokenize every segment (the question is Q). -1 after printing. */
int cli_span_build(const char *cmd, const wick_model *m, const cli_span_args *a, const char *question, size_t qlen,
                   cli_span_req *r);
/* o.segments = {"prefix": [ids], "spans": [[ids]...], "suffix": [ids]} */
void cli_span_segments_json(cJSON *o, const cli_span_req *r);
void cli_span_free(cli_span_req *r);

#endif
