"""Independent NumPy reference forward pass for llama / mistral / qwen2 / qwen3 /
granite / gemma2 / gemma3 / phi3 and the mixture-of-experts models qwen2moe / qwen3moe / mixtral.

Written from the papers (RMSNorm, RoPE/RoFormer, GQA, SwiGLU, GeGLU) and the
Hugging Face transformers modelling semantics (modeling_llama, _granite,
_gemma2, _gemma3, _phi3), NOT from wick's C code. Math is float64.

    model = load_model(path)          # GGUF file or HF directory (config.json + safetensors)
    logits = model.forward([1, 2, 3]) # numpy [T, vocab], float64, every position
    ids = model.greedy([1, 2, 3], 10) # prompt + 10 greedy tokens

Internally every checkpoint is brought to the HF layout:
  * weights named after HF (model.layers.N.self_attn.q_proj.weight, ...)
  * q/k projection rows in the rotate_half ("NeoX") order: head dim pairs (i, i + d/2).
  * Gemma RMSNorm weights as HF stores them: w, applied as x_normed * (1 + w).
GGUF `llama`/`mistral`/`granite` files (llama.cpp convert) store q/k rows permuted for
the interleaved (pairs (2i, 2i+1)) layout: HF -> GGUF is
    w.reshape(n_head, 2, hd/2, cols).swapaxes(1, 2).reshape(rows, cols)
so on load we invert it: w.reshape(n_head, hd/2, 2, cols).swapaxes(1, 2).reshape(rows, cols).
This is exactly equivalent to applying interleaved RoPE on the stored rows.
GGUF qwen2 / qwen3 / gemma2 / gemma3 / phi3 are not permuted (NeoX RoPE).
llama.cpp's converter stores Gemma norm weights as w + 1 (its RMSNorm multiplies by the
stored weight); on load we subtract 1 again.

Architecture semantics beyond Llama (HF):
  granite: embeddings * embedding_multiplier; attention scores * attention_multiplier
           (instead of 1/sqrt(head_dim)); each block's output * residual_multiplier before
           its residual add; logits / logits_scaling.
  gemma2:  embeddings * sqrt(hidden_size); RMSNorm weights (1 + w); pre- and post-norms
           around attention and MLP; GeGLU (gelu_pytorch_tanh); scores scaled by
           query_pre_attn_scalar^-0.5 then soft-capped c*tanh(s/c); a sliding window on
           even layers; final logits soft-capped.
  gemma3:  as gemma2 plus per-head q/k RMSNorm (1 + w), no soft-capping by default, sliding
           layers where (i + 1) % sliding_window_pattern != 0 (or per layer_types) with RoPE
           base rope_local_base_freq and no scaling, global layers rope_theta + rope_scaling.
  phi3:    fused qkv_proj (q, k, v rows) and gate_up_proj (gate rows, then up rows); partial
           rotary (partial_rotary_factor); sliding_window on every layer; LongRoPE: inv_freq
           divided by short_factor (sequence <= original_max_position_embeddings) or
           long_factor, cos/sin times the attention factor.

Mixture of experts, from transformers' Qwen2MoeSparseMoeBlock,
Qwen3MoeSparseMoeBlock and MixtralSparseMoeBlock:
    probs = softmax(router(x)); w, idx = topk(probs, k)   (ties: the lower index)
    if norm_topk_prob: w /= sum(w)                        (Mixtral always)
    y = sum_j w_j * down_j(silu(gate_j(x)) * up_j(x))
    qwen2moe adds sigmoid(shared_expert_gate(x)) * shared_expert(x).
A layer is sparse unless listed in mlp_only_layers, and when
(layer + 1) % decoder_sparse_step == 0. GGUF files (llama.cpp's converters)
hold the experts as 3-D stacks [n_expert, rows, cols] (or, in older Mixtral
files, blk.N.ffn_gate.E.weight); llama.cpp renormalizes qwen3moe and Mixtral
and not qwen2moe, unless {arch}.expert_weights_norm says otherwise. Mixtral
GGUF files are general.architecture "llama" with {arch}.expert_count.
Internally every expert tensor gets the qwen HF name
(model.layers.N.mlp.experts.E.gate_proj.weight, mlp.gate.weight, ...).
"""
import json
import math
import os

import numpy as np

try:
    from . import gguf_reader, safetensors_reader  # noqa: F401
except ImportError:  # run as a script from this directory
    import gguf_reader
    import safetensors_reader

ARCHS = ("llama", "mistral", "qwen2", "qwen3", "granite", "gemma2", "gemma3", "phi3", "qwen2moe", "qwen3moe",
         "mixtral")
GEMMA = ("gemma2", "gemma3")
HF_TYPES = {"qwen2_moe": "qwen2moe", "qwen3_moe": "qwen3moe"}


class Config:
    def __init__(self):
        self.arch = None
        self.hidden = 0
        self.inter = 0
        self.n_layers = 0
        self.n_heads = 0
        self.n_kv = 0
        self.head_dim = 0
        self.rot_dim = 0
        self.eps = 1e-6
        self.theta = 10000.0
        self.vocab = 0
        self.inv_freq = None        # [rot_dim/2] float64 (global layers)
        self.inv_freq_local = None  # [rot_dim/2] float64 for sliding layers (gemma3), or None
        self.longrope = None        # (short_factor, long_factor, original_ctx) or None
        self.rope_mscale = 1.0      # cos/sin multiplier (LongRoPE attention factor)
        self.sliding = None         # per-layer window size (int) or None
        self.source = None          # "gguf" or "hf"
        self.act = "silu"           # gate activation: "silu" or "gelu_tanh"
        self.norm_offset = 0.0      # RMSNorm multiplies by (offset + w): 1 for Gemma
        self.embed_scale = 1.0
        self.residual_mult = 1.0
        self.attn_scale = None      # None = 1/sqrt(head_dim)
        self.logits_div = 1.0
        self.attn_softcap = None
        self.final_softcap = None
        self.n_expert = 0           # mixture of experts (0 = dense)
        self.n_used = 0
        self.norm_topk = False
        self.moe_layers = []        # per layer: True = sparse

    def __repr__(self):
        return "Config(%r)" % {k: v for k, v in self.__dict__.items()
                               if k not in ("inv_freq", "inv_freq_local", "longrope")}


# ---------------------------------------------------------------- RoPE frequencies

def base_inv_freq(theta, rot_dim):
    # inv_freq_i = 1 / theta^(2i/d), i = 0 .. d/2-1
    return 1.0 / (theta ** (np.arange(0, rot_dim, 2, dtype=np.float64) / rot_dim))


def llama3_inv_freq(inv_freq, factor, low_freq_factor, high_freq_factor, old_ctx):
    """HF transformers `_compute_llama3_parameters` semantics."""
    low_freq_wavelen = old_ctx / low_freq_factor
    high_freq_wavelen = old_ctx / high_freq_factor
    wavelen = 2.0 * math.pi / inv_freq
    # long wavelengths (low frequencies): divide by factor
    out = np.where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq)
    # medium: smooth interpolation between scaled and unscaled
    smooth = (old_ctx / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    smoothed = (1.0 - smooth) * out / factor + smooth * out
    is_medium = ~(wavelen < high_freq_wavelen) & ~(wavelen > low_freq_wavelen)
    return np.where(is_medium, smoothed, out)


def gemma_sliding(arch, n_layers, window, pattern=None):
    """Which layers slide: gemma2 even layers (HF: not layer_idx % 2), gemma3 every layer
    but each `pattern`-th (HF: bool((layer_idx + 1) % sliding_window_pattern))."""
    if arch == "gemma2":
        return [window if i % 2 == 0 else None for i in range(n_layers)]
    p = pattern or 6
    return [window if (i + 1) % p else None for i in range(n_layers)]


# ---------------------------------------------------------------- loading

def _unpermute_rows(w, n_head):
    """Invert llama.cpp's HF->GGUF q/k row permutation (works for 2-D weights and 1-D biases)."""
    rows = w.shape[0]
    hd = rows // n_head
    rest = w.shape[1:]
    return w.reshape((n_head, hd // 2, 2) + rest).swapaxes(1, 2).reshape(w.shape)


_GGUF_LAYER_NAMES = {
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_qkv.weight": "self_attn.qkv_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "attn_q.bias": "self_attn.q_proj.bias",
    "attn_k.bias": "self_attn.k_proj.bias",
    "attn_v.bias": "self_attn.v_proj.bias",
    "attn_output.bias": "self_attn.o_proj.bias",
    "attn_q_norm.weight": "self_attn.q_norm.weight",
    "attn_k_norm.weight": "self_attn.k_norm.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
    "ffn_gate_inp.weight": "mlp.gate.weight",
    "ffn_gate_shexp.weight": "mlp.shared_expert.gate_proj.weight",
    "ffn_up_shexp.weight": "mlp.shared_expert.up_proj.weight",
    "ffn_down_shexp.weight": "mlp.shared_expert.down_proj.weight",
}
# Gemma's HF names: the attention output's post-norm is post_attention_layernorm,
# the FFN's pre-norm pre_feedforward_layernorm.
_GGUF_GEMMA_NAMES = dict(_GGUF_LAYER_NAMES, **{
    "ffn_norm.weight": "pre_feedforward_layernorm.weight",
    "post_attention_norm.weight": "post_attention_layernorm.weight",
    "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
})
_EXPERT_PROJ = {"gate": "gate_proj", "up": "up_proj", "down": "down_proj"}


def load_gguf(path):
    meta, t = gguf_reader.read_gguf(path)
    arch = meta["general.architecture"]
    if arch not in ARCHS:
        raise ValueError("unsupported GGUF architecture %r" % arch)
    a = arch
    if arch == "llama" and meta.get("llama.expert_count"):
        arch = "mixtral"

    def g(key, default=None):
        return meta.get("%s.%s" % (a, key), default)

    c = Config()
    c.source = "gguf"
    c.arch = arch
    c.hidden = int(g("embedding_length"))
    c.inter = int(g("feed_forward_length"))
    c.n_layers = int(g("block_count"))
    c.n_heads = int(g("attention.head_count"))
    c.n_kv = int(g("attention.head_count_kv", c.n_heads))
    c.head_dim = int(g("attention.key_length", c.hidden // c.n_heads))
    c.rot_dim = int(g("rope.dimension_count", c.head_dim))
    c.eps = float(g("attention.layer_norm_rms_epsilon", 1e-5))
    c.theta = float(g("rope.freq_base", 10000.0))
    inv = base_inv_freq(c.theta, c.rot_dim)
    if "rope_freqs.weight" in t:
        # llama.cpp stores llama3-style scaling as per-frequency divisors
        inv = inv / t["rope_freqs.weight"].astype(np.float64).reshape(-1)[: c.rot_dim // 2]
    stype = g("rope.scaling.type")
    if stype == "linear":
        inv = inv / float(g("rope.scaling.factor", 1.0))
    elif stype not in (None, "none"):
        raise ValueError("unsupported GGUF rope scaling %r" % stype)
    c.inv_freq = inv
    sw = g("attention.sliding_window")
    c.sliding = [int(sw) if sw else None] * c.n_layers
    if "rope_factors_long.weight" in t:  # LongRoPE (llama.cpp's phi3)
        c.longrope = (t["rope_factors_short.weight"].astype(np.float64).reshape(-1),
                      t["rope_factors_long.weight"].astype(np.float64).reshape(-1),
                      int(g("rope.scaling.original_context_length")))
        c.inv_freq = base_inv_freq(c.theta, c.rot_dim)
    c.rope_mscale = float(g("rope.scaling.attn_factor", 1.0))

    # granite (llama.cpp's key names for HF's multipliers)
    c.embed_scale = float(g("embedding_scale", 1.0) or 1.0)
    c.residual_mult = float(g("residual_scale", 1.0) or 1.0)
    c.attn_scale = g("attention.scale")
    ls = g("logit_scale")
    c.logits_div = float(ls) if ls else 1.0
    if arch in GEMMA:
        c.act = "gelu_tanh"
        c.norm_offset = 1.0
        c.embed_scale = math.sqrt(c.hidden)
        # GGUF has no query_pre_attn_scalar: llama.cpp uses n_embd/n_head for the 27B
        # models (46 / 62 layers), head_dim otherwise
        big = c.n_layers == (46 if arch == "gemma2" else 62)
        c.attn_scale = 1.0 / math.sqrt(c.hidden // c.n_heads if big else c.head_dim)
        c.sliding = gemma_sliding(arch, c.n_layers, int(sw or 4096))
    if arch == "gemma2":
        c.attn_softcap = float(g("attn_logit_softcapping", 50.0))
        c.final_softcap = float(g("final_logit_softcapping", 30.0))
    if arch == "gemma3":
        c.inv_freq_local = base_inv_freq(float(g("rope.freq_base_swa", 10000.0)), c.rot_dim)
    c.n_expert = int(g("expert_count", 0) or 0)
    c.n_used = int(g("expert_used_count", 0) or 0)
    c.norm_topk = bool(g("expert_weights_norm", arch in ("qwen3moe", "mixtral")))
    c.moe_layers = [c.n_expert > 0] * c.n_layers

    W = {}
    W["model.embed_tokens.weight"] = t["token_embd.weight"]
    W["model.norm.weight"] = t["output_norm.weight"]
    W["lm_head.weight"] = t.get("output.weight", t["token_embd.weight"])
    permuted = arch in ("llama", "mistral", "granite", "mixtral")
    names = dict(_GGUF_GEMMA_NAMES if arch in GEMMA else _GGUF_LAYER_NAMES)
    if arch == "phi3":
        names["ffn_up.weight"] = "mlp.gate_up_proj.weight"  # gate rows, then up rows
    for i in range(c.n_layers):
        for gname, hname in names.items():
            key = "blk.%d.%s" % (i, gname)
            if key not in t:
                continue
            w = t[key]
            if permuted and gname.startswith("attn_q."):
                w = _unpermute_rows(w, c.n_heads)
            elif permuted and gname.startswith("attn_k."):
                w = _unpermute_rows(w, c.n_kv)
            W["model.layers.%d.%s" % (i, hname)] = w
        p = "model.layers.%d.mlp." % i
        for kind, proj in _EXPERT_PROJ.items():
            stack = t.get("blk.%d.ffn_%s_exps.weight" % (i, kind))     # [n_expert, rows, cols]
            for e in range(c.n_expert):
                w = stack[e] if stack is not None else t.get("blk.%d.ffn_%s.%d.weight" % (i, kind, e))
                if w is not None:
                    W[p + "experts.%d.%s.weight" % (e, proj)] = w
        sg = t.get("blk.%d.ffn_gate_inp_shexp.weight" % i)
        if sg is not None:
            W[p + "shared_expert_gate.weight"] = sg.reshape(1, -1)
    if arch in GEMMA:  # back to HF's w from llama.cpp's stored w + 1
        for k in list(W):
            if k.endswith("norm.weight"):
                W[k] = W[k].astype(np.float64) - 1.0
    c.vocab = W["model.embed_tokens.weight"].shape[0]
    c.arch = arch
    return c, W


# Gemma3TextConfig defaults (transformers), for a multimodal config's sparse text_config
_GEMMA3_TEXT_DEFAULTS = {
    "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
    "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
    "query_pre_attn_scalar": 256, "sliding_window": 4096, "sliding_window_pattern": 6,
    "tie_word_embeddings": True,
}


def load_hf(path):
    with open(os.path.join(path, "config.json")) as f:
        cfg = json.load(f)
    mt = cfg.get("model_type", "llama")
    if mt == "gemma3":  # Gemma3ForConditionalGeneration: the text model's config
        cfg = dict(_GEMMA3_TEXT_DEFAULTS, **cfg["text_config"])
        mt = "gemma3_text"
    if mt == "gemma3_text":
        mt = "gemma3"
    mt = HF_TYPES.get(mt, mt)
    if mt not in ARCHS:
        raise ValueError("unsupported model_type %r" % mt)
    c = Config()
    c.source = "hf"
    c.arch = mt
    c.hidden = int(cfg["hidden_size"])
    c.inter = int(cfg["intermediate_size"])
    c.n_layers = int(cfg["num_hidden_layers"])
    c.n_heads = int(cfg["num_attention_heads"])
    c.n_kv = int(cfg.get("num_key_value_heads") or c.n_heads)
    hd = cfg.get("head_dim")
    c.head_dim = int(hd) if hd else c.hidden // c.n_heads
    c.rot_dim = int(c.head_dim * float(cfg.get("partial_rotary_factor", 1.0)))
    c.eps = float(cfg.get("rms_norm_eps", 1e-6))
    c.theta = float(cfg.get("rope_theta", 10000.0))
    inv = base_inv_freq(c.theta, c.rot_dim)
    rs = cfg.get("rope_scaling")
    if rs:
        rtype = rs.get("rope_type", rs.get("type"))
        if rtype == "llama3":
            inv = llama3_inv_freq(inv, float(rs["factor"]), float(rs["low_freq_factor"]),
                                  float(rs["high_freq_factor"]),
                                  float(rs["original_max_position_embeddings"]))
        elif rtype == "linear":
            inv = inv / float(rs["factor"])
        elif rtype in ("longrope", "su"):
            # HF _compute_longrope_parameters
            orig = cfg.get("original_max_position_embeddings") or rs.get("original_max_position_embeddings")
            orig = int(orig or cfg["max_position_embeddings"])
            c.longrope = (np.asarray(rs["short_factor"], dtype=np.float64),
                          np.asarray(rs["long_factor"], dtype=np.float64), orig)
            af = rs.get("attention_factor")
            if af is None:
                s = float(cfg["max_position_embeddings"]) / orig
                af = math.sqrt(1.0 + math.log(s) / math.log(orig)) if s > 1.0 else 1.0
            c.rope_mscale = float(af)
        elif rtype != "default":
            raise ValueError("unsupported rope_scaling %r" % rs)
    c.inv_freq = inv
    sw = cfg.get("sliding_window")
    if mt in ("mistral", "phi3", "mixtral"):
        c.sliding = [int(sw) if sw else None] * c.n_layers
    elif mt in ("qwen2", "qwen3", "qwen2moe", "qwen3moe") and cfg.get("use_sliding_window") and sw:
        mwl = int(cfg.get("max_window_layers", c.n_layers))
        c.sliding = [int(sw) if i >= mwl else None for i in range(c.n_layers)]
    elif mt in GEMMA:
        lt = cfg.get("layer_types")
        if lt:
            c.sliding = [int(sw) if t == "sliding_attention" else None for t in lt]
        else:
            c.sliding = gemma_sliding(mt, c.n_layers, int(sw or 4096), cfg.get("sliding_window_pattern"))
    else:
        c.sliding = [None] * c.n_layers

    if mt == "granite":
        c.embed_scale = float(cfg.get("embedding_multiplier", 1.0))
        c.residual_mult = float(cfg.get("residual_multiplier", 1.0))
        c.attn_scale = float(cfg.get("attention_multiplier", 1.0 / math.sqrt(c.head_dim)))
        c.logits_div = float(cfg.get("logits_scaling", 1.0))
    if mt in GEMMA:
        c.act = "gelu_tanh"
        c.norm_offset = 1.0
        c.embed_scale = math.sqrt(c.hidden)
        c.attn_scale = float(cfg.get("query_pre_attn_scalar", 256)) ** -0.5
        dflt = (50.0, 30.0) if mt == "gemma2" else (None, None)
        c.attn_softcap = cfg.get("attn_logit_softcapping", dflt[0])
        c.final_softcap = cfg.get("final_logit_softcapping", dflt[1])
    if mt == "gemma3":
        c.inv_freq_local = base_inv_freq(float(cfg.get("rope_local_base_freq", 10000.0)), c.rot_dim)

    c.n_expert = int(cfg.get("num_local_experts" if mt == "mixtral" else "num_experts", 0) or 0)
    c.n_used = int(cfg.get("num_experts_per_tok", 0) or 0)
    c.norm_topk = True if mt == "mixtral" else bool(cfg.get("norm_topk_prob", False))
    step = int(cfg.get("decoder_sparse_step", 1) or 1)
    only = set(cfg.get("mlp_only_layers") or [])
    c.moe_layers = [c.n_expert > 0 and i not in only and (i + 1) % step == 0 for i in range(c.n_layers)]

    W = safetensors_reader.read_safetensors(path)
    for pre in ("language_model.model.", "model.language_model."):  # Gemma 3 multimodal files
        for k in [k for k in W if k.startswith(pre)]:
            W["model." + k[len(pre):]] = W.pop(k)
    if mt == "mixtral":  # block_sparse_moe.{gate, experts.E.w1/w3/w2} -> the qwen names
        ren = {}
        for k, v in W.items():
            k2 = k.replace(".block_sparse_moe.gate.", ".mlp.gate.")
            for old, new in ((".w1.", ".gate_proj."), (".w3.", ".up_proj."), (".w2.", ".down_proj.")):
                if ".block_sparse_moe.experts." in k2:
                    k2 = k2.replace(old, new)
            ren[k2.replace(".block_sparse_moe.experts.", ".mlp.experts.")] = v
        W = ren
    tied = cfg.get("tie_word_embeddings", mt in GEMMA)
    if "lm_head.weight" not in W or tied:
        W["lm_head.weight"] = W["model.embed_tokens.weight"]
    c.vocab = W["model.embed_tokens.weight"].shape[0]
    return c, W


# ---------------------------------------------------------------- forward

def rms_norm(x, w, eps, offset=0.0):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * (offset + w)


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh(x):
    # HF gelu_pytorch_tanh
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def swiglu(x, W, p):
    """down(silu(gate(x)) * up(x)) with the weights named p + {gate,up,down}_proj.weight."""
    g = x @ W[p + "gate_proj.weight"].T
    u = x @ W[p + "up_proj.weight"].T
    return (silu(g) * u) @ W[p + "down_proj.weight"].T


def moe_route(logits, k, norm_topk, flip_tokens=()):
    """HF routing: softmax over all experts, the k largest (ties: lower index), optional renorm.
    logits [T, E] -> (idx [T, k], weights [T, k]). Tokens in flip_tokens take the
    (k+1)-th expert instead of the k-th (see Model.flips)."""
    z = logits - logits.max(axis=-1, keepdims=True)
    probs = np.exp(z) / np.exp(z).sum(axis=-1, keepdims=True)
    order = np.argsort(-probs, axis=-1, kind="stable")
    idx = order[:, :k].copy()
    for t in flip_tokens:
        idx[t, k - 1] = order[t, k]
    w = np.take_along_axis(probs, idx, axis=-1)
    if norm_topk:
        w = w / w.sum(axis=-1, keepdims=True)
    return idx, w


def topk_softmax(logits, k):
    """Mixtral's original formulation (mistral-src MoeLayer): the k largest
    logits, softmax over them. Equal to moe_route(..., norm_topk=True)."""
    idx = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    top = np.take_along_axis(logits, idx, axis=-1)
    e = np.exp(top - top.max(axis=-1, keepdims=True))
    return idx, e / e.sum(axis=-1, keepdims=True)


def moe_block(x, W, p, c, flip_tokens=(), gaps=None):
    """A sparse feed-forward block; p = "model.layers.N.mlp.". gaps, if a list,
    gets each token's logit gap between its k-th and (k+1)-th expert divided
    by the standard deviation of the layer's router logits."""
    logits = x @ W[p + "gate.weight"].T
    if gaps is not None and c.n_used < c.n_expert:
        srt = -np.sort(-logits, axis=-1)
        gaps.append((srt[:, c.n_used - 1] - srt[:, c.n_used]) / (logits.std() or 1.0))
    idx, w = moe_route(logits, c.n_used, c.norm_topk, flip_tokens)
    out = np.zeros_like(x)
    for e in range(c.n_expert):
        rows, slot = np.nonzero(idx == e)
        if rows.size:
            out[rows] += swiglu(x[rows], W, p + "experts.%d." % e) * w[rows, slot][:, None]
    if p + "shared_expert_gate.weight" in W:
        sg = W[p + "shared_expert_gate.weight"].reshape(1, -1)                    # Linear(hidden, 1)
        gate = 1.0 / (1.0 + np.exp(-(x @ sg.T)))                                  # [T, 1]
        out += gate * swiglu(x, W, p + "shared_expert.")
    return out


def rope_rotate_half(x, cos, sin, rot_dim):
    """x [..., T, head_dim]; cos/sin [T, rot_dim/2]. HF rotate_half convention."""
    h = rot_dim // 2
    x1 = x[..., :h]
    x2 = x[..., h:rot_dim]
    out = x.copy()
    out[..., :h] = x1 * cos - x2 * sin
    out[..., h:rot_dim] = x2 * cos + x1 * sin
    return out


class Model:
    def __init__(self, cfg, weights):
        self.cfg = cfg
        self.W = {k: np.asarray(v, dtype=np.float64) for k, v in weights.items()}
        # Mixture of experts: a (layer, token) in flips routes that token to
        # its (k+1)-th expert instead of its k-th in that layer: the other side
        # of a near-tie, which an engine with quantized activations may take.
        # route_gaps: per MoE layer, every token's logit gap at the k-th place
        # relative to the spread of the layer's logits (filled by forward).
        self.flips = set()
        self.route_gaps = {}

    def _w(self, name):
        return self.W.get(name)

    def _cos_sin(self, T):
        c = self.cfg
        pos = np.arange(T, dtype=np.float64)
        inv = c.inv_freq
        if c.longrope is not None:
            short, long, orig = c.longrope
            # HF: the long factors once the sequence is longer than the original context
            inv = c.inv_freq / (long if T > orig else short)
        ang = pos[:, None] * inv[None, :]
        glob = (np.cos(ang) * c.rope_mscale, np.sin(ang) * c.rope_mscale)
        if c.inv_freq_local is None:
            return glob, glob
        ang = pos[:, None] * c.inv_freq_local[None, :]
        return glob, (np.cos(ang), np.sin(ang))

    def forward(self, ids):
        c = self.cfg
        W = self.W
        ids = np.asarray(ids, dtype=np.int64)
        T = len(ids)
        nz = c.norm_offset
        x = W["model.embed_tokens.weight"][ids] * c.embed_scale      # [T, hidden]
        rope_global, rope_local = self._cos_sin(T)
        qi = np.arange(T)[:, None]
        kj = np.arange(T)[None, :]
        causal = kj <= qi
        group = c.n_heads // c.n_kv
        scale = c.attn_scale if c.attn_scale is not None else 1.0 / math.sqrt(c.head_dim)
        q_dim, kv_dim = c.n_heads * c.head_dim, c.n_kv * c.head_dim
        for L in range(c.n_layers):
            p = "model.layers.%d." % L
            h = rms_norm(x, W[p + "input_layernorm.weight"], c.eps, nz)
            qkv = W.get(p + "self_attn.qkv_proj.weight")
            if qkv is not None:  # phi3: q, k, v rows stacked
                o = h @ qkv.T
                q, k, v = o[:, :q_dim], o[:, q_dim:q_dim + kv_dim], o[:, q_dim + kv_dim:]
            else:
                q = h @ W[p + "self_attn.q_proj.weight"].T
                k = h @ W[p + "self_attn.k_proj.weight"].T
                v = h @ W[p + "self_attn.v_proj.weight"].T
            for nm, arr in (("q", q), ("k", k), ("v", v)):
                b = W.get(p + "self_attn.%s_proj.bias" % nm)
                if b is not None:
                    arr += b
            q = q.reshape(T, c.n_heads, c.head_dim).transpose(1, 0, 2)   # [H, T, hd]
            k = k.reshape(T, c.n_kv, c.head_dim).transpose(1, 0, 2)      # [Hkv, T, hd]
            v = v.reshape(T, c.n_kv, c.head_dim).transpose(1, 0, 2)
            qn = W.get(p + "self_attn.q_norm.weight")
            kn = W.get(p + "self_attn.k_norm.weight")
            if qn is not None:
                q = rms_norm(q, qn, c.eps, nz)
            if kn is not None:
                k = rms_norm(k, kn, c.eps, nz)
            win = c.sliding[L]
            cos, sin = rope_local if win else rope_global
            q = rope_rotate_half(q, cos, sin, c.rot_dim)
            k = rope_rotate_half(k, cos, sin, c.rot_dim)
            k = np.repeat(k, group, axis=0)                                # [H, T, hd]
            v = np.repeat(v, group, axis=0)
            s = (q @ k.transpose(0, 2, 1)) * scale                        # [H, T, T]
            if c.attn_softcap:
                s = np.tanh(s / c.attn_softcap) * c.attn_softcap
            mask = causal
            if win:
                mask = mask & (kj > qi - win)
            s = np.where(mask[None], s, -np.inf)
            s = s - s.max(axis=-1, keepdims=True)
            e = np.exp(s)
            a = e / e.sum(axis=-1, keepdims=True)
            o = (a @ v).transpose(1, 0, 2).reshape(T, c.n_heads * c.head_dim)
            o = o @ W[p + "self_attn.o_proj.weight"].T
            ob = W.get(p + "self_attn.o_proj.bias")
            if ob is not None:
                o += ob
            if c.arch in GEMMA:
                o = rms_norm(o, W[p + "post_attention_layernorm.weight"], c.eps, nz)
            x = x + o * c.residual_mult
            ffn_norm = "pre_feedforward_layernorm.weight" if c.arch in GEMMA else "post_attention_layernorm.weight"
            h = rms_norm(x, W[p + ffn_norm], c.eps, nz)
            gu = W.get(p + "mlp.gate_up_proj.weight")
            if c.moe_layers and c.moe_layers[L]:
                gaps = []
                flip = [t for (l, t) in self.flips if l == L]
                f = moe_block(h, W, p + "mlp.", c, flip, gaps)
                if gaps:
                    self.route_gaps[L] = gaps[0]
            else:
                if gu is not None:  # phi3: gate rows, then up rows
                    o = h @ gu.T
                    g, u = o[:, :c.inter], o[:, c.inter:]
                else:
                    g = h @ W[p + "mlp.gate_proj.weight"].T
                    u = h @ W[p + "mlp.up_proj.weight"].T
                act = gelu_tanh(g) if c.act == "gelu_tanh" else silu(g)
                f = (act * u) @ W[p + "mlp.down_proj.weight"].T
            if c.arch in GEMMA:
                f = rms_norm(f, W[p + "post_feedforward_layernorm.weight"], c.eps, nz)
            x = x + f * c.residual_mult
        x = rms_norm(x, W["model.norm.weight"], c.eps, nz)
        logits = (x @ W["lm_head.weight"].T) / c.logits_div              # [T, vocab]
        if c.final_softcap:
            logits = np.tanh(logits / c.final_softcap) * c.final_softcap
        return logits

    def greedy(self, ids, n):
        ids = list(ids)
        for _ in range(n):
            logits = self.forward(ids)[-1]
            ids.append(int(np.argmax(logits)))
        return ids


def load_model(path):
    if os.path.isdir(path):
        cfg, W = load_hf(path)
    elif path.endswith(".safetensors"):
        cfg, W = load_hf(os.path.dirname(path) or ".")
    else:
        cfg, W = load_gguf(path)
    return Model(cfg, W)
