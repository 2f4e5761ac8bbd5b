/* cli.h — shared pieces of the `wick` command line: the option parser, the
 * one-line error report, and the subcommand entry points (one file each). */
#ifndef WICK_CLI_CLI_H
#define WICK_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "wick.h"

typedef enum opt_kind { OPT_STR, OPT_INT, OPT_U64, OPT_FLOAT, OPT_FLAG, OPT_LIST } opt_kind;

/* A repeatable string option (OPT_LIST). */
#define CLI_LIST_MAX 16
typedef struct cli_list {
    const char *v[CLI_LIST_MAX];
    int n;
} cli_list;

typedef struct cli_opt {
    const char *name;  /* "--ctx" */
    const char *alias; /* "-c" or NULL */
    opt_kind kind;
    void *out;         /* const char **, int *, uint64_t *, float *, bool *, cli_list * */
    bool *seen;        /* optional: set when given */
} cli_opt;

/* Parse argv[1..] (argv[0] is the subcommand) against opts; on error print
 * one line and return -1. */
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, int n_opts);

/* Print "wick: error: <msg>" to stderr and return 1 (the exit status). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The prompt from -p TEXT or -f FILE (malloc'd); NULL after printing an error. */
char *cli_prompt(const char *cmd, const char *text, const char *file, size_t *len);

/* Load a model or print the error; NULL on failure. */
wick_model *cli_load_model(const char *cmd, const char *path);

/* Tokenize with BOS as the model adds it; *ids malloc'd. -1 after printing. */
int cli_tokenize(const wick_model *m, const char *text, size_t len, bool add_special,
                 int32_t **ids, int *n);

int cmd_generate(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_logits(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_make_test_model(int argc, char **argv);

#endif
