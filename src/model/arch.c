/* arch.c — the architecture and tensor-name tables (see arch.h). */
#include "model/arch.h"

#include <stdio.h>
#include <string.h>

/* Qwen: HF Qwen2MoeSparseMoeBlock / Qwen3MoeSparseMoeBlock (softmax, top-k,
 * optional renormalization by config norm_topk_prob); llama.cpp renormalizes
 * qwen3moe and not qwen2moe. Mixtral: top-k of the logits, softmax over them. */
static const moe_desc MOE_QWEN2 = {
    .gating = MOE_SOFTMAX_TOPK,
    .norm_topk_gguf = false,
    .shared_expert = true,
    .hf_count_key = "num_experts",
    .hf_ff_key = "moe_intermediate_size",
    .hf_router = "model.layers.%d.mlp.gate.weight",
    .hf_expert = {"model.layers.%d.mlp.experts.%d.gate_proj.weight", "model.layers.%d.mlp.experts.%d.up_proj.weight",
                  "model.layers.%d.mlp.experts.%d.down_proj.weight"},
};
static const moe_desc MOE_QWEN3 = {
    .gating = MOE_SOFTMAX_TOPK,
    .norm_topk_gguf = true,
    .hf_count_key = "num_experts",
    .hf_ff_key = "moe_intermediate_size",
    .hf_router = "model.layers.%d.mlp.gate.weight",
    .hf_expert = {"model.layers.%d.mlp.experts.%d.gate_proj.weight", "model.layers.%d.mlp.experts.%d.up_proj.weight",
                  "model.layers.%d.mlp.experts.%d.down_proj.weight"},
};
static const moe_desc MOE_MIXTRAL = {
    .gating = MOE_TOPK_SOFTMAX,
    .norm_topk_gguf = true,
    .hf_count_key = "num_local_experts",
    .hf_router = "model.layers.%d.block_sparse_moe.gate.weight",
    .hf_expert = {"model.layers.%d.block_sparse_moe.experts.%d.w1.weight",
                  "model.layers.%d.block_sparse_moe.experts.%d.w3.weight",
                  "model.layers.%d.block_sparse_moe.experts.%d.w2.weight"},
};

static const arch_desc ARCHS[] = {
    {.name = "llama",
     .gguf_arch = "llama",
     .gguf_names = {"llama"},
     .hf_model_types = {"llama"},
     .hf_class = "LlamaForCausalLM",
     .rope_gguf = ROPE_INTERLEAVED,
     .rope_hf = ROPE_HALVES,
     .moe_variant = "mixtral"},
    /* llama.cpp stores Mistral 7B-style models as general.architecture "llama". */
    {.name = "mistral",
     .gguf_arch = "llama",
     .gguf_names = {"mistral"},
     .hf_model_types = {"mistral"},
     .hf_class = "MistralForCausalLM",
     .rope_gguf = ROPE_INTERLEAVED,
     .rope_hf = ROPE_HALVES},
    {.name = "qwen2",
     .gguf_arch = "qwen2",
     .gguf_names = {"qwen2"},
     .hf_model_types = {"qwen2"},
     .hf_class = "Qwen2ForCausalLM",
     .qkv_bias = true,
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES},
    {.name = "qwen3",
     .gguf_arch = "qwen3",
     .gguf_names = {"qwen3"},
     .hf_model_types = {"qwen3"},
     .hf_class = "Qwen3ForCausalLM",
     .qk_norm = true,
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES},
    {.name = "qwen2moe",
     .gguf_arch = "qwen2moe",
     .gguf_names = {"qwen2moe"},
     .hf_model_types = {"qwen2_moe"},
     .hf_class = "Qwen2MoeForCausalLM",
     .qkv_bias = true,
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES,
     .moe = &MOE_QWEN2},
    {.name = "qwen3moe",
     .gguf_arch = "qwen3moe",
     .gguf_names = {"qwen3moe"},
     .hf_model_types = {"qwen3_moe"},
     .hf_class = "Qwen3MoeForCausalLM",
     .qk_norm = true,
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES,
     .moe = &MOE_QWEN3},
    /* llama.cpp stores Mixtral as general.architecture "llama" with experts
     * (llama's moe_variant). */
    {.name = "mixtral",
     .gguf_arch = "llama",
     .hf_model_types = {"mixtral"},
     .hf_class = "MixtralForCausalLM",
     .rope_gguf = ROPE_INTERLEAVED,
     .rope_hf = ROPE_HALVES,
     .moe = &MOE_MIXTRAL},
};
#define N_ARCHS (sizeof ARCHS / sizeof ARCHS[0])

static bool in_list(const char *const *list, int n, const char *s) {
    for (int i = 0; i < n; i++)
        if (list[i] && strcmp(list[i], s) == 0) return true;
    return false;
}

const arch_desc *arch_by_name(const char *name) {
    for (size_t i = 0; i < N_ARCHS; i++)
        if (strcmp(ARCHS[i].name, name) == 0) return &ARCHS[i];
    return NULL;
}

const arch_desc *arch_by_gguf(const char *gguf_arch) {
    for (size_t i = 0; i < N_ARCHS; i++)
        if (in_list(ARCHS[i].gguf_names, 3, gguf_arch)) return &ARCHS[i];
    return NULL;
}

const arch_desc *arch_by_hf(const char *model_type) {
    for (size_t i = 0; i < N_ARCHS; i++)
        if (in_list(ARCHS[i].hf_model_types, 3, model_type)) return &ARCHS[i];
    return NULL;
}

const char *arch_list(void) { return "llama, mistral, qwen2, qwen3, qwen2moe, qwen3moe, mixtral"; }

/* {GGUF name, HF name}; per-layer names take the layer number. */
static const char *const NAMES[T_ROLE_COUNT][2] = {
    [T_TOK_EMBD] = {"token_embd.weight", "model.embed_tokens.weight"},
    [T_OUTPUT_NORM] = {"output_norm.weight", "model.norm.weight"},
    [T_OUTPUT] = {"output.weight", "lm_head.weight"},
    [T_ROPE_FREQS] = {"rope_freqs.weight", NULL},
    [T_ATTN_NORM] = {"blk.%d.attn_norm.weight", "model.layers.%d.input_layernorm.weight"},
    [T_ATTN_Q] = {"blk.%d.attn_q.weight", "model.layers.%d.self_attn.q_proj.weight"},
    [T_ATTN_K] = {"blk.%d.attn_k.weight", "model.layers.%d.self_attn.k_proj.weight"},
    [T_ATTN_V] = {"blk.%d.attn_v.weight", "model.layers.%d.self_attn.v_proj.weight"},
    [T_ATTN_O] = {"blk.%d.attn_output.weight", "model.layers.%d.self_attn.o_proj.weight"},
    [T_ATTN_Q_BIAS] = {"blk.%d.attn_q.bias", "model.layers.%d.self_attn.q_proj.bias"},
    [T_ATTN_K_BIAS] = {"blk.%d.attn_k.bias", "model.layers.%d.self_attn.k_proj.bias"},
    [T_ATTN_V_BIAS] = {"blk.%d.attn_v.bias", "model.layers.%d.self_attn.v_proj.bias"},
    [T_ATTN_Q_NORM] = {"blk.%d.attn_q_norm.weight", "model.layers.%d.self_attn.q_norm.weight"},
    [T_ATTN_K_NORM] = {"blk.%d.attn_k_norm.weight", "model.layers.%d.self_attn.k_norm.weight"},
    [T_FFN_NORM] = {"blk.%d.ffn_norm.weight", "model.layers.%d.post_attention_layernorm.weight"},
    [T_FFN_GATE] = {"blk.%d.ffn_gate.weight", "model.layers.%d.mlp.gate_proj.weight"},
    [T_FFN_UP] = {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.up_proj.weight"},
    [T_FFN_DOWN] = {"blk.%d.ffn_down.weight", "model.layers.%d.mlp.down_proj.weight"},
};

bool tensor_name(char *buf, int cap, model_format fmt, tensor_role role, int layer) {
    const char *pat = NAMES[role][fmt];
    if (!pat) return false;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (role >= T_FIRST_LAYER_ROLE)
        snprintf(buf, (size_t)cap, pat, layer);
    else
        snprintf(buf, (size_t)cap, "%s", pat);
#pragma GCC diagnostic pop
    return true;
}

/* GGUF names of the mixture-of-experts roles (llama.cpp's), from T_FFN_GATE_INP on;
 * the per-expert roles take the layer, then the expert. */
static const char *const MOE_GGUF_NAMES[T_ROLE_COUNT - T_FFN_GATE_INP] = {
    [T_FFN_GATE_INP - T_FFN_GATE_INP] = "blk.%d.ffn_gate_inp.weight",
    [T_FFN_GATE_EXPS - T_FFN_GATE_INP] = "blk.%d.ffn_gate_exps.weight",
    [T_FFN_UP_EXPS - T_FFN_GATE_INP] = "blk.%d.ffn_up_exps.weight",
    [T_FFN_DOWN_EXPS - T_FFN_GATE_INP] = "blk.%d.ffn_down_exps.weight",
    [T_FFN_GATE_EXP - T_FFN_GATE_INP] = "blk.%d.ffn_gate.%d.weight",
    [T_FFN_UP_EXP - T_FFN_GATE_INP] = "blk.%d.ffn_up.%d.weight",
    [T_FFN_DOWN_EXP - T_FFN_GATE_INP] = "blk.%d.ffn_down.%d.weight",
    [T_FFN_GATE_INP_SHEXP - T_FFN_GATE_INP] = "blk.%d.ffn_gate_inp_shexp.weight",
    [T_FFN_GATE_SHEXP - T_FFN_GATE_INP] = "blk.%d.ffn_gate_shexp.weight",
    [T_FFN_UP_SHEXP - T_FFN_GATE_INP] = "blk.%d.ffn_up_shexp.weight",
    [T_FFN_DOWN_SHEXP - T_FFN_GATE_INP] = "blk.%d.ffn_down_shexp.weight",
};

/* HF names of the shared expert (qwen2moe's Qwen2MoeSparseMoeBlock). */
static const char *const MOE_HF_SHARED[4] = {
    "model.layers.%d.mlp.shared_expert_gate.weight", "model.layers.%d.mlp.shared_expert.gate_proj.weight",
    "model.layers.%d.mlp.shared_expert.up_proj.weight", "model.layers.%d.mlp.shared_expert.down_proj.weight"};

bool moe_tensor_name(char *buf, int cap, const arch_desc *arch, model_format fmt, tensor_role role, int layer,
                     int expert) {
    if (role < T_FFN_GATE_INP || role >= T_ROLE_COUNT) return false;
    const char *pat = NULL;
    if (fmt == FORMAT_GGUF) {
        pat = MOE_GGUF_NAMES[role - T_FFN_GATE_INP];
    } else if (arch && arch->moe) {
        if (role == T_FFN_GATE_INP) pat = arch->moe->hf_router;
        else if (role >= T_FFN_GATE_EXP && role <= T_FFN_DOWN_EXP) pat = arch->moe->hf_expert[role - T_FFN_GATE_EXP];
        else if (role >= T_FFN_GATE_INP_SHEXP && arch->moe->shared_expert) pat = MOE_HF_SHARED[role - T_FFN_GATE_INP_SHEXP];
    }
    if (!pat) return false;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (role >= T_FFN_GATE_EXP && role <= T_FFN_DOWN_EXP)
        snprintf(buf, (size_t)cap, pat, layer, expert);
    else
        snprintf(buf, (size_t)cap, pat, layer);
#pragma GCC diagnostic pop
    return true;
}
