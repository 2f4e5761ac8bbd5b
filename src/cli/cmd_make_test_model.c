/* cmd_make_test_model.c — `wick make-test-model`: write a deterministic
 * random-weight model of a real shape (see model/testmodel.h). */
#include "cli/cli.h"
#include "model/arch.h"
#include "cli/testmodel.h"

int cmd_make_test_model(int argc, char **argv) {
    test_model_params p = {.arch = NULL, .format = "gguf", .shape = "tiny", .dtype = "f32", .seed = 1};
    const cli_opt opts[] = {
        {"--arch", NULL, OPT_STR, &p.arch, NULL},
        {"--format", NULL, OPT_STR, &p.format, NULL},
        {"--out", "-o", OPT_STR, &p.out, NULL},
        {"--shape", NULL, OPT_STR, &p.shape, NULL},
        {"--dtype", NULL, OPT_STR, &p.dtype, NULL},
        {"--seed", NULL, OPT_U64, &p.seed, NULL},
        {"--tokenizer", NULL, OPT_STR, &p.tokenizer_dir, NULL},
        {"--rope-scaling", NULL, OPT_STR, &p.rope_scaling, NULL},
        {"--split-experts", NULL, OPT_FLAG, &p.split_experts, NULL},
        {"--mlp-only-layers", NULL, OPT_STR, &p.mlp_only_layers, NULL},
    };
    const int prc = cli_parse("make-test-model", argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (prc) return prc < 0;
    if (!p.arch) return cli_error("make-test-model: --arch is required (%s)", arch_list());
    if (!p.out) return cli_error("make-test-model: --out is required");
    wick_error err;
    if (make_test_model(&p, &err) < 0) return cli_error("%s", err.msg);
    return 0;
}
