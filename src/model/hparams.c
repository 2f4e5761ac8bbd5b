/* hparams.c — hyperparameters from GGUF keys / HF config.json (see hparams.h). */
#include "model/hparams.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json_util.h"

typedef enum { K_INT, K_FLOAT } key_kind;

typedef struct key_spec {
    const char *gguf; /* suffix after "<arch>." */
    const char *hf;   /* config.json key */
    size_t offset;    /* into hparams */
    key_kind kind;
    bool required;
} key_spec;

#define OFF(f) offsetof(hparams, f)
static const key_spec KEYS[] = {
    {"embedding_length", "hidden_size", OFF(n_embd), K_INT, true},
    {"block_count", "num_hidden_layers", OFF(n_layer), K_INT, true},
    {"feed_forward_length", "intermediate_size", OFF(n_ff), K_INT, true},
    {"attention.head_count", "num_attention_heads", OFF(n_head), K_INT, true},
    {"attention.head_count_kv", "num_key_value_heads", OFF(n_head_kv), K_INT, false},
    {"attention.key_length", "head_dim", OFF(head_dim), K_INT, false},
    {"context_length", "max_position_embeddings", OFF(n_ctx_train), K_INT, false},
    {"rope.dimension_count", NULL, OFF(rot_dim), K_INT, false},
    {"attention.layer_norm_rms_epsilon", "rms_norm_eps", OFF(rms_eps), K_FLOAT, false},
    {"rope.freq_base", "rope_theta", OFF(rope_theta), K_FLOAT, false},
    {"attention.sliding_window", "sliding_window", OFF(sliding_window), K_INT, false},
    {"vocab_size", "vocab_size", OFF(n_vocab), K_INT, false},
    {"expert_count", "num_experts", OFF(n_expert), K_INT, false},
    {NULL, "num_local_experts", OFF(n_expert), K_INT, false}, /* Mixtral */
    {"expert_used_count", "num_experts_per_tok", OFF(n_expert_used), K_INT, false},
    {"expert_feed_forward_length", "moe_intermediate_size", OFF(n_ff_exp), K_INT, false},
    {"expert_shared_feed_forward_length", "shared_expert_intermediate_size", OFF(n_ff_shexp), K_INT, false},
    {NULL, "decoder_sparse_step", OFF(moe_step), K_INT, false},
};
#undef OFF

static void set_defaults(hparams *hp) {
    memset(hp, 0, sizeof *hp);
    hp->rms_eps = 1e-5f;
    hp->rope_theta = 10000.0f;
    hp->rope_factor = 1.0f;
    hp->embd_scale = hp->resid_scale = hp->logit_scale = hp->rope_attn_factor = 1.0f;
    hp->moe_norm_topk = -1;
    hp->moe_step = 1;
}

/* Fill unset derived fields. */
static void finish(hparams *hp) {
    if (hp->n_head_kv == 0) hp->n_head_kv = hp->n_head;
    if (hp->head_dim == 0 && hp->n_head > 0) hp->head_dim = hp->n_embd / hp->n_head;
    if (hp->rot_dim == 0) hp->rot_dim = hp->head_dim;
    if (hp->n_ctx_train == 0) hp->n_ctx_train = 2048;
    /* Mixtral's experts are intermediate_size wide; llama.cpp's default for the shared one. */
    if (hp->n_expert > 0 && hp->n_ff_exp == 0) hp->n_ff_exp = hp->n_ff;
    if (hp->n_expert > 0 && hp->n_ff_shexp == 0) hp->n_ff_shexp = hp->n_ff;
}

bool hparams_layer_is_moe(const hparams *hp, int il) {
    if (hp->n_expert <= 0 || il < 0 || il >= 4096) return false;
    if (hp->moe_dense[il / 64] >> (il % 64) & 1) return false;
    return hp->moe_step > 0 && (il + 1) % hp->moe_step == 0;
}

static void store(hparams *hp, const key_spec *k, double v) {
    char *p = (char *)hp + k->offset;
    if (k->kind == K_INT)
        *(int *)p = (int)v;
    else
        *(float *)p = (float)v;
}

int hparams_from_gguf(hparams *hp, const gguf_file *f, const char *arch, wick_error *err) {
    set_defaults(hp);
    char key[160];
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const key_spec *k = &KEYS[i];
        if (!k->gguf) continue;
        snprintf(key, sizeof key, "%s.%s", arch, k->gguf);
        int found;
        double v;
        if (k->kind == K_INT) {
            int64_t iv = 0;
            found = gguf_get_int(f, key, &iv, err);
            if (found == 1 && (iv < 0 || iv > (1 << 30)))
                return wick_fail(err, "GGUF key %s = %lld is out of range", key, (long long)iv);
            v = (double)iv;
        } else {
            found = gguf_get_float(f, key, &v, err);
        }
        if (found < 0) return -1;
        if (found == 0 && k->required) return wick_fail(err, "missing GGUF key %s", key);
        if (found == 1) store(hp, k, v);
    }
    snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
    char *stype = NULL;
    int found = gguf_get_string(f, key, &stype, err);
    if (found < 0) return -1;
    if (found == 1) {
        if (strcmp(stype, "linear") == 0) {
            hp->rope_scaling = ROPE_SCALING_LINEAR;
            snprintf(key, sizeof key, "%s.rope.scaling.factor", arch);
            double fct = 1.0;
            if (gguf_get_float(f, key, &fct, err) < 0) {
                free(stype);
                return -1;
            }
            hp->rope_factor = (float)fct;
        } else if (strcmp(stype, "none") != 0) {
            wick_fail_code(err, WICK_E_UNSUPPORTED, "unsupported RoPE scaling type \"%s\" (%s)", stype, key);
            free(stype);
            return -1;
        }
        free(stype);
    }
    snprintf(key, sizeof key, "%s.expert_weights_norm", arch);
    bool norm = false;
    found = gguf_get_bool(f, key, &norm, err);
    if (found < 0) return -1;
    if (found == 1) hp->moe_norm_topk = norm;
    /* routing wick does not do (DeepSeek's sigmoid gating, scaled weights) */
    snprintf(key, sizeof key, "%s.expert_gating_func", arch);
    int64_t gating = 1; /* llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX */
    found = gguf_get_int(f, key, &gating, err);
    if (found < 0) return -1;
    if (found == 1 && gating != 1)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "unsupported expert gating function %lld (%s); wick routes by softmax", (long long)gating, key);
    snprintf(key, sizeof key, "%s.expert_weights_scale", arch);
    double scale = 1.0;
    found = gguf_get_float(f, key, &scale, err);
    if (found < 0) return -1;
    if (found == 1 && scale != 1.0)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "unsupported expert weights scale %g (%s)", scale, key);
    finish(hp);
    return 0;
}

void hparams_to_gguf(const hparams *hp, const char *arch, gguf_writer *w) {
    char key[160];
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const key_spec *k = &KEYS[i];
        if (!k->gguf) continue; /* HF only (num_local_experts, decoder_sparse_step) */
        const char *p = (const char *)hp + k->offset;
        snprintf(key, sizeof key, "%s.%s", arch, k->gguf);
        if (k->kind == K_INT) {
            int v;
            memcpy(&v, p, sizeof v);
            if (v > 0) gguf_set_u32(w, key, (uint32_t)v); /* 0: not set (sliding window, vocab size) */
        } else {
            float v;
            memcpy(&v, p, sizeof v);
            gguf_set_f32(w, key, v);
        }
    }
    /* llama.cpp takes the value head size from its own key (default hidden / heads) */
    snprintf(key, sizeof key, "%s.attention.value_length", arch);
    gguf_set_u32(w, key, (uint32_t)hp->head_dim);
    if (hp->rope_scaling == ROPE_SCALING_LINEAR) {
        snprintf(key, sizeof key, "%s.rope.scaling.type", arch);
        gguf_set_str(w, key, "linear");
        snprintf(key, sizeof key, "%s.rope.scaling.factor", arch);
        gguf_set_f32(w, key, hp->rope_factor);
    }
}

void hparams_rope_freq_factors(const hparams *hp, float *factors) {
    const int half = hp->rot_dim / 2;
    float scaled[256];
    if (half <= 0 || half > 256) return; /* hparams_validate keeps rot_dim <= 256 */
    hparams plain = *hp;
    plain.rope_scaling = ROPE_SCALING_NONE;
    hparams_rope_inv_freq(&plain, NULL, factors);
    hparams_rope_inv_freq(hp, NULL, scaled);
    for (int i = 0; i < half; i++) factors[i] /= scaled[i];
}

/* HF mixture-of-experts keys beyond the table: norm_topk_prob, mlp_only_layers. */
static int hf_moe(hparams *hp, const cJSON *cfg, wick_error *err) {
    bool norm = false; /* transformers' default for Qwen2-MoE and Qwen3-MoE */
    if (json_get_bool(cfg, "norm_topk_prob", &norm, "config.json", err) < 0) return -1;
    hp->moe_norm_topk = norm;
    const cJSON *only = cJSON_GetObjectItemCaseSensitive(cfg, "mlp_only_layers");
    if (!only || cJSON_IsNull(only)) return 0;
    if (!cJSON_IsArray(only)) return wick_fail(err, "config.json: \"mlp_only_layers\" must be an array of layer numbers");
    const cJSON *e;
    cJSON_ArrayForEach(e, only) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= 4096 || e->valuedouble != (int)e->valuedouble)
            return wick_fail(err, "config.json: \"mlp_only_layers\" holds something other than a layer number below 4096");
        const int il = (int)e->valuedouble;
        hp->moe_dense[il / 64] |= (uint64_t)1 << (il % 64);
    }
    return 0;
}

static int hf_rope_scaling(hparams *hp, const cJSON *rs, wick_error *err) {
    const char *what = "config.json rope_scaling";
    const char *type = NULL;
    if (json_get_string(rs, "rope_type", &type, what, err) < 0) return -1;
    if (!type && json_get_string(rs, "type", &type, what, err) < 0) return -1;
    if (!type || strcmp(type, "default") == 0) return 0;
    if (strcmp(type, "longrope") == 0 || strcmp(type, "su") == 0) {
        hp->rope_scaling = ROPE_SCALING_LONGROPE; /* factors and attention factor: arch_hparams.c */
        return 0;
    }
    double factor = 1.0;
    if (json_get_double(rs, "factor", &factor, what, err) < 0) return -1;
    if (!(factor > 0)) return wick_fail(err, "%s: factor must be > 0", what);
    hp->rope_factor = (float)factor;
    if (strcmp(type, "linear") == 0) {
        hp->rope_scaling = ROPE_SCALING_LINEAR;
        return 0;
    }
    if (strcmp(type, "llama3") == 0) {
        hp->rope_scaling = ROPE_SCALING_LLAMA3;
        double lo = 1.0, hi = 4.0;
        int64_t orig = 8192;
        if (json_get_double(rs, "low_freq_factor", &lo, what, err) < 0 ||
            json_get_double(rs, "high_freq_factor", &hi, what, err) < 0 ||
            json_get_int(rs, "original_max_position_embeddings", 1, 1 << 30, &orig, what, err) <
                0)
            return -1;
        if (!(hi > lo)) return wick_fail(err, "%s: high_freq_factor must exceed low_freq_factor", what);
        hp->rope_low_freq_factor = (float)lo;
        hp->rope_high_freq_factor = (float)hi;
        hp->rope_orig_ctx = (int)orig;
        return 0;
    }
    return wick_fail_code(err, WICK_E_UNSUPPORTED, "unsupported RoPE scaling type \"%s\" in config.json", type);
}

int hparams_from_hf(hparams *hp, const cJSON *cfg, const char *model_type, wick_error *err) {
    set_defaults(hp);
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        const key_spec *k = &KEYS[i];
        if (!k->hf) continue;
        double v;
        int found;
        if (k->kind == K_INT) {
            int64_t iv = 0;
            found = json_get_int(cfg, k->hf, 0, 1 << 30, &iv, "config.json", err);
            v = (double)iv;
        } else {
            found = json_get_double(cfg, k->hf, &v, "config.json", err);
        }
        if (found < 0) return -1;
        if (found == 0 && k->required) return wick_fail(err, "config.json: missing \"%s\"", k->hf);
        if (found == 1) store(hp, k, v);
    }
    /* Qwen2 configs carry sliding_window but only use it with use_sliding_window. */
    bool use_sw = true;
    if (strncmp(model_type, "qwen", 4) == 0) {
        use_sw = false;
        if (json_get_bool(cfg, "use_sliding_window", &use_sw, "config.json", err) < 0) return -1;
    }
    if (!use_sw) hp->sliding_window = 0;
    bool tied = false;
    if (json_get_bool(cfg, "tie_word_embeddings", &tied, "config.json", err) < 0) return -1;
    hp->tied = tied;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(cfg, "rope_scaling");
    if (rs && cJSON_IsObject(rs) && hf_rope_scaling(hp, rs, err) < 0) return -1;
    if (rs && !cJSON_IsObject(rs) && !cJSON_IsNull(rs))
        return wick_fail(err, "config.json: \"rope_scaling\" must be an object");
    if (hp->n_expert > 0 && hf_moe(hp, cfg, err) < 0) return -1;
    finish(hp);
    return 0;
}

int hparams_validate(const hparams *hp, wick_error *err) {
    if (hp->n_embd <= 0 || hp->n_layer <= 0 || hp->n_ff <= 0 || hp->n_head <= 0)
        return wick_fail(err, "hyperparameters must be positive (hidden %d, layers %d, ffn %d, heads %d)",
                         hp->n_embd, hp->n_layer, hp->n_ff, hp->n_head);
    if (hp->n_head_kv <= 0 || hp->n_head % hp->n_head_kv != 0)
        return wick_fail(err, "attention heads (%d) must be a multiple of KV heads (%d)",
                         hp->n_head, hp->n_head_kv);
    if (hp->head_dim <= 0 || hp->head_dim > 256 || hp->head_dim % 2 != 0)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "head dimension %d is not supported (even, at most 256)", hp->head_dim);
    if (hp->rot_dim <= 0 || hp->rot_dim > hp->head_dim || hp->rot_dim % 2 != 0)
        return wick_fail(err, "RoPE dimension %d does not fit head dimension %d", hp->rot_dim,
                         hp->head_dim);
    if (!(hp->rms_eps > 0) || !(hp->rope_theta > 0))
        return wick_fail(err, "rms_norm_eps and rope_theta must be positive");
    if (hp->n_layer > 4096 || hp->n_embd > 65536 || hp->n_head > 1024)
        return wick_fail(err, "hyperparameters out of range (layers %d, hidden %d, heads %d)",
                         hp->n_layer, hp->n_embd, hp->n_head);
    if (hp->n_expert < 0 || hp->n_expert > HPARAMS_MAX_EXPERTS)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "expert count %d is not supported (at most %d)", hp->n_expert, HPARAMS_MAX_EXPERTS);
    if (hp->n_expert > 0) {
        if (hp->n_expert_used <= 0 || hp->n_expert_used > hp->n_expert || hp->n_expert_used > HPARAMS_MAX_EXPERTS_USED)
            return wick_fail(err, "experts used per token %d must be 1..%d (of %d experts)", hp->n_expert_used,
                             HPARAMS_MAX_EXPERTS_USED, hp->n_expert);
        if (hp->n_ff_exp <= 0 || hp->n_ff_shexp <= 0 || hp->n_ff_exp > (1 << 20) || hp->n_ff_shexp > (1 << 20))
            return wick_fail(err, "expert feed-forward widths %d / %d must be positive", hp->n_ff_exp, hp->n_ff_shexp);
        if (hp->moe_step <= 0 || hp->moe_step > hp->n_layer)
            return wick_fail(err, "decoder_sparse_step %d must be 1..%d", hp->moe_step, hp->n_layer);
    } else if (hp->n_expert_used > 0) {
        return wick_fail(err, "%d experts used per token, but the model has no experts", hp->n_expert_used);
    }
    return 0;
}

const char *rope_scaling_name(rope_scaling_type t) {
    switch (t) {
    case ROPE_SCALING_LINEAR: return "linear";
    case ROPE_SCALING_LLAMA3: return "llama3";
    case ROPE_SCALING_LONGROPE: return "longrope";
    default: return "none";
    }
}

void hparams_rope_inv_freq(const hparams *hp, const float *freq_factors, float *inv_freq) {
    int half = hp->rot_dim / 2;
    for (int i = 0; i < half; i++) {
        double f = pow((double)hp->rope_theta, -2.0 * i / hp->rot_dim);
        if (hp->rope_scaling == ROPE_SCALING_LINEAR) {
            f /= hp->rope_factor;
        } else if (hp->rope_scaling == ROPE_SCALING_LLAMA3) {
            /* HF _compute_llama3_parameters: keep high frequencies, divide low
             * ones by factor, interpolate smoothly in between. */
            double low_wavelen = hp->rope_orig_ctx / hp->rope_low_freq_factor;
            double high_wavelen = hp->rope_orig_ctx / hp->rope_high_freq_factor;
            double wavelen = 2.0 * M_PI / f;
            if (wavelen > low_wavelen) {
                f /= hp->rope_factor;
            } else if (wavelen >= high_wavelen) {
                double smooth = (hp->rope_orig_ctx / wavelen - hp->rope_low_freq_factor) /
                                (hp->rope_high_freq_factor - hp->rope_low_freq_factor);
                f = (1.0 - smooth) * f / hp->rope_factor + smooth * f;
            }
        }
        if (freq_factors) f /= freq_factors[i];
        inv_freq[i] = (float)f;
    }
}
