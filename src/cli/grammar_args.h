/* grammar_args.h — the structured-output flags generate and grammar share:
 * --json-schema FILE, --grammar FILE (GBNF), --regex RE, --choice TEXT...,
 * --json-object, with --json-ws (flexible whitespace) and --strict. */
#ifndef WICK_CLI_GRAMMAR_ARGS_H
#define WICK_CLI_GRAMMAR_ARGS_H

#include "cli/cli.h"

typedef struct cli_grammar_args {
    const char *schema_file, *gbnf_file, *regex;
    cli_list choices;
    bool json_object, flexible_ws, strict;
    wick_grammar *g; /* compiled by cli_grammar_build */
} cli_grammar_args;

/* Append the options to opts (which has room) after n entries; the new count. */
int cli_grammar_opts(cli_opt *opts, int n, cli_grammar_args *a);
/* Is a grammar asked for? */
bool cli_grammar_given(const cli_grammar_args *a);
/* One grammar at most, the modifiers only with JSON: -1 after printing. */
int cli_grammar_check(const char *cmd, const cli_grammar_args *a);
/* Compile the grammar asked for (if any) for m into a->g: -1 after printing. */
int cli_grammar_build(const char *cmd, cli_grammar_args *a, const wick_model *m);
void cli_grammar_free(cli_grammar_args *a);

#endif
