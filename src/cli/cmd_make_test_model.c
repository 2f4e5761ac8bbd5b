/* cmd_make_test_model.c — `wick make-test-model`: write a deterministic
 * random-weight model of a real shape (see cli/testmodel.h), or with --script
 * a model whose greedy output is given text (see cli/testmodel_script.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "model/arch.h"
#include "cli/testmodel.h"
#include "cli/testmodel_script.h"

#define MAX_SCRIPTS 16

/* The --script TEXT [--after TEXT] pairs, in order (an --after belongs to the
 * --script before it), taken out of argv; the other arguments go to rest[]
 * for cli_parse, each option with its value (opts says which take one). */
static int take_scripts(int argc, char **argv, const cli_opt *opts, int n_opts, char **rest, int *n_rest,
                        const char **scripts, const char **afters, int *n_scripts) {
    *n_rest = 0;
    *n_scripts = 0;
    rest[(*n_rest)++] = argv[0];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const bool is_script = !strcmp(a, "--script") || !strncmp(a, "--script=", 9);
        const bool is_after = !strcmp(a, "--after") || !strncmp(a, "--after=", 8);
        if (is_script || is_after) {
            const char *eq = strchr(a, '=');
            const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!v) return cli_error("make-test-model: %s needs a value", is_script ? "--script" : "--after");
            if (is_script) {
                if (*n_scripts == MAX_SCRIPTS) return cli_error("make-test-model: at most %d --script options", MAX_SCRIPTS);
                scripts[*n_scripts] = v;
                afters[(*n_scripts)++] = NULL;
            } else {
                if (*n_scripts == 0) return cli_error("make-test-model: --after comes after the --script it belongs to");
                if (afters[*n_scripts - 1]) return cli_error("make-test-model: one --after per --script");
                afters[*n_scripts - 1] = v;
            }
            continue;
        }
        rest[(*n_rest)++] = argv[i];
        for (int k = 0; k < n_opts; k++)
            if ((!strcmp(a, opts[k].name) || (opts[k].alias && !strcmp(a, opts[k].alias))) && opts[k].kind != OPT_FLAG &&
                i + 1 < argc) {
                rest[(*n_rest)++] = argv[++i];
                break;
            }
    }
    return 0;
}

int cmd_make_test_model(int argc, char **argv) {
    test_model_params p = {.arch = NULL, .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 1};
    bool shape_seen = false, other_seen = false;
    const cli_opt opts[] = {
        {"--arch", NULL, OPT_STR, &p.arch, NULL},
        {"--format", NULL, OPT_STR, &p.format, NULL},
        {"--out", "-o", OPT_STR, &p.out, NULL},
        {"--shape", NULL, OPT_STR, &p.shape, &shape_seen},
        {"--dtype", NULL, OPT_STR, &p.dtype, NULL},
        {"--seed", NULL, OPT_U64, &p.seed, NULL},
        {"--tokenizer", NULL, OPT_STR, &p.tokenizer_dir, NULL},
        {"--rope-scaling", NULL, OPT_STR, &p.rope_scaling, &other_seen},
        {"--split-experts", NULL, OPT_FLAG, &p.split_experts, &other_seen},
        {"--mlp-only-layers", NULL, OPT_STR, &p.mlp_only_layers, &other_seen},
    };
    const int n_opts = sizeof opts / sizeof opts[0];
    char **rest = malloc(((size_t)argc + 1) * sizeof *rest);
    if (!rest) return cli_error("out of memory");
    const char *scripts[MAX_SCRIPTS], *afters[MAX_SCRIPTS];
    int n_rest = 0, n_scripts = 0;
    int rc = take_scripts(argc, argv, opts, n_opts, rest, &n_rest, scripts, afters, &n_scripts);
    if (rc == 0) {
        const int prc = cli_parse("make-test-model", n_rest, rest, opts, n_opts);
        if (prc) rc = prc < 0 ? 1 : 0;
        else rc = -1; /* parsed: go on */
    }
    free(rest);
    if (rc >= 0) return rc;
    if (!p.arch) return cli_error("make-test-model: --arch is required (%s)", arch_list());
    if (!p.out) return cli_error("make-test-model: --out is required");
    wick_error err;
    if (n_scripts == 0) {
        if (make_test_model(&p, &err) < 0) return cli_error("%s", err.msg);
        return 0;
    }
    if (strcmp(p.format, "gguf") != 0) return cli_error("make-test-model: --script models are GGUF files (--format gguf)");
    if (shape_seen || other_seen)
        return cli_error("make-test-model: --script makes its own shape; --shape, --rope-scaling, --split-experts and "
                         "--mlp-only-layers do not apply");
    const script_model_params sp = {.arch = p.arch, .dtype = p.dtype, .tokenizer_dir = p.tokenizer_dir,
                                    .n_scripts = n_scripts, .scripts = scripts, .afters = afters, .out = p.out};
    script_model_info info;
    if (make_script_model(&sp, &info, &err) < 0) return cli_error("%s", err.msg);
    printf("%s: %d script%s, window %d tokens, %d codes, %d rules, n_embd %d, n_ff %d, %d heads, end token %d\n", p.out,
           n_scripts, n_scripts == 1 ? "" : "s", info.window, info.n_codes, info.n_rules, info.n_embd, info.n_ff,
           info.n_head, info.end);
    return 0;
}
