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
 * one line and return -1. --help or -h (where no option of that name is in
 * opts) prints the command's usage (cli_usage) and returns CLI_HELP: a
 * command then exits with `return rc < 0;` (status 0 after --help). */
#define CLI_HELP 1
int cli_parse(const char *cmd, int argc, char **argv, const cli_opt *opts, int n_opts);
/* The same, for commands that also take positional arguments (any argument
 * that is not an option or an option's value): up to max_pos of them go to
 * pos[] (*n_pos set); one more is an error. */
int cli_parse_positional(const char *cmd, int argc, char **argv, const cli_opt *opts, int n_opts, const char **pos,
                         int max_pos, int *n_pos);

/* The text of `wick help` (usage.c). */
const char *cli_help_text(void);
/* Print cmd's usage to stdout: "usage: wick <cmd> <arguments>", then the
 * lines that describe it (its part of the help text); -1 if cmd has none. */
int cli_usage(const char *cmd);

/* Print "wick: error: <msg>" to stderr and return 1 (the exit status). */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The prompt from -p TEXT or -f FILE (malloc'd); NULL after printing an error. */
char *cli_prompt(const char *cmd, const char *text, const char *file, size_t *len);

/* Read the file at path and call fn(ctx, line, len, line_no) for each line in
 * turn, stopping at the first non-zero return: line_no counts from 1, line is
 * the line without its '\n' (a '\r' before it is kept), NUL-terminated at
 * len, and fn may change it. Returns fn's non-zero value, 0 after the last
 * line, or 1 after printing the error when the file cannot be read. The
 * `--jsonl FILE` inputs of tokenize and detokenize. */
typedef int cli_line_fn(void *ctx, char *line, size_t len, size_t line_no);
int cli_each_line(const char *path, cli_line_fn *fn, void *ctx);

/* The model a command uses without -m: $WICK_MODEL, else the built-in demo
 * model (stories260K, in models/ beside the binary's folder or in the working
 * directory); NULL if none. */
const char *cli_default_model(void);
/* Load a model (path NULL = cli_default_model()) or print the error; NULL on failure. */
wick_model *cli_load_model(const char *cmd, const char *path);
/* The same, converting the matrices to dtype at load ("q8_0", ...; NULL =
 * env WICK_DTYPE, else as stored). cli_load_model honors WICK_DTYPE too. */
wick_model *cli_load_model_dtype(const char *cmd, const char *path, const char *dtype);
/* The --dtype given, else env WICK_DTYPE; NULL = the weights as stored. */
const char *cli_dtype(const char *given);
struct cJSON;
/* Print a JSON value on one line of stdout (--json), then free it. */
void cli_print_json(struct cJSON *o);
/* WICK_PROFILE=1: print the context's per-op times to stderr (profile.c). */
void cli_print_profile(wick_context *c, double sampling_ms, int n_sampled);
/* "f32"/"f16" → wick_context_params.kv_type; -1 (after printing) if neither. */
int cli_kv_type(const char *cmd, const char *name);
/* Median and sample standard deviation of v[0, n) (v is not reordered); zeros for n = 0. */
typedef struct cli_stat {
    double med, sd;
} cli_stat;
cli_stat cli_stats(const double *v, int n);

/* One request run to its end on a scheduler of its own over a context (the
 * benchmarks' requests). r->user must point at a struct whose first member
 * is a cli_done: cli_run_request sets r->on_done to fill it (on_token and
 * on_logits keep the same user). 0, or -1 after printing "bench: <error>". */
typedef struct cli_done {
    bool done;
    wick_request_result res; /* error and tail are not kept */
    char error[256];         /* the request's error, "" if none */
} cli_done;
int cli_run_request(wick_context *c, wick_request *r);

/* `wick bench --prefix-cache` (bench_prefix.c): cold / warm / restarted TTFT
 * of a request sharing an n_prefix-token prefix; 0, or 1 after printing an error. */
int bench_prefix_cache(wick_model *m, int n_prefix, int n_suffix, int threads, int repeats, int kv_type,
                       const char *cache_dir, bool json);
/* `wick bench --spans` (bench_spans.c): spnl's span-cache protocol per document size. */
int bench_spans(wick_model *m, const char *sizes, int threads, int kv_type, int ctx, bool json);
/* `wick bench --span-quality` (bench_span_quality.c): each span mode against an ordinary prefill. */
int bench_span_quality(wick_model *m, int trials, int n_docs, int doc_tokens, int n_gen, int threads, bool json);

/* `wick bench --draft/--draft-layers/--lookup` and `--verify-cost` (bench_spec.c). */
int bench_spec(wick_model *m, const wick_spec_params *spec, const char *prompt, int n_gen, float temp, int threads,
               int repeats, bool json);
int bench_verify_cost(wick_model *m, int depth, int threads, int repeats, bool json);

/* Options every command that runs a model shares (runtime.c): -t, --ctx,
 * --prefill-chunk (else env WICK_PREFILL_CHUNK), --kv-type, --dtype (else
 * env WICK_DTYPE). */
typedef struct cli_runtime {
    int threads, ctx, chunk;
    bool chunk_set;
    const char *kv_type, *dtype;
    bool no_span_cache; /* set by commands that take --no-span-cache */
} cli_runtime;

void cli_runtime_init(cli_runtime *r);
/* Append the options to opts (which has room) after n entries; returns the new count. */
int cli_runtime_opts(cli_opt *opts, int n, cli_runtime *r);
/* After parsing: validate and apply the environment. -1 after printing. */
int cli_runtime_check(const char *cmd, cli_runtime *r);
wick_model *cli_runtime_model(const char *cmd, const char *path, const cli_runtime *r);
wick_context *cli_runtime_context(wick_model *m, const cli_runtime *r);

/* Tokenize with BOS as the model adds it; *ids malloc'd. -1 after printing. */
int cli_tokenize(const wick_model *m, const char *text, size_t len, bool add_special,
                 int32_t **ids, int *n);

/* Sampling flags shared by generate and chat: the library defaults, then the
 * model's generation_config.json, then the flags given. */
typedef struct cli_sampling {
    wick_sampling v;
    bool temp, top_k, top_p, min_p, rep, rep_n, pres, freq, seed;
} cli_sampling;

void cli_sampling_init(cli_sampling *s);
/* Append the sampling options to opts (which has room) after n entries; returns the new count. */
int cli_sampling_opts(cli_opt *opts, int n, cli_sampling *s);
int cli_sampling_check(const char *cmd, const cli_sampling *s);
void cli_sampling_apply_model(cli_sampling *s, const wick_model *m);

/* Load a tokenizer on its own (model or vocab-only GGUF, model or tokenizer-only
 * directory) or print the error; NULL on failure. */
wick_tokenizer *cli_load_tokenizer(const char *cmd, const char *path);

/* When n > 0, print the one warning line
 * "wick: warning: input has N invalid UTF-8 bytes; replaced with U+FFFD". */
void cli_warn_invalid_utf8(int n);

int cmd_generate(int argc, char **argv);
int cmd_grammar(int argc, char **argv);
int cmd_chat(int argc, char **argv);
int cmd_tokenize(int argc, char **argv);
int cmd_detokenize(int argc, char **argv);
int cmd_logits(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_make_test_model(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_template(int argc, char **argv);

#endif
