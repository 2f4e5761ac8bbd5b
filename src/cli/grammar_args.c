/* grammar_args.c — parsing, checking and compiling the structured-output
 * flags (see grammar_args.h). */
#include "cli/grammar_args.h"

#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"

int cli_grammar_opts(cli_opt *opts, int n, cli_grammar_args *a) {
    memset(a, 0, sizeof *a);
    const cli_opt add[] = {
        {"--json-schema", NULL, OPT_STR, &a->schema_file, NULL},
        {"--grammar", NULL, OPT_STR, &a->gbnf_file, NULL},
        {"--regex", NULL, OPT_STR, &a->regex, NULL},
        {"--choice", NULL, OPT_LIST, &a->choices, NULL},
        {"--json-object", NULL, OPT_FLAG, &a->json_object, NULL},
        {"--json-ws", NULL, OPT_FLAG, &a->flexible_ws, NULL},
        {"--strict", NULL, OPT_FLAG, &a->strict, NULL},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) opts[n++] = add[i];
    return n;
}

bool cli_grammar_given(const cli_grammar_args *a) {
    return a->schema_file || a->gbnf_file || a->regex || a->choices.n > 0 || a->json_object;
}

int cli_grammar_check(const char *cmd, const cli_grammar_args *a) {
    const int n = (a->schema_file != NULL) + (a->gbnf_file != NULL) + (a->regex != NULL) + (a->choices.n > 0) + a->json_object;
    if (n > 1)
        return cli_error("%s: --json-schema, --grammar, --regex, --choice and --json-object each give the whole grammar; give one", cmd), -1;
    if (a->flexible_ws && !a->schema_file && !a->json_object)
        return cli_error("%s: --json-ws needs --json-schema or --json-object", cmd), -1;
    if (a->strict && !a->schema_file) return cli_error("%s: --strict needs --json-schema", cmd), -1;
    return 0;
}

int cli_grammar_build(const char *cmd, cli_grammar_args *a, const wick_model *m) {
    if (!cli_grammar_given(a)) return 0;
    wick_grammar_spec sp = {.strict = a->strict, .flexible_ws = a->flexible_ws};
    char *text = NULL;
    const char *file = a->schema_file ? a->schema_file : a->gbnf_file;
    wick_error err;
    if (file) {
        if (!(text = file_read_all(file, &sp.len, &err))) return cli_error("%s: %s", cmd, err.msg), -1;
        if (!sp.len) {
            free(text);
            return cli_error("%s: %s is empty", cmd, file), -1;
        }
        sp.kind = a->schema_file ? WICK_GRAMMAR_JSON_SCHEMA : WICK_GRAMMAR_GBNF;
        sp.text = text;
    } else if (a->regex) {
        sp.kind = WICK_GRAMMAR_REGEX;
        sp.text = a->regex;
        sp.len = strlen(a->regex);
        if (!sp.len) return cli_error("%s: --regex needs a pattern", cmd), -1;
    } else if (a->choices.n) {
        sp.kind = WICK_GRAMMAR_CHOICE;
        sp.choices = a->choices.v;
        sp.n_choices = a->choices.n;
    } else {
        sp.kind = WICK_GRAMMAR_JSON;
    }
    a->g = wick_grammar_compile(m, &sp, &err);
    free(text);
    if (!a->g) return cli_error("%s: %s (%s)", cmd, err.msg, file ? file : a->regex ? "--regex" : a->choices.n ? "--choice" : "--json-object"), -1;
    return 0;
}

void cli_grammar_free(cli_grammar_args *a) {
    wick_grammar_free(a->g);
    a->g = NULL;
}
