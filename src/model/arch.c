/* arch.c — the architecture and tensor-name tables (see arch.h). */
#include "model/arch.h"

#include <stdio.h>
#include <string.h>

static const arch_desc ARCHS[] = {
    {.name = "llama",
     .gguf_arch = "llama",
     .gguf_names = {"llama"},
     .hf_model_types = {"llama"},
     .hf_class = "LlamaForCausalLM",
     .rope_gguf = ROPE_INTERLEAVED,
     .rope_hf = ROPE_HALVES},
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

const char *arch_list(void) { return "llama, mistral, qwen2, qwen3"; }

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
