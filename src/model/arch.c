/* arch.c — the architecture and tensor-name tables (see arch.h). */
#include "model/arch.h"

#include <stdio.h>
#include <string.h>

/* Gemma's HF files name the norm before the FFN pre_feedforward_layernorm and
 * call the attention output's post-norm post_attention_layernorm (the name
 * Llama uses for its FFN norm). */
static const role_name GEMMA_NAMES[] = {
    {T_FFN_NORM, "blk.%d.ffn_norm.weight", "model.layers.%d.pre_feedforward_layernorm.weight"},
    {T_ATTN_POST_NORM, "blk.%d.post_attention_norm.weight", "model.layers.%d.post_attention_layernorm.weight"},
    {T_ROLE_COUNT, NULL, NULL},
};

/* Gemma3TextConfig's defaults (transformers), for the keys a Gemma 3
 * multimodal config's text_config may leave out. */
static const char GEMMA3_TEXT_DEFAULTS[] =
    "{\"model_type\": \"gemma3_text\", \"vocab_size\": 262208, \"hidden_size\": 2304, \"intermediate_size\": 9216,"
    " \"num_hidden_layers\": 26, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, \"head_dim\": 256,"
    " \"max_position_embeddings\": 131072, \"rms_norm_eps\": 1e-6, \"rope_theta\": 1000000.0,"
    " \"rope_local_base_freq\": 10000.0, \"query_pre_attn_scalar\": 256, \"sliding_window\": 4096,"
    " \"sliding_window_pattern\": 6, \"tie_word_embeddings\": true}";

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
    /* Granite: Llama with multipliers (embedding, residual, attention, logits:
     * hyperparameters, see hparams.h); llama.cpp's converter permutes q/k as for Llama. */
    {.name = "granite",
     .gguf_arch = "granite",
     .gguf_names = {"granite"},
     .hf_model_types = {"granite"},
     .hf_class = "GraniteForCausalLM",
     .rope_gguf = ROPE_INTERLEAVED,
     .rope_hf = ROPE_HALVES},
    /* Gemma 2: GeGLU, pre- and post-norms, soft-capped attention scores and
     * logits, a 4096-token window on even layers. Defaults as HF's Gemma2Config
     * and llama.cpp. */
    {.name = "gemma2",
     .gguf_arch = "gemma2",
     .gguf_names = {"gemma2"},
     .hf_model_types = {"gemma2"},
     .hf_class = "Gemma2ForCausalLM",
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES,
     .act = FFN_GELU_TANH,
     .post_norms = true,
     .hf_norm_plus_one = true,
     .embd_scale_sqrt = true,
     .hf_tied = true,
     .sliding_window = 4096,
     .swa_period = 2,
     .attn_softcap = 50.0f,
     .final_softcap = 30.0f,
     .gguf_scale_by_embd_layers = 46,
     .names = GEMMA_NAMES},
    /* Gemma 3 (text): Gemma 2 without soft-capping, with q/k norms; five
     * sliding layers (RoPE base 10000) to one global layer (rope_theta and
     * the config's scaling). */
    {.name = "gemma3",
     .gguf_arch = "gemma3",
     .gguf_names = {"gemma3"},
     .hf_model_types = {"gemma3_text", "gemma3"},
     .hf_multimodal_type = "gemma3",
     .hf_text_defaults = GEMMA3_TEXT_DEFAULTS,
     .hf_class = "Gemma3ForCausalLM",
     .qk_norm = true,
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES,
     .act = FFN_GELU_TANH,
     .post_norms = true,
     .hf_norm_plus_one = true,
     .embd_scale_sqrt = true,
     .hf_tied = true,
     .sliding_window = 4096,
     .swa_period = 6,
     .rope_theta_local = 10000.0f,
     .gguf_scale_by_embd_layers = 62,
     .names = GEMMA_NAMES},
    /* Phi-3: fused QKV and gate/up projections, NeoX RoPE (with LongRoPE
     * scaling in the 128k models), its config's sliding window on every layer. */
    {.name = "phi3",
     .gguf_arch = "phi3",
     .gguf_names = {"phi3"},
     .hf_model_types = {"phi3"},
     .hf_class = "Phi3ForCausalLM",
     .rope_gguf = ROPE_HALVES,
     .rope_hf = ROPE_HALVES,
     .fused_qkv = true,
     .fused_gate_up = true,
     .gguf_window_required = true},
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

const char *arch_list(void) {
    return "llama, mistral, qwen2, qwen3, granite, gemma2, gemma3, phi3, qwen2moe, qwen3moe, mixtral";
}

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
    [T_ATTN_QKV] = {"blk.%d.attn_qkv.weight", "model.layers.%d.self_attn.qkv_proj.weight"},
    [T_FFN_GATE_UP] = {"blk.%d.ffn_up.weight", "model.layers.%d.mlp.gate_up_proj.weight"},
    [T_ATTN_POST_NORM] = {"blk.%d.post_attention_norm.weight", NULL},
    [T_FFN_POST_NORM] = {"blk.%d.post_ffw_norm.weight", "model.layers.%d.post_feedforward_layernorm.weight"},
    [T_ROPE_LONG] = {"rope_factors_long.weight", NULL},
    [T_ROPE_SHORT] = {"rope_factors_short.weight", NULL},
};

/* Patterns with a %d take the layer number. */
static bool format_name(char *buf, int cap, const char *pat, int layer) {
    if (!pat) return false;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (strstr(pat, "%d"))
        snprintf(buf, (size_t)cap, pat, layer);
    else
        snprintf(buf, (size_t)cap, "%s", pat);
#pragma GCC diagnostic pop
    return true;
}

bool tensor_name(char *buf, int cap, model_format fmt, tensor_role role, int layer) {
    return format_name(buf, cap, NAMES[role][fmt], layer);
}

bool tensor_role_per_layer(tensor_role role) {
    const char *pat = NAMES[role][FORMAT_GGUF]; /* NULL for the MoE roles, all per layer (moe_tensor_name) */
    return role >= T_FFN_GATE_INP || (pat && strstr(pat, "%d") != NULL);
}

bool tensor_role_is_norm(tensor_role role) {
    switch (role) {
    case T_ATTN_NORM:
    case T_FFN_NORM:
    case T_OUTPUT_NORM:
    case T_ATTN_Q_NORM:
    case T_ATTN_K_NORM:
    case T_ATTN_POST_NORM:
    case T_FFN_POST_NORM: return true;
    default: return false;
    }
}

const char *const arch_hf_text_prefixes[ARCH_HF_N_TEXT_PREFIXES] = {"language_model.model.", "model.language_model."};

bool arch_tensor_name(const arch_desc *a, char *buf, int cap, model_format fmt, tensor_role role, int layer) {
    for (const role_name *o = a ? a->names : NULL; o && o->role != T_ROLE_COUNT; o++)
        if (o->role == role) return format_name(buf, cap, fmt == FORMAT_GGUF ? o->gguf : o->hf, layer);
    return tensor_name(buf, cap, fmt, role, layer);
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
