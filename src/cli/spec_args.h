/* spec_args.h — the speculative-decoding flags generate, bench and serve
 * share: --draft MODEL, --draft-layers N, --lookup N, --draft-max K. */
#ifndef WICK_CLI_SPEC_ARGS_H
#define WICK_CLI_SPEC_ARGS_H

#include "cli/cli.h"

typedef struct cli_spec_args {
    const char *draft;           /* --draft MODEL */
    int draft_layers, lookup, draft_max;
    wick_model *draft_model;     /* loaded by cli_spec_build */
    wick_spec_params v;          /* built by cli_spec_build */
} cli_spec_args;

/* Append the options to opts (which has room) after n entries; returns the new count. */
int cli_spec_opts(cli_opt *opts, int n, cli_spec_args *a);
/* Any of the drafter flags given. */
bool cli_spec_given(const cli_spec_args *a);
/* The checks that need no model (ranges, one drafter), and a->v filled but
 * for the draft model (serve: --draft-max alone allowed). -1 after printing. */
int cli_spec_check(const char *cmd, cli_spec_args *a);
/* After parsing: ranges checked and the draft model loaded (dtype as the
 * target's); fills a->v. target: for --draft-layers' range and the
 * vocabulary check. -1 after printing. */
int cli_spec_build(const char *cmd, cli_spec_args *a, wick_model *target, const char *dtype);
void cli_spec_free(cli_spec_args *a);

#endif
