/* test_arch.c — the architecture table and the features' hyperparameters
 * (src/model/arch.c, arch_hparams.c): names resolve both ways, per-arch
 * tensor-name overrides, which layers slide, and what the keys of config.json
 * and GGUF files (and their absence, and HF's null) turn into. The logits of
 * the features are checked against the NumPy reference (reference.test.sh)
 * and llama.cpp (llamacpp_gguf.test.sh). */
#include <cJSON.h>
#include <unistd.h>

#include "check.h"
#include "core/error.h"
#include "format/gguf.h"
#include "model/arch.h"
#include "model/arch_hparams.h"
#include "model/hparams.h"
#include "cli/testmodel.h"
#include "wick.h"

static void table(void) {
    /* every listed arch resolves by its name, its GGUF name and its HF model types */
    char list[256];
    snprintf(list, sizeof list, "%s", arch_list());
    int n = 0;
    for (char *tok = strtok(list, ", "); tok; tok = strtok(NULL, ", "), n++) {
        const arch_desc *a = arch_by_name(tok);
        CHECK_MSG(a != NULL, "arch_list names \"%s\", which arch_by_name does not know", tok);
        if (!a) continue;
        CHECK(arch_by_hf(a->hf_model_types[0]) == a);
        /* mistral and mixtral GGUF files say llama (mixtral: with experts) */
        if (strcmp(tok, "mistral") != 0 && strcmp(tok, "mixtral") != 0) CHECK(arch_by_gguf(a->gguf_arch) == a);
    }
    CHECK_INT(n, 11);
    CHECK(arch_by_hf("gemma3_text") == arch_by_name("gemma3"));
    CHECK(arch_by_hf("gemma3") == arch_by_name("gemma3")); /* the multimodal config */
    CHECK(arch_by_gguf("gemma") == NULL);                  /* Gemma 1 is not supported */

    /* Gemma's HF post_attention_layernorm is the attention's post-norm; Llama's the FFN norm */
    char name[128];
    const arch_desc *g2 = arch_by_name("gemma2"), *ll = arch_by_name("llama"), *phi = arch_by_name("phi3");
    CHECK(arch_tensor_name(ll, name, sizeof name, FORMAT_HF, T_FFN_NORM, 3));
    CHECK_STR(name, "model.layers.3.post_attention_layernorm.weight");
    CHECK(arch_tensor_name(g2, name, sizeof name, FORMAT_HF, T_FFN_NORM, 3));
    CHECK_STR(name, "model.layers.3.pre_feedforward_layernorm.weight");
    CHECK(arch_tensor_name(g2, name, sizeof name, FORMAT_HF, T_ATTN_POST_NORM, 3));
    CHECK_STR(name, "model.layers.3.post_attention_layernorm.weight");
    CHECK(arch_tensor_name(g2, name, sizeof name, FORMAT_GGUF, T_FFN_POST_NORM, 0));
    CHECK_STR(name, "blk.0.post_ffw_norm.weight");
    CHECK(!arch_tensor_name(ll, name, sizeof name, FORMAT_HF, T_ATTN_POST_NORM, 0)); /* no such tensor */
    CHECK(arch_tensor_name(phi, name, sizeof name, FORMAT_GGUF, T_FFN_GATE_UP, 7));
    CHECK_STR(name, "blk.7.ffn_up.weight");
    CHECK(arch_tensor_name(phi, name, sizeof name, FORMAT_HF, T_ATTN_QKV, 7));
    CHECK_STR(name, "model.layers.7.self_attn.qkv_proj.weight");
    CHECK(arch_tensor_name(phi, name, sizeof name, FORMAT_GGUF, T_ROPE_LONG, 7));
    CHECK_STR(name, "rope_factors_long.weight");
}

/* hparams from a config.json text for arch `a`, finished. 0 or -1 with err. */
static int from_hf(hparams *hp, const char *arch, const char *json, wick_error *err) {
    const arch_desc *a = arch_by_name(arch);
    cJSON *c = cJSON_Parse(json);
    if (!a || !c) return wick_fail(err, "bad test input");
    int rc = hparams_from_hf(hp, c, a->hf_model_types[0], err);
    if (rc == 0) rc = arch_hparams_hf(hp, a, c, err);
    if (rc == 0) rc = arch_hparams_finish(hp, a, FORMAT_HF, err);
    cJSON_Delete(c);
    return rc;
}

#define BASE "\"hidden_size\": 64, \"num_hidden_layers\": 26, \"intermediate_size\": 128, \"num_attention_heads\": 4, " \
             "\"head_dim\": 32"

static void hf_keys(void) {
    hparams hp;
    wick_error err = {0};
    /* Gemma 2: defaults (soft-caps 50 / 30, window 4096 on even layers, tied, sqrt(n_embd) embeddings) */
    CHECK_MSG(from_hf(&hp, "gemma2", "{" BASE "}", &err) == 0, "%s", err.msg);
    CHECK_NEAR(hp.attn_softcap, 50, 0);
    CHECK_NEAR(hp.final_softcap, 30, 0);
    CHECK_INT(hp.sliding_window, 4096);
    CHECK_INT(hparams_layer_window(&hp, 0), 4096);
    CHECK_INT(hparams_layer_window(&hp, 1), 0);
    CHECK(hp.tied);
    CHECK_NEAR(hp.embd_scale, 8, 0);
    CHECK_NEAR(hp.attn_scale, 1 / sqrt(32.0), 1e-7);
    /* null = off; query_pre_attn_scalar sets the scale; layer_types */
    CHECK_MSG(from_hf(&hp, "gemma2",
                      "{" BASE ", \"attn_logit_softcapping\": null, \"final_logit_softcapping\": 12.5, "
                      "\"query_pre_attn_scalar\": 144, \"tie_word_embeddings\": false, \"sliding_window\": 64, "
                      "\"layer_types\": [" /* 26 layers, a 3-period: s s f */
                      "\"sliding_attention\", \"sliding_attention\", \"full_attention\", \"sliding_attention\","
                      "\"sliding_attention\", \"full_attention\", \"sliding_attention\", \"sliding_attention\","
                      "\"full_attention\", \"sliding_attention\", \"sliding_attention\", \"full_attention\","
                      "\"sliding_attention\", \"sliding_attention\", \"full_attention\", \"sliding_attention\","
                      "\"sliding_attention\", \"full_attention\", \"sliding_attention\", \"sliding_attention\","
                      "\"full_attention\", \"sliding_attention\", \"sliding_attention\", \"full_attention\","
                      "\"sliding_attention\", \"sliding_attention\"]}",
                      &err) == 0,
              "%s", err.msg);
    CHECK_NEAR(hp.attn_softcap, 0, 0);
    CHECK_NEAR(hp.final_softcap, 12.5, 0);
    CHECK_NEAR(hp.attn_scale, 1 / 12.0, 1e-7);
    CHECK(!hp.tied);
    CHECK_INT(hp.swa_period, 3);
    CHECK_INT(hparams_layer_window(&hp, 2), 0);
    CHECK_INT(hparams_layer_window(&hp, 25), 64);
    /* Gemma 3: five sliding layers (local RoPE base) to one global */
    CHECK_MSG(from_hf(&hp, "gemma3", "{" BASE ", \"sliding_window\": 512, \"rope_theta\": 1000000}", &err) == 0, "%s",
              err.msg);
    CHECK_INT(hp.swa_period, 6);
    for (int il = 0; il < 26; il++) {
        const bool global = (il + 1) % 6 == 0;
        CHECK_MSG(hparams_layer_window(&hp, il) == (global ? 0 : 512), "gemma3 layer %d", il);
        CHECK_MSG(hparams_layer_rope_local(&hp, il) == !global, "gemma3 layer %d RoPE", il);
    }
    CHECK_NEAR(hp.rope_theta_local, 10000, 0);
    CHECK_NEAR(hp.attn_softcap + hp.final_softcap, 0, 0);
    /* Granite: the multipliers; logits are divided by logits_scaling */
    CHECK_MSG(from_hf(&hp, "granite",
                      "{" BASE ", \"embedding_multiplier\": 12, \"residual_multiplier\": 0.22, "
                      "\"attention_multiplier\": 0.0078125, \"logits_scaling\": 8}",
                      &err) == 0,
              "%s", err.msg);
    CHECK_NEAR(hp.embd_scale, 12, 0);
    CHECK_NEAR(hp.resid_scale, 0.22, 1e-7);
    CHECK_NEAR(hp.attn_scale, 0.0078125, 0);
    CHECK_NEAR(hp.logit_scale, 0.125, 0);
    CHECK_INT(hp.sliding_window, 0);
    /* Phi-3.5-style LongRoPE: the attention factor from the context ratio; partial rotation */
    CHECK_MSG(from_hf(&hp, "phi3",
                      "{" BASE ", \"max_position_embeddings\": 131072, \"original_max_position_embeddings\": 4096, "
                      "\"partial_rotary_factor\": 0.75, \"rope_scaling\": {\"type\": \"longrope\"}}",
                      &err) == 0,
              "%s", err.msg);
    CHECK(hp.rope_scaling == ROPE_SCALING_LONGROPE);
    CHECK_INT(hp.rope_orig_ctx, 4096);
    CHECK_INT(hp.rot_dim, 24);
    CHECK_NEAR(hp.rope_attn_factor, sqrt(1 + log(32.0) / log(4096.0)), 1e-6);
    /* the ones it refuses */
    CHECK(from_hf(&hp, "gemma2", "{" BASE ", \"final_logit_softcapping\": -3}", &err) < 0);
    CHECK(from_hf(&hp, "granite", "{" BASE ", \"logits_scaling\": 0}", &err) < 0);
    CHECK(from_hf(&hp, "gemma3", "{" BASE ", \"layer_types\": [\"full_attention\"]}", &err) < 0);
    CHECK(strstr(err.msg, "layer_types") != NULL);
}

/* GGUF: llama.cpp's keys, its defaults, and its query scale for Gemma 27B. */
static void gguf_keys(void) {
    char dir[] = "/tmp/wick-arch-XXXXXX";
    if (!mkdtemp(dir)) return;
    char path[300];
    snprintf(path, sizeof path, "%s/m.gguf", dir);
    static const struct {
        int n_layer;
        float scale; /* expected attention scale for n_embd 64, 4 heads, head_dim 32 */
    } CASES[] = {{26, 0.17677669f}, {46, 0.25f}}; /* 1/sqrt(32); 27B: 1/sqrt(64/4) */
    for (size_t i = 0; i < 2; i++) {
        gguf_writer *w = gguf_writer_new();
        gguf_set_str(w, "general.architecture", "gemma2");
        gguf_set_u32(w, "gemma2.embedding_length", 64);
        gguf_set_u32(w, "gemma2.block_count", (uint32_t)CASES[i].n_layer);
        gguf_set_u32(w, "gemma2.feed_forward_length", 128);
        gguf_set_u32(w, "gemma2.attention.head_count", 4);
        gguf_set_u32(w, "gemma2.attention.key_length", 32);
        gguf_set_f32(w, "gemma2.final_logit_softcapping", 7.5f);
        wick_error err = {0};
        CHECK_MSG(gguf_write(w, path, &err) == 0, "%s", err.msg);
        gguf_writer_free(w);
        gguf_file *f = gguf_open(path, &err);
        CHECK_MSG(f != NULL, "%s", err.msg);
        if (!f) continue;
        hparams hp;
        const arch_desc *a = arch_by_name("gemma2");
        CHECK(hparams_from_gguf(&hp, f, "gemma2", &err) == 0);
        CHECK(arch_hparams_gguf(&hp, a, f, "gemma2", &err) == 0);
        CHECK(arch_hparams_finish(&hp, a, FORMAT_GGUF, &err) == 0);
        CHECK_NEAR(hp.attn_scale, CASES[i].scale, 1e-7);
        CHECK_NEAR(hp.attn_softcap, 50, 0); /* llama.cpp's default */
        CHECK_NEAR(hp.final_softcap, 7.5, 0);
        CHECK_INT(hp.sliding_window, 4096);
        gguf_close(f);
    }
    unlink(path);
    rmdir(dir);
}

/* wick info's view of the test models. */
static void info(void) {
    char dir[] = "/tmp/wick-arch-XXXXXX";
    if (!mkdtemp(dir)) return;
    static const char *const ARCHS[] = {"granite", "gemma2", "gemma3", "phi3"};
    for (int i = 0; i < 4; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s.gguf", dir, ARCHS[i]);
        wick_error err;
        test_model_params p = {.arch = ARCHS[i], .format = "gguf", .shape = "tiny", .dtype = "q8_0", .seed = 5, .out = path};
        CHECK_MSG(make_test_model(&p, &err) == 0, "%s", err.msg);
        wick_model *m = wick_model_load(path, NULL, &err);
        CHECK_MSG(m != NULL, "%s", err.msg);
        if (!m) continue;
        wick_model_info mi;
        wick_model_get_info(m, &mi);
        CHECK_STR(mi.arch, ARCHS[i]);
        CHECK_STR(mi.ffn_act, i == 1 || i == 2 ? "gelu_tanh" : "silu");
        CHECK(mi.post_norms == (i == 1 || i == 2));
        CHECK(mi.fused_qkv == (i == 3));
        CHECK(mi.qk_norm == (i == 2));
        if (i == 0) CHECK_NEAR(mi.logit_scale, 0.4, 1e-7);
        if (i == 1) CHECK(mi.attn_softcap == 4.0f && mi.final_softcap == 20.0f && mi.sliding_period == 2);
        if (i == 2) CHECK(mi.sliding_period == 6 && mi.rope_theta_local == 10000.0f && mi.n_layer == 7);
        if (i == 3) CHECK(mi.sliding_window == 32 && mi.sliding_period == 0 && !mi.tied_embeddings);
        wick_model_free(m);
        unlink(path);
    }
    rmdir(dir);
}

int main(void) {
    RUN(table);
    RUN(hf_keys);
    RUN(gguf_keys);
    RUN(info);
    return check_summary("test_arch");
}
