/* main.c — the `wick` command: dispatch to one subcommand per file, `wick
 * help [COMMAND]` and `wick version` (also `wick --version`). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_serve(int argc, char **argv);    /* cmd_serve.c */
int cmd_quantize(int argc, char **argv); /* cmd_quantize.c */
int cmd_convert(int argc, char **argv);  /* cmd_quantize.c */

static int cmd_version(int argc, char **argv) {
    const int rc = cli_parse("version", argc, argv, NULL, 0);
    if (rc) return rc < 0;
    printf("wick %s (build %s)\n", wick_version(), wick_build());
    return 0;
}

static int cmd_help(int argc, char **argv);

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
} command;

static const command COMMANDS[] = {
    {"generate", cmd_generate}, {"chat", cmd_chat}, {"tokenize", cmd_tokenize}, {"detokenize", cmd_detokenize}, {"logits", cmd_logits},
    {"info", cmd_info},         {"make-test-model", cmd_make_test_model},
    {"bench", cmd_bench},
    {"template", cmd_template}, {"grammar", cmd_grammar},
    {"serve", cmd_serve},
    {"quantize", cmd_quantize}, {"convert", cmd_convert},
    {"version", cmd_version},   {"help", cmd_help},
};

static const command *find_command(const char *name) {
    for (size_t i = 0; i < sizeof COMMANDS / sizeof COMMANDS[0]; i++)
        if (strcmp(name, COMMANDS[i].name) == 0) return &COMMANDS[i];
    return NULL;
}

/* wick help [COMMAND]: the whole text, or COMMAND's usage as `wick COMMAND --help` gives it. */
static int cmd_help(int argc, char **argv) {
    if (argc > 2) return cli_error("help: unexpected argument \"%s\" (usage: wick help [COMMAND])", argv[2]);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) return cli_usage("help") < 0;
    if (argc == 2) {
        const command *c = find_command(argv[1]);
        if (!c) return cli_error("help: unknown command \"%s\" (see `wick help`)", argv[1]);
        char *args[] = {argv[1], "--help", NULL};
        return c->run(2, args);
    }
    fputs(cli_help_text(), stdout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(cli_help_text(), stdout);
        return 1;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) return cmd_help(1, argv + 1);
    if (strcmp(argv[1], "--version") == 0) return cmd_version(argc - 1, argv + 1);
    const command *c = find_command(argv[1]);
    if (!c) return cli_error("unknown command \"%s\" (see `wick help`)", argv[1]);
    return c->run(argc - 1, argv + 1);
}
