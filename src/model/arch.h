/* arch.h — architecture facts as data.
 *
 * Everything that differs between the architectures (Llama, Mistral, Qwen2,
 * Qwen3, Granite, Gemma 2/3, Phi-3 and the mixture-of-experts Qwen2-MoE,
 * Qwen3-MoE and Mixtral) lives in the arch_desc table (arch.c): which names
 * identify it in GGUF and HF files, whether it has QKV biases or per-head q/k
 * RMSNorm, which RoPE pair layout each file format stores, the features of
 * the forward pass it turns on (fused projections, post-norms, GeGLU, scaled
 * embeddings) with the defaults of its hyperparameters, and for
 * mixture-of-experts models how the router picks and weighs experts
 * (moe_desc). Tensor names per role and format are in a second table (with
 * per-arch overrides), so the loader and the test-model writer share one
 * source. */
#ifndef WICK_MODEL_ARCH_H
#define WICK_MODEL_ARCH_H

#include <stdbool.h>

#include "kernels/ops.h"

typedef enum model_format { FORMAT_GGUF = 0, FORMAT_HF = 1 } model_format;

/* The activation of the gated feed-forward: act(gate) * up. */
typedef enum ffn_act {
    FFN_SILU = 0,      /* SwiGLU */
    FFN_GELU_TANH = 1, /* GeGLU with the tanh-approximated GELU (gelu_pytorch_tanh) */
} ffn_act;

struct role_name; /* a tensor name that differs from the common table (below) */

typedef struct arch_desc {
    const char *name;              /* canonical: "llama", "mistral", "qwen2", "qwen3", "qwen2moe", ... */
    const char *gguf_arch;         /* general.architecture written for this arch */
    const char *gguf_names[3];     /* general.architecture values accepted */
    const char *hf_model_types[3]; /* config.json model_type values accepted */
    const char *hf_class;          /* config.json architectures[0] written */
    bool qkv_bias;                 /* q/k/v projections carry biases (required) */
    bool qk_norm;                  /* per-head RMSNorm of q and k before RoPE */
    rope_style rope_gguf;          /* pair layout of q/k rows in GGUF files */
    rope_style rope_hf;            /* pair layout of q/k rows in HF files */
    /* Features of the forward pass (all off = the Llama path): */
    ffn_act act;                   /* gate activation */
    bool fused_qkv;                /* one [q; k; v] projection, split into row views at load */
    bool fused_gate_up;            /* one [gate; up] projection (2·n_ff rows), split likewise */
    bool post_norms;               /* RMSNorm of the attention and FFN outputs before each residual add */
    bool hf_norm_plus_one;         /* HF RMSNorm weights w act as 1 + w (llama.cpp's converter stores w + 1) */
    bool embd_scale_sqrt;          /* embeddings times sqrt(n_embd) */
    bool hf_tied;                  /* tie_word_embeddings when config.json does not say */
    /* Hyperparameter defaults when a file does not give them: */
    int sliding_window;            /* tokens (0 = none) */
    bool gguf_window_required;     /* GGUF files always carry attention.sliding_window, 0 for none
                                      (llama.cpp's phi3 loader refuses a file without it) */
    int swa_period;                /* layer il slides iff il % P < P - 1; 0 = every layer */
    float attn_softcap, final_softcap;  /* c·tanh(x/c) of attention scores / logits; 0 = none */
    float rope_theta_local;        /* RoPE base of the sliding layers (0 = the global one) */
    int gguf_scale_by_embd_layers; /* GGUF files hold no query scale: llama.cpp uses
                                      1/sqrt(n_embd/n_head) at this layer count (Gemma 27B), else 1/sqrt(head_dim) */
    const struct role_name *names; /* overrides of the common tensor names, {T_ROLE_COUNT}-terminated */
    /* A multimodal HF checkpoint of this text model: its config.json model_type
     * (the text model's settings in "text_config", tensors under a prefix, see
     * loader.c) and the defaults of the text config's class as JSON (NULL = none). */
    const char *hf_multimodal_type, *hf_text_defaults;
    const struct moe_desc *moe;    /* mixture-of-experts facts; NULL = dense feed-forward only */
    const char *moe_variant;       /* a file of this arch that has experts is this arch (llama -> mixtral) */
} arch_desc;

/* How a mixture-of-experts layer turns its router logits into k weights.
 * Ties in the top-k go to the lower expert index. */
typedef enum moe_gating {
    MOE_SOFTMAX_TOPK = 0, /* softmax over all experts, the k largest, renormalized if norm_topk (Qwen) */
    MOE_TOPK_SOFTMAX = 1, /* the k largest logits, softmax over those k (Mixtral) */
} moe_gating;

typedef struct moe_desc {
    moe_gating gating;
    bool norm_topk_gguf;  /* renormalize the top-k weights in GGUF files (llama.cpp's choice per arch) */
    bool shared_expert;   /* plus a shared SwiGLU expert scaled by sigmoid(w · x) (qwen2moe) */
    const char *hf_count_key;  /* config.json key of the expert count */
    const char *hf_ff_key;     /* config.json key of an expert's width; NULL = intermediate_size (Mixtral) */
    const char *hf_router;    /* HF name of the router matrix (%d = layer) */
    const char *hf_expert[3]; /* HF names of expert E's gate, up, down (%d = layer, then expert) */
} moe_desc;

/* Find by canonical name, GGUF general.architecture or HF model_type. NULL if unknown. */
const arch_desc *arch_by_name(const char *name);
const arch_desc *arch_by_gguf(const char *gguf_arch);
const arch_desc *arch_by_hf(const char *model_type);
/* "llama, mistral, qwen2, ..." (every canonical name, in table order) — for error messages. */
const char *arch_list(void);

typedef enum tensor_role {
    T_TOK_EMBD,
    T_OUTPUT_NORM,
    T_OUTPUT,
    T_ROPE_FREQS,
    /* per layer: */
    T_ATTN_NORM,
    T_ATTN_Q,
    T_ATTN_K,
    T_ATTN_V,
    T_ATTN_O,
    T_ATTN_Q_BIAS,
    T_ATTN_K_BIAS,
    T_ATTN_V_BIAS,
    T_ATTN_Q_NORM,
    T_ATTN_K_NORM,
    T_FFN_NORM,
    T_FFN_GATE,
    T_FFN_UP,
    T_FFN_DOWN,
    /* the architecture features of Granite, Gemma 2/3 and Phi-3: */
    T_ATTN_QKV,        /* fused q/k/v projection (Phi-3) */
    T_FFN_GATE_UP,     /* fused gate/up projection (Phi-3) */
    T_ATTN_POST_NORM,  /* RMSNorm of the attention output (Gemma 2/3) */
    T_FFN_POST_NORM,   /* RMSNorm of the FFN output (Gemma 2/3) */
    T_ROPE_LONG,       /* LongRoPE frequency divisors, long context (Phi-3), one per model */
    T_ROPE_SHORT,      /* LongRoPE frequency divisors, short context (Phi-3), one per model */
    /* mixture of experts (names: moe_tensor_name) */
    T_FFN_GATE_INP,       /* router [n_expert, n_embd] */
    T_FFN_GATE_EXPS,      /* GGUF 3-D stacks {n_embd, n_ff_exp, n_expert} ... */
    T_FFN_UP_EXPS,
    T_FFN_DOWN_EXPS,      /* ... {n_ff_exp, n_embd, n_expert} */
    T_FFN_GATE_EXP,       /* one expert's 2-D matrix (HF; GGUF's older Mixtral form) */
    T_FFN_UP_EXP,
    T_FFN_DOWN_EXP,
    T_FFN_GATE_INP_SHEXP, /* shared expert's gate vector [n_embd] (qwen2moe) */
    T_FFN_GATE_SHEXP,
    T_FFN_UP_SHEXP,
    T_FFN_DOWN_SHEXP,
    T_ROLE_COUNT
} tensor_role;

typedef struct role_name {
    tensor_role role;
    const char *gguf, *hf; /* NULL = no such tensor in that format */
} role_name;

/* Write the tensor name of `role` (for layer `layer` when per-layer) in the
 * given format into buf. Returns false if the role has no name in that format
 * (HF has no rope_freqs tensor). */
bool tensor_name(char *buf, int cap, model_format fmt, tensor_role role, int layer);
/* True for the roles every layer has one of (their names take the layer number). */
bool tensor_role_per_layer(tensor_role role);
/* The same for one architecture: its overrides first (Gemma's HF
 * post_attention_layernorm is a post-norm, not the FFN norm), then the common table. */
bool arch_tensor_name(const arch_desc *a, char *buf, int cap, model_format fmt, tensor_role role, int layer);
/* True for the RMSNorm weights (the roles whose HF values act as 1 + w in
 * architectures with hf_norm_plus_one). */
bool tensor_role_is_norm(tensor_role role);

/* A multimodal HF checkpoint (arch_desc.hf_multimodal_type) keeps its text
 * model's "model.X" tensors as "<prefix>X" under one of these prefixes:
 * language_model.model.X, or model.language_model.X from newer transformers. */
#define ARCH_HF_N_TEXT_PREFIXES 2
extern const char *const arch_hf_text_prefixes[ARCH_HF_N_TEXT_PREFIXES];

/* The name of a mixture-of-experts role (T_FFN_GATE_INP and after) for
 * layer `layer` and, for the per-expert roles, expert `expert`: GGUF names
 * are llama.cpp's for every arch, HF names come from the arch's moe_desc.
 * False if the role has no name in that format or arch. */
bool moe_tensor_name(char *buf, int cap, const arch_desc *arch, model_format fmt, tensor_role role, int layer,
                     int expert);

#endif
