/* cmd_info.c — `wick info`: architecture, hyperparameters, tensor types,
 * tokenizer and chat template of a model; `--dump TENSOR` prints one tensor
 * of the file, dequantized, as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"
#include "format/gguf.h"
#include "format/safetensors.h"
#include "kernels/convert.h"

/* {"name", "type", "shape": [outer..., ne0], "values": [...]}: the tensor as
 * the file stores it (no --dtype, no repacking), every value dequantized to
 * f32 and printed with 9 significant digits (exact for f32). */
static int dump_tensor(const char *path, const char *name) {
    wick_error err;
    gguf_file *g = NULL;
    st_set *st = NULL;
    if (dir_exists(path)) st = st_open_dir(path, &err);
    else g = gguf_open(path, &err);
    if (!g && !st) return cli_error("%s", err.msg);
    const wick_tensor *t = g ? gguf_find_tensor(g, name) : st_find_tensor(st, name);
    int rc = 0;
    if (!t) {
        rc = cli_error("info: no tensor '%s' in %s", name, path);
    } else if (!dtype_supported(t->type)) {
        rc = cli_error("info: tensor '%s' has type %s, which wick cannot dequantize (%s)", name, t->type < 0 ? "(unknown)" : dtype_name(t->type), path);
    } else {
        const int64_t cols = t->ne[0], rows = t->ne[1] * t->ne[2] * t->ne[3];
        const size_t rb = dtype_row_bytes(t->type, cols);
        float *row = malloc((size_t)cols * sizeof *row);
        void *raw = malloc(rb ? rb : 1);
        if (!row || !raw) {
            rc = cli_error("info: out of memory");
        } else {
            printf("{\"name\":\"%s\",\"type\":\"%s\",\"shape\":[", name, dtype_name(t->type));
            for (int d = t->n_dims - 1; d >= 0; d--) printf(d == t->n_dims - 1 ? "%lld" : ",%lld", (long long)t->ne[d]);
            printf("],\"values\":[");
            for (int64_t r = 0; r < rows; r++) {
                memcpy(raw, (const char *)t->data + (size_t)r * rb, rb); /* safetensors data may be unaligned */
                dequantize_row(t->type, raw, row, cols);
                for (int64_t c = 0; c < cols; c++) printf(r == 0 && c == 0 ? "%.9g" : ",%.9g", row[c]);
            }
            printf("]}\n");
        }
        free(row);
        free(raw);
    }
    if (g) gguf_close(g);
    if (st) st_close(st);
    return rc;
}

int cmd_info(int argc, char **argv) {
    const char *model = NULL, *dtype = NULL, *dump = NULL;
    bool tensors = false;
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--tensors", NULL, OPT_FLAG, &tensors, NULL},
        {"--dtype", NULL, OPT_STR, &dtype, NULL},
        {"--dump", NULL, OPT_STR, &dump, NULL},
    };
    const int prc = cli_parse("info", argc, argv, opts, sizeof opts / sizeof opts[0]);
    if (prc) return prc < 0;
    if (!model) model = cli_default_model();
    if (dump) return model ? dump_tensor(model, dump) : cli_error("info: no model given (-m)");
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
    if (i.sliding_window) {
        printf("sliding window:   %d", i.sliding_window);
        if (i.sliding_period == 1) printf(" (no layer)");
        else if (i.sliding_period > 1) printf(" (layers i %% %d < %d)", i.sliding_period, i.sliding_period - 1);
        if (i.rope_theta_local > 0) printf(", RoPE theta %g there", i.rope_theta_local);
        printf("\n");
    }
    printf("ffn:              %s%s%s\n", strcmp(i.ffn_act, "silu") == 0 ? "SwiGLU" : "GeGLU (tanh GELU)",
           i.fused_qkv ? ", fused qkv / gate-up" : "", i.post_norms ? ", post-norms" : "");
    printf("attention scale:  %g", i.attn_scale);
    if (i.attn_softcap > 0) printf(", soft-cap %g", i.attn_softcap);
    printf("\n");
    if (i.embd_scale != 1.0f || i.resid_scale != 1.0f || i.logit_scale != 1.0f)
        printf("multipliers:      embeddings %g, residuals %g, logits %g\n", i.embd_scale, i.resid_scale, i.logit_scale);
    if (i.final_softcap > 0) printf("logit soft-cap:   %g\n", i.final_softcap);

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
