/* spec_args.c — parsing and checking the speculative-decoding flags (see spec_args.h). */
#include "cli/spec_args.h"

#include <string.h>

#include "core/error.h"
#include "engine/draft.h"

int cli_spec_opts(cli_opt *opts, int n, cli_spec_args *a) {
    memset(a, 0, sizeof *a);
    a->draft_layers = a->lookup = a->draft_max = -1;
    const cli_opt add[] = {
        {"--draft", NULL, OPT_STR, &a->draft, NULL},
        {"--draft-layers", NULL, OPT_INT, &a->draft_layers, NULL},
        {"--lookup", NULL, OPT_INT, &a->lookup, NULL},
        {"--draft-max", NULL, OPT_INT, &a->draft_max, NULL},
    };
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) opts[n++] = add[i];
    return n;
}

bool cli_spec_given(const cli_spec_args *a) { return a->draft || a->draft_layers >= 0 || a->lookup >= 0; }

int cli_spec_check(const char *cmd, cli_spec_args *a) {
    memset(&a->v, 0, sizeof a->v);
    const int n_given = (a->draft != NULL) + (a->draft_layers >= 0) + (a->lookup >= 0);
    if (n_given > 1) return cli_error("%s: --draft, --draft-layers and --lookup pick one drafter; give one", cmd), -1;
    if (a->draft_max != -1 && (a->draft_max < 1 || a->draft_max > WICK_DRAFT_MAX_LIMIT))
        return cli_error("%s: --draft-max must be in [1, %d], not %d", cmd, WICK_DRAFT_MAX_LIMIT, a->draft_max), -1;
    if (a->draft_layers >= 0 && a->draft_layers < 1)
        return cli_error("%s: --draft-layers must be at least 1, not %d", cmd, a->draft_layers), -1;
    if (a->lookup >= 0 && (a->lookup < 1 || a->lookup > 64))
        return cli_error("%s: --lookup must be in [1, 64], not %d", cmd, a->lookup), -1;
    a->v.draft_layers = a->draft_layers > 0 ? a->draft_layers : 0;
    a->v.lookup = a->lookup > 0 ? a->lookup : 0;
    a->v.draft_max = a->draft_max > 0 ? a->draft_max : 0;
    return 0;
}

int cli_spec_build(const char *cmd, cli_spec_args *a, wick_model *target, const char *dtype) {
    if (cli_spec_check(cmd, a) < 0) return -1;
    if (a->draft_max != -1 && !cli_spec_given(a))
        return cli_error("%s: --draft-max needs a drafter (--draft, --draft-layers or --lookup)", cmd), -1;
    wick_model_info info;
    wick_model_get_info(target, &info);
    if (a->draft_layers >= info.n_layer)
        return cli_error("%s: --draft-layers must be in [1, %d) for this %d-layer model, not %d", cmd, info.n_layer,
                         info.n_layer, a->draft_layers), -1;
    if (a->draft) {
        if (!(a->draft_model = cli_load_model_dtype(cmd, a->draft, dtype))) return -1;
        wick_error err;
        if (draft_check_vocab(target, a->draft_model, &err) < 0)
            return cli_error("%s: --draft %s: %s", cmd, a->draft, err.msg), -1;
    }
    a->v.draft_model = a->draft_model;
    return 0;
}

void cli_spec_free(cli_spec_args *a) {
    wick_model_free(a->draft_model);
    a->draft_model = NULL;
    a->v.draft_model = NULL;
}
