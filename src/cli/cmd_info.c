/* cmd_info.c — `wick info`: architecture, hyperparameters, tensor types,
 * tokenizer and chat template of a model. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_info(int argc, char **argv) {
    const char *model = NULL, *dtype = NULL;
    bool tensors = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--tensors", NULL, OPT_FLAG, &tensors, NULL},
        {"--dtype", NULL, OPT_STR, &dtype, NULL},
    };
    if (cli_parse("info", argc, argv, opts, sizeof opts / sizeof opts[0]) < 0) return 1;
    if (!model) model = cli_default_model();
    wick_model *m = cli_load_model_dtype("info", model, dtype);
    if (!m) return 1;
    wick_model_info i;
    wick_model_get_info(m, &i);
    printf("model:            %s\n", model);
    printf("format:           %s\n", i.format);
    printf("architecture:     %s\n", i.arch);
    printf("parameters:       %lld (%.1f M), %.1f MiB of weights\n", (long long)i.n_params,
           i.n_params / 1e6, i.weight_bytes / 1048576.0);
    printf("vocab:            %d\n", i.n_vocab);
    printf("hidden:           %d\n", i.n_embd);
    printf("layers:           %d\n", i.n_layer);
    printf("heads:            %d (kv %d, head_dim %d)\n", i.n_head, i.n_head_kv, i.head_dim);
    printf("ffn:              %d\n", i.n_ff);
    if (i.n_expert) {
        printf("experts:          %d, %d per token, expert ffn %d", i.n_expert, i.n_expert_used, i.n_ff_exp);
        if (i.n_ff_shexp) printf(", shared expert ffn %d", i.n_ff_shexp);
        printf(" (%d of %d layers)\n", i.n_moe_layers, i.n_layer);
        printf("active weights:   %.1f MiB read per decode token\n", i.decode_bytes / 1048576.0);
    }
    printf("context (train):  %d\n", i.n_ctx_train);
    printf("rms_norm_eps:     %g\n", i.rms_eps);
    printf("rope:             theta %g, scaling %s", i.rope_theta, i.rope_scaling);
    if (strcmp(i.rope_scaling, "none") != 0) printf(" (factor %g)", i.rope_factor);
    printf("\n");
    printf("tied embeddings:  %s\n", i.tied_embeddings ? "yes" : "no");
    printf("qkv bias:         %s\n", i.qkv_bias ? "yes" : "no");
    printf("q/k norm:         %s\n", i.qk_norm ? "yes" : "no");
    if (i.sliding_window) printf("sliding window:   %d\n", i.sliding_window);

    /* Tensor types: a count per type, then every tensor with --tensors. */
    int n = wick_model_n_tensors(m);
    const char *types[16];
    int counts[16], n_types = 0;
    for (int t = 0; t < n; t++) {
        const char *name, *type;
        int nd;
        int64_t ne[4];
        wick_model_tensor(m, t, &name, &type, &nd, ne);
        int k = 0;
        while (k < n_types && strcmp(types[k], type) != 0) k++;
        if (k == n_types && n_types < 16) {
            types[n_types] = type;
            counts[n_types++] = 0;
        }
        if (k < 16) counts[k]++;
    }
    printf("tensors:          %d (", n);
    for (int k = 0; k < n_types; k++) printf(k ? ", %d %s" : "%d %s", counts[k], types[k]);
    printf(")");
    if (i.converted_to) printf(" (matrices converted to %s at load)", i.converted_to);
    printf("\n");
    printf("tokenizer:        %s, %d tokens, bos %d, eos %d, adds bos: %s\n", i.tokenizer_kind,
           i.tokenizer_vocab, i.bos, i.eos, i.add_bos ? "yes" : "no");
    printf("chat template:    %s\n", i.has_chat_template ? "yes" : "no");
    if (tensors) {
        for (int t = 0; t < n; t++) {
            const char *name, *type;
            int nd;
            int64_t ne[4];
            wick_model_tensor(m, t, &name, &type, &nd, ne);
            printf("  %-48s %-5s [", name, type);
            for (int d = nd - 1; d >= 0; d--) printf(d == nd - 1 ? "%lld" : ", %lld", (long long)ne[d]);
            printf("]\n");
        }
    }
    wick_model_free(m);
    return 0;
}
