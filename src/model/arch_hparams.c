/* arch_hparams.c — hyperparameters of the architecture features (Granite, Gemma 2/3, Phi-3)
 * (see arch_hparams.h). Each feature's value comes from the file when it
 * names it, else from the arch table (arch.c); all defaults are "off" for
 * Llama, Mistral and Qwen. */
#include "model/arch_hparams.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json_util.h"

/* Values not given by the file: NAN until arch_hparams_finish. */
typedef struct feature_key {
    const char *gguf; /* suffix after "<arch>." (NULL = no GGUF key) */
    const char *hf;   /* config.json key (NULL = none) */
    size_t offset;    /* float in hparams */
    bool reciprocal;  /* the file holds 1/value (Granite logits_scaling divides the logits) */
    bool null_is_off; /* config.json null means "none" (0), as HF's Optional fields */
} feature_key;

#define OFF(f) offsetof(hparams, f)
static const feature_key KEYS[] = {
    {"embedding_scale", "embedding_multiplier", OFF(embd_scale), false, false},
    {"residual_scale", "residual_multiplier", OFF(resid_scale), false, false},
    {"attention.scale", "attention_multiplier", OFF(attn_scale), false, false},
    {"logit_scale", "logits_scaling", OFF(logit_scale), true, false},
    {"attn_logit_softcapping", "attn_logit_softcapping", OFF(attn_softcap), false, true},
    {"final_logit_softcapping", "final_logit_softcapping", OFF(final_softcap), false, true},
    {NULL, "query_pre_attn_scalar", OFF(query_pre_attn_scalar), false, false},
    {"rope.freq_base_swa", "rope_local_base_freq", OFF(rope_theta_local), false, false},
};
#undef OFF
#define N_KEYS (sizeof KEYS / sizeof KEYS[0])

static float *field(hparams *hp, const feature_key *k) { return (float *)((char *)hp + k->offset); }
static float cfield(const hparams *hp, const feature_key *k) { return *(const float *)((const char *)hp + k->offset); }

static void mark_unset(hparams *hp) {
    for (size_t i = 0; i < N_KEYS; i++) *field(hp, &KEYS[i]) = NAN;
    hp->swa_period = -1;
}

static int store(hparams *hp, const feature_key *k, double v, const char *where, wick_error *err) {
    if (!isfinite(v) || v < 0 || (k->reciprocal && v == 0))
        return wick_fail(err, "%s = %g is out of range", where, v);
    *field(hp, k) = (float)(k->reciprocal ? 1.0 / v : v);
    return 0;
}

int arch_hparams_gguf(hparams *hp, const arch_desc *a, const gguf_file *f, const char *gguf_arch, wick_error *err) {
    (void)a;
    mark_unset(hp);
    char key[160];
    for (size_t i = 0; i < N_KEYS; i++) {
        if (!KEYS[i].gguf) continue;
        snprintf(key, sizeof key, "%s.%s", gguf_arch, KEYS[i].gguf);
        double v;
        const int found = gguf_get_float(f, key, &v, err);
        if (found < 0) return -1;
        if (found == 1 && store(hp, &KEYS[i], v, key, err) < 0) return -1;
    }
    /* LongRoPE (Phi-3 128k): the factors are tensors (loader.c); these keys
     * say how they are used. llama.cpp multiplies cos/sin by the attention
     * factor whenever the key is there. */
    double af;
    snprintf(key, sizeof key, "%s.rope.scaling.attn_factor", gguf_arch);
    int found = gguf_get_float(f, key, &af, err);
    if (found < 0) return -1;
    if (found == 1) {
        if (!(af > 0) || !isfinite(af)) return wick_fail(err, "%s = %g is out of range", key, af);
        hp->rope_attn_factor = (float)af;
    }
    int64_t orig;
    snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", gguf_arch);
    found = gguf_get_int(f, key, &orig, err);
    if (found < 0) return -1;
    if (found == 1) {
        if (orig <= 0 || orig > (1 << 30)) return wick_fail(err, "%s = %lld is out of range", key, (long long)orig);
        hp->rope_orig_ctx = (int)orig;
    }
    return 0;
}

/* HF layer_types ("sliding_attention" / "full_attention" per layer) as the
 * period wick stores: the smallest P >= 0 whose pattern it is (P = 1: none
 * slides, P = 0: all do). */
static int layer_types_period(hparams *hp, const cJSON *lt, wick_error *err) {
    const int n = hp->n_layer;
    if (!cJSON_IsArray(lt) || cJSON_GetArraySize(lt) != n)
        return wick_fail(err, "config.json: \"layer_types\" must be an array of %d strings", n);
    bool sliding[4096];
    if (n > 4096) return wick_fail(err, "config.json: too many layers (%d)", n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, lt) {
        const char *s = cJSON_GetStringValue(e);
        if (!s || (strcmp(s, "sliding_attention") != 0 && strcmp(s, "full_attention") != 0))
            return wick_fail(err, "config.json: layer_types[%d] must be \"sliding_attention\" or \"full_attention\"", i);
        sliding[i] = strcmp(s, "sliding_attention") == 0;
        i++;
    }
    for (int p = 0; p <= n + 1; p++) {
        bool match = true;
        for (int il = 0; il < n && match; il++) match = sliding[il] == (p == 0 || il % p < p - 1);
        if (match) {
            hp->swa_period = p;
            return 0;
        }
    }
    return wick_fail(err, "config.json: \"layer_types\" is not a repeating pattern of sliding layers ending in a "
                          "full one; wick does not run this layout");
}

int arch_hparams_hf(hparams *hp, const arch_desc *a, const cJSON *cfg, wick_error *err) {
    mark_unset(hp);
    const char *what = "config.json";
    for (size_t i = 0; i < N_KEYS; i++) {
        const feature_key *k = &KEYS[i];
        if (!k->hf) continue;
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(cfg, k->hf);
        if (k->null_is_off && cJSON_IsNull(item)) {
            *field(hp, k) = 0.0f;
            continue;
        }
        double v;
        const int found = json_get_double(cfg, k->hf, &v, what, err);
        if (found < 0) return -1;
        char where[96];
        snprintf(where, sizeof where, "config.json \"%s\"", k->hf);
        if (found == 1 && store(hp, k, v, where, err) < 0) return -1;
    }
    /* Sliding layers: Gemma 3's older sliding_window_pattern or the per-layer
     * layer_types of newer configs (read for archs that alternate). */
    if (a->swa_period > 0) {
        int64_t p;
        const int found = json_get_int(cfg, "sliding_window_pattern", 0, 1 << 20, &p, what, err);
        if (found < 0) return -1;
        if (found == 1) hp->swa_period = (int)p;
        const cJSON *lt = cJSON_GetObjectItemCaseSensitive(cfg, "layer_types");
        if (lt && !cJSON_IsNull(lt) && layer_types_period(hp, lt, err) < 0) return -1;
    }
    /* Gemma's configs leave tie_word_embeddings to the class default (true). */
    if (!cJSON_GetObjectItemCaseSensitive(cfg, "tie_word_embeddings")) hp->tied = a->hf_tied;
    /* Phi-3.5 / Phi-4-mini rotate only part of each head. */
    double prf = 1.0;
    if (json_get_double(cfg, "partial_rotary_factor", &prf, what, err) < 0) return -1;
    if (!(prf > 0 && prf <= 1)) return wick_fail(err, "config.json: partial_rotary_factor must be in (0, 1]");
    if (prf < 1) hp->rot_dim = (int)(hp->head_dim * prf);
    if (hp->rope_scaling == ROPE_SCALING_LONGROPE) {
        /* HF _compute_longrope_parameters: the pretrained context is
         * original_max_position_embeddings (top level, or in rope_scaling);
         * the attention factor, unless given, sqrt(1 + ln(s) / ln(orig)) for
         * s = max_position_embeddings / orig > 1. */
        const cJSON *rs = cJSON_GetObjectItemCaseSensitive(cfg, "rope_scaling");
        int64_t orig = 0;
        int found = json_get_int(cfg, "original_max_position_embeddings", 1, 1 << 30, &orig, what, err);
        if (found == 0) found = json_get_int(rs, "original_max_position_embeddings", 1, 1 << 30, &orig, what, err);
        if (found < 0) return -1;
        if (found == 0) orig = hp->n_ctx_train;
        hp->rope_orig_ctx = (int)orig;
        double af = 0;
        found = json_get_double(rs, "attention_factor", &af, "config.json rope_scaling", err);
        if (found < 0) return -1;
        if (found == 1) {
            if (!(af > 0)) return wick_fail(err, "config.json rope_scaling: attention_factor must be > 0");
            hp->rope_attn_factor = (float)af;
        } else {
            const double s = (double)hp->n_ctx_train / (double)orig;
            hp->rope_attn_factor = s > 1.0 ? (float)sqrt(1.0 + log(s) / log((double)orig)) : 1.0f;
        }
    }
    return 0;
}

static float or_default(float v, float dflt) { return isnan(v) ? dflt : v; }

int arch_hparams_finish(hparams *hp, const arch_desc *a, model_format fmt, wick_error *err) {
    if (hp->sliding_window == 0) hp->sliding_window = a->sliding_window;
    if (hp->swa_period < 0) hp->swa_period = a->swa_period;
    hp->attn_softcap = or_default(hp->attn_softcap, a->attn_softcap);
    hp->final_softcap = or_default(hp->final_softcap, a->final_softcap);
    hp->rope_theta_local = or_default(hp->rope_theta_local, a->rope_theta_local);
    hp->resid_scale = or_default(hp->resid_scale, 1.0f);
    hp->logit_scale = or_default(hp->logit_scale, 1.0f);
    hp->query_pre_attn_scalar = or_default(hp->query_pre_attn_scalar, 0.0f);
    /* Embeddings: Gemma multiplies by sqrt(n_embd) (as a float), Granite by
     * embedding_multiplier. llama.cpp reads 0 as "none" for Granite's keys. */
    if (a->embd_scale_sqrt) hp->embd_scale = sqrtf((float)hp->n_embd);
    else if (isnan(hp->embd_scale) || hp->embd_scale == 0) hp->embd_scale = 1.0f;
    if (hp->resid_scale == 0) hp->resid_scale = 1.0f;
    /* Attention: Granite's attention_multiplier, Gemma's
     * query_pre_attn_scalar^-0.5 (GGUF files hold neither for Gemma:
     * llama.cpp derives it from the layer count), else 1/sqrt(head_dim). */
    if (isnan(hp->attn_scale) || hp->attn_scale == 0) {
        if (hp->query_pre_attn_scalar > 0)
            hp->attn_scale = 1.0f / sqrtf(hp->query_pre_attn_scalar);
        else if (fmt == FORMAT_GGUF && a->gguf_scale_by_embd_layers && hp->n_layer == a->gguf_scale_by_embd_layers)
            hp->attn_scale = 1.0f / sqrtf((float)(hp->n_embd / hp->n_head));
        else
            hp->attn_scale = 1.0f / sqrtf((float)hp->head_dim);
    }
    const float vals[] = {hp->embd_scale, hp->resid_scale, hp->logit_scale, hp->attn_scale, hp->rope_attn_factor};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
        if (!isfinite(vals[i]) || !(vals[i] > 0))
            return wick_fail(err, "embedding, residual, attention and logit scales must be positive and finite");
    if (!isfinite(hp->attn_softcap) || hp->attn_softcap < 0 || !isfinite(hp->final_softcap) || hp->final_softcap < 0)
        return wick_fail(err, "soft-capping values must be >= 0 (0 = none)");
    if (hp->sliding_window < 0 || hp->swa_period < 0 || hp->rope_theta_local < 0 || !isfinite(hp->rope_theta_local))
        return wick_fail(err, "sliding window, its layer pattern and the local RoPE base must be >= 0");
    if (hp->rope_scaling == ROPE_SCALING_LONGROPE && hp->rope_orig_ctx <= 0)
        return wick_fail(err, "LongRoPE needs the original context length");
    return 0;
}

int arch_hf_longrope_factors(const hparams *hp, const cJSON *cfg, float *out, wick_error *err) {
    const int half = hp->rot_dim / 2;
    const cJSON *rs = cJSON_GetObjectItemCaseSensitive(cfg, "rope_scaling");
    static const char *const NAMES[2] = {"short_factor", "long_factor"};
    for (int k = 0; k < 2; k++) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(rs, NAMES[k]);
        if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != half)
            return wick_fail(err, "config.json rope_scaling: \"%s\" must be a list of %d numbers", NAMES[k], half);
        int i = 0;
        const cJSON *e;
        cJSON_ArrayForEach(e, a) {
            if (!cJSON_IsNumber(e)) return wick_fail(err, "config.json rope_scaling: \"%s\" must hold numbers", NAMES[k]);
            out[k * half + i++] = (float)e->valuedouble;
        }
    }
    return 0;
}

/* hp's features as wick reads them from a GGUF file of arch a that has none
 * of the feature keys. */
static int gguf_defaults(const hparams *hp, const arch_desc *a, hparams *g, wick_error *err) {
    *g = *hp;
    mark_unset(g);
    return arch_hparams_finish(g, a, FORMAT_GGUF, err);
}

int arch_hparams_gguf_check(const hparams *hp, const arch_desc *a, wick_error *err) {
    hparams g;
    if (gguf_defaults(hp, a, &g, err) < 0) return -1;
    /* GGUF files give the sliding layers by the arch's fixed pattern only (llama.cpp's too) */
    for (int il = 0; il < hp->n_layer; il++) {
        const int w = hparams_layer_window(hp, il);
        if (w == hparams_layer_window(&g, il)) continue;
        char has[64], which[64] = "every layer";
        if (w) snprintf(has, sizeof has, "slides a %d-token window", w);
        else snprintf(has, sizeof has, "attends to the whole context");
        if (g.swa_period > 1) snprintf(which, sizeof which, "%d of every %d layers", g.swa_period - 1, g.swa_period);
        return wick_fail(err, "layer %d %s, which a GGUF file of %s cannot say (its %d-token window "
                              "applies to %s)",
                         il, has, a->name, g.sliding_window, which);
    }
    return 0;
}

int arch_hparams_to_gguf(const hparams *hp, const hparams *named, const arch_desc *a, const char *gguf_arch,
                         gguf_writer *w, wick_error *err) {
    hparams g;
    if (arch_hparams_gguf_check(hp, a, err) < 0 || gguf_defaults(hp, a, &g, err) < 0) return -1;
    char key[160];
    for (size_t i = 0; i < N_KEYS; i++) {
        const feature_key *k = &KEYS[i];
        if (!k->gguf) continue;
        const float v = cfield(hp, k), n = cfield(named, k);
        const bool given = !isnan(n) && !(k->null_is_off && n == 0); /* HF null: "none", written only if needed */
        if (!given && v == cfield(&g, k)) continue;
        snprintf(key, sizeof key, "%s.%s", gguf_arch, k->gguf);
        gguf_set_f32(w, key, k->reciprocal ? (float)(1.0 / v) : v);
    }
    if (a->gguf_window_required && hp->sliding_window == 0) {
        snprintf(key, sizeof key, "%s.attention.sliding_window", gguf_arch);
        gguf_set_u32(w, key, 0);
    }
    if (hp->rope_scaling == ROPE_SCALING_LONGROPE) {
        snprintf(key, sizeof key, "%s.rope.scaling.attn_factor", gguf_arch);
        gguf_set_f32(w, key, hp->rope_attn_factor);
        snprintf(key, sizeof key, "%s.rope.scaling.original_context_length", gguf_arch);
        gguf_set_u32(w, key, (uint32_t)hp->rope_orig_ctx);
    }
    if (a->moe && a->moe->gating == MOE_SOFTMAX_TOPK && hp->moe_norm_topk >= 0) {
        snprintf(key, sizeof key, "%s.expert_weights_norm", gguf_arch);
        gguf_set_bool(w, key, hp->moe_norm_topk != 0);
    }
    return 0;
}

cJSON *arch_hf_text_config(const arch_desc *a, const cJSON *cfg, wick_error *err) {
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(cfg, "text_config");
    if (!cJSON_IsObject(tc)) {
        wick_fail(err, "config.json: model_type \"%s\" needs a \"text_config\" object", a->hf_multimodal_type);
        return NULL;
    }
    cJSON *out = cJSON_Parse(a->hf_text_defaults ? a->hf_text_defaults : "{}");
    if (!out) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, tc) {
        cJSON *copy = cJSON_Duplicate(e, 1);
        if (!copy || !e->string) {
            cJSON_Delete(copy);
            cJSON_Delete(out);
            wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
            return NULL;
        }
        if (cJSON_GetObjectItemCaseSensitive(out, e->string))
            cJSON_ReplaceItemInObjectCaseSensitive(out, e->string, copy);
        else
            cJSON_AddItemToObject(out, e->string, copy);
    }
    return out;
}

const arch_desc *arch_hf_open_config(const char *dir, const char *verb, char *path, size_t cap, cJSON **cfg,
                                     const char **model_type, wick_error *err) {
    *cfg = NULL;
    *model_type = NULL;
    if (path_join(path, cap, dir, "config.json") < 0) {
        wick_fail(err, "path too long: %s", dir);
        return NULL;
    }
    if (!file_exists(path)) {
        wick_fail(err, "%s has no config.json (not a model directory)", dir);
        return NULL;
    }
    if (!(*cfg = json_read_file(path, err))) return NULL;
    int rc = json_get_string(*cfg, "model_type", model_type, "config.json", err);
    if (rc == 0) wick_fail(err, "config.json has no \"model_type\" (%s)", path);
    const arch_desc *a = rc > 0 ? arch_by_hf(*model_type) : NULL;
    if (rc > 0 && !a) wick_fail(err, "unknown architecture \"%s\" (%s); wick %s %s", *model_type, path, verb, arch_list());
    if (!a) {
        cJSON_Delete(*cfg);
        *cfg = NULL;
        *model_type = NULL;
    }
    return a;
}
