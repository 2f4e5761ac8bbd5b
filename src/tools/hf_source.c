/* hf_source.c — owns reading a Hugging Face directory as a model source (see
 * model_source.h), the way llama.cpp's converter reads it: config.json
 * through the hparams and arch_hparams key tables (a multimodal checkpoint's
 * text_config), every safetensors tensor to its GGUF name by role (arch.c;
 * a multimodal checkpoint's text model under its prefix, its other towers
 * left out), each mixture-of-experts layer's per-expert matrices gathered
 * into llama.cpp's 3-D stacks (expert after expert), the values the formats
 * hold differently (q/k rows where the RoPE layouts differ, Gemma's norms
 * + 1, qwen2moe's [1, n] shared-expert gate as a vector), the tensors GGUF
 * holds in place of config values (Llama-3 rope_freqs, LongRoPE factors),
 * and the GGUF keys of it all. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json_util.h"
#include "kernels/convert.h"
#include "model/arch_hparams.h"
#include "tools/model_source.h"

/* Roles whose rows an HF file keeps in rotate-half order and GGUF in
 * interleaved pairs, when the architecture's two formats differ. */
static const struct {
    tensor_role role;
    bool kv_heads; /* the K side: n_head_kv heads */
} PERMUTED[] = {
    {T_ATTN_Q, false}, {T_ATTN_K, true}, {T_ATTN_Q_BIAS, false}, {T_ATTN_K_BIAS, true},
};

/* Roles that GGUF holds as vectors where HF has a [1, n] matrix (llama.cpp's shapes). */
static const tensor_role VECTOR_ROLES[] = {T_FFN_GATE_INP_SHEXP};

/* HF tensors that carry nothing a GGUF file keeps (llama.cpp's converter drops them). */
static bool hf_ignored(const char *name) {
    const size_t n = strlen(name), k = strlen(".rotary_emb.inv_freq");
    return n >= k && strcmp(name + n - k, ".rotary_emb.inv_freq") == 0;
}

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* A tensor of a multimodal checkpoint outside its text model (vision tower,
 * projector): llama.cpp writes those to a separate projector file. */
static bool outside_text_model(const model_source *s, const char *name) {
    if (!s->hf_multimodal) return false;
    for (int i = 0; i < ARCH_HF_N_TEXT_PREFIXES; i++)
        if (starts_with(name, arch_hf_text_prefixes[i])) return false;
    return true;
}

/* The HF tensor `name` ("model.X"), or a multimodal checkpoint's copy of it
 * under its text model's prefix; NULL if absent. Marks it used. */
static const wick_tensor *hf_find(const model_source *s, const char *name, bool *used) {
    const wick_tensor *t = st_find_tensor(s->st, name);
    for (int i = 0; !t && s->hf_multimodal && starts_with(name, "model.") && i < ARCH_HF_N_TEXT_PREFIXES; i++) {
        char alt[320];
        snprintf(alt, sizeof alt, "%s%s", arch_hf_text_prefixes[i], name + strlen("model."));
        t = st_find_tensor(s->st, alt);
    }
    const int i = st_tensor_index(s->st, t);
    if (i >= 0) used[i] = true;
    return t;
}

/* A new source tensor named `gguf_name` holding HF tensor w as it is. */
static src_tensor *add_plain(model_source *s, const char *gguf_name, const wick_tensor *w, wick_error *err) {
    if (w->type < 0 || dtype_block_elems(w->type) != 1) {
        wick_fail(err, "tensor '%s' has a type wick cannot convert (%s)", w->name, s->path);
        return NULL;
    }
    src_tensor *t = &s->t[s->n];
    snprintf(t->name, sizeof t->name, "%s", gguf_name);
    t->type = w->type;
    t->n_dims = w->n_dims;
    memcpy(t->ne, w->ne, sizeof t->ne);
    t->data = w->data;
    t->nbytes = w->nbytes;
    s->n++;
    return t;
}

static int add_tensor(model_source *s, const wick_tensor *w, tensor_role role, int layer, wick_error *err) {
    char name[128];
    if (!arch_tensor_name(s->arch, name, (int)sizeof name, FORMAT_GGUF, role, layer))
        return wick_fail(err, "tensor '%s' has no GGUF name (%s)", w->name, s->path);
    src_tensor *t = add_plain(s, name, w, err);
    if (!t) return -1;
    if (s->arch->hf_norm_plus_one && tensor_role_is_norm(role)) t->add = 1.0f;
    if (s->arch->rope_hf != s->arch->rope_gguf)
        for (size_t i = 0; i < sizeof PERMUTED / sizeof PERMUTED[0]; i++)
            if (PERMUTED[i].role == role) {
                t->permute_heads = PERMUTED[i].kv_heads ? s->hp.n_head_kv : s->hp.n_head;
                t->head_dim = s->hp.head_dim;
                const int64_t rows = t->n_dims == 1 ? t->ne[0] : src_rows(t);
                if (rows != (int64_t)t->permute_heads * t->head_dim)
                    return wick_fail(err, "tensor '%s' has %lld rows, not %d heads of %d (%s)", w->name,
                                     (long long)rows, t->permute_heads, t->head_dim, s->path);
            }
    return 0;
}

/* A generated F32 vector (rope_freqs, LongRoPE factors) of role `role`. */
static void add_vector(model_source *s, tensor_role role, const float *v, int n) {
    src_tensor *t = &s->t[s->n++];
    tensor_name(t->name, (int)sizeof t->name, FORMAT_GGUF, role, 0);
    t->type = WICK_F32;
    t->n_dims = 1;
    t->ne[0] = n;
    t->ne[1] = t->ne[2] = t->ne[3] = 1;
    t->data = v;
    t->nbytes = (size_t)n * sizeof(float);
}

/* The tensors GGUF holds in place of config values: Llama-3 scaling as
 * rope_freqs.weight, LongRoPE's factors as rope_factors_long/short. */
static int add_rope_tensors(model_source *s, wick_error *err) {
    const int half = s->hp.rot_dim / 2;
    if (s->hp.rope_scaling == ROPE_SCALING_LLAMA3) {
        if (!(s->rope_freqs = malloc((size_t)half * sizeof *s->rope_freqs))) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        hparams_rope_freq_factors(&s->hp, s->rope_freqs);
        add_vector(s, T_ROPE_FREQS, s->rope_freqs, half);
    }
    if (s->longrope) {
        add_vector(s, T_ROPE_LONG, s->longrope + half, half);
        add_vector(s, T_ROPE_SHORT, s->longrope, half);
    }
    return 0;
}

/* Add the HF tensor of `role` (layer il) if the file has it. */
static int map_role(model_source *s, tensor_role role, int il, bool *used, wick_error *err) {
    char name[256];
    if (!arch_tensor_name(s->arch, name, (int)sizeof name, FORMAT_HF, role, il)) return 0;
    const wick_tensor *w = hf_find(s, name, used);
    if (!w) return 0;
    if (role == T_OUTPUT && s->hp.tied) return 0; /* the embedding serves */
    if (add_tensor(s, w, role, il, err) < 0) return -1;
    if (role == T_OUTPUT) s->has_output = true;
    return 0;
}

/* A mixture-of-experts tensor of one HF tensor (router, shared expert), which the layer must have. */
static int map_moe_role(model_source *s, tensor_role role, int il, bool *used, wick_error *err) {
    char hf[256], gg[128];
    if (!moe_tensor_name(hf, (int)sizeof hf, s->arch, FORMAT_HF, role, il, 0) ||
        !moe_tensor_name(gg, (int)sizeof gg, s->arch, FORMAT_GGUF, role, il, 0))
        return 0;
    const wick_tensor *w = hf_find(s, hf, used);
    if (!w) return wick_fail(err, "missing tensor '%s' (%s)", hf, s->path);
    src_tensor *t = add_plain(s, gg, w, err);
    if (!t) return -1;
    for (size_t i = 0; i < sizeof VECTOR_ROLES / sizeof VECTOR_ROLES[0]; i++)
        if (VECTOR_ROLES[i] == role && t->n_dims == 2 && t->ne[1] == 1) t->n_dims = 1;
    return 0;
}

/* Layer il's experts' matrices of one kind (0 gate, 1 up, 2 down) as one 3-D
 * stack {cols, rows, n_expert}, expert e's rows after expert e-1's. */
static int map_expert_stack(model_source *s, int il, int kind, bool *used, wick_error *err) {
    const int E = s->hp.n_expert;
    const tensor_role one = (tensor_role)(T_FFN_GATE_EXP + kind), stack = (tensor_role)(T_FFN_GATE_EXPS + kind);
    const void **parts = calloc((size_t)E, sizeof *parts);
    if (!parts) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    char hf[256], first[256] = "";
    const wick_tensor *w0 = NULL;
    for (int e = 0; e < E; e++) {
        moe_tensor_name(hf, (int)sizeof hf, s->arch, FORMAT_HF, one, il, e);
        const wick_tensor *w = hf_find(s, hf, used);
        int rc = 0;
        if (!w) rc = wick_fail(err, "missing tensor '%s' (%s)", hf, s->path);
        else if (w->n_dims != 2) rc = wick_fail(err, "tensor '%s' is not a matrix (%s)", hf, s->path);
        else if (w->type < 0 || dtype_block_elems(w->type) != 1)
            rc = wick_fail(err, "tensor '%s' has a type wick cannot convert (%s)", hf, s->path);
        else if (w0 && (w->type != w0->type || w->ne[0] != w0->ne[0] || w->ne[1] != w0->ne[1]))
            rc = wick_fail(err, "tensor '%s' differs in type or shape from '%s' (%s)", hf, first, s->path);
        if (rc < 0) {
            free(parts);
            return -1;
        }
        if (!w0) {
            w0 = w;
            snprintf(first, sizeof first, "%s", hf);
        }
        parts[e] = w->data;
    }
    src_tensor *t = &s->t[s->n++];
    moe_tensor_name(t->name, (int)sizeof t->name, s->arch, FORMAT_GGUF, stack, il, 0);
    t->type = w0->type;
    t->n_dims = 3;
    t->ne[0] = w0->ne[0];
    t->ne[1] = w0->ne[1];
    t->ne[2] = E;
    t->ne[3] = 1;
    t->parts = parts;
    t->n_parts = E;
    t->data = parts[0];
    t->nbytes = w0->nbytes * (size_t)E;
    return 0;
}

/* A mixture-of-experts layer: router, expert stacks, the shared expert. */
static int map_moe_layer(model_source *s, int il, bool *used, wick_error *err) {
    if (map_moe_role(s, T_FFN_GATE_INP, il, used, err) < 0) return -1;
    for (int kind = 0; kind < 3; kind++)
        if (map_expert_stack(s, il, kind, used, err) < 0) return -1;
    static const tensor_role SHARED[] = {T_FFN_GATE_INP_SHEXP, T_FFN_GATE_SHEXP, T_FFN_UP_SHEXP, T_FFN_DOWN_SHEXP};
    for (size_t i = 0; s->arch->moe->shared_expert && i < sizeof SHARED / sizeof SHARED[0]; i++)
        if (map_moe_role(s, SHARED[i], il, used, err) < 0) return -1;
    return 0;
}

static int map_hf_tensors(model_source *s, wick_error *err) {
    const int n_st = st_n_tensors(s->st);
    bool *used = calloc((size_t)(n_st ? n_st : 1), sizeof *used);
    s->t = calloc((size_t)n_st + 4, sizeof *s->t); /* stacks take fewer; rope tensors at most 3 more */
    if (!used || !s->t) {
        free(used);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    /* the embedding and the RoPE tensors first, then layer by layer, then the other global roles */
    int rc = map_role(s, T_TOK_EMBD, 0, used, err);
    if (rc == 0) rc = add_rope_tensors(s, err);
    for (int il = 0; il < s->hp.n_layer && rc == 0; il++) {
        for (int r = 0; r < T_ROLE_COUNT && rc == 0; r++)
            if (tensor_role_per_layer((tensor_role)r)) rc = map_role(s, (tensor_role)r, il, used, err);
        if (rc == 0 && hparams_layer_is_moe(&s->hp, il)) rc = map_moe_layer(s, il, used, err);
    }
    for (int r = 0; r < T_ROLE_COUNT && rc == 0; r++)
        if (!tensor_role_per_layer((tensor_role)r) && r != T_TOK_EMBD)
            rc = map_role(s, (tensor_role)r, 0, used, err);
    for (int i = 0; i < n_st && rc == 0; i++) {
        const wick_tensor *w = st_tensor(s->st, i);
        if (!used[i] && !hf_ignored(w->name) && !outside_text_model(s, w->name))
            rc = wick_fail(err, "tensor '%s' has no GGUF name for architecture %s (%s)", w->name, s->arch->name,
                           s->path);
    }
    free(used);
    if (rc < 0) return -1;
    char emb[128], name[256];
    tensor_name(emb, (int)sizeof emb, FORMAT_GGUF, T_TOK_EMBD, 0);
    bool have_emb = false;
    for (int i = 0; i < s->n; i++) have_emb |= strcmp(s->t[i].name, emb) == 0;
    if (!have_emb) {
        arch_tensor_name(s->arch, name, (int)sizeof name, FORMAT_HF, T_TOK_EMBD, 0);
        return wick_fail(err, "missing tensor '%s' (%s)", name, s->path);
    }
    if (!s->hp.tied && !s->has_output) {
        arch_tensor_name(s->arch, name, (int)sizeof name, FORMAT_HF, T_OUTPUT, 0);
        return wick_fail(err, "missing tensor '%s' (%s)", name, s->path);
    }
    return 0;
}

/* config.json (a multimodal checkpoint's text_config) into s->hp, s->named
 * and the LongRoPE factors, as the loader reads it; then what a GGUF file
 * of a mixture-of-experts model cannot hold. */
static int read_config(model_source *s, const cJSON *cfg, const char *model_type, wick_error *err) {
    const arch_desc *a = s->arch;
    s->hf_multimodal = a->hf_multimodal_type && strcmp(model_type, a->hf_multimodal_type) == 0;
    cJSON *text = s->hf_multimodal ? arch_hf_text_config(a, cfg, err) : NULL;
    if (s->hf_multimodal && !text) return -1;
    const cJSON *c = text ? text : cfg;
    int rc = hparams_from_hf(&s->hp, c, model_type, err);
    if (rc == 0) rc = arch_hparams_hf(&s->hp, a, c, err);
    s->named = s->hp;
    if (rc == 0 && s->hp.rope_scaling == ROPE_SCALING_LONGROPE) {
        if (!(s->longrope = malloc(2 * (size_t)(s->hp.rot_dim / 2) * sizeof *s->longrope)))
            rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        else
            rc = arch_hf_longrope_factors(&s->hp, c, s->longrope, err);
    }
    if (rc == 0) rc = arch_hparams_finish(&s->hp, a, FORMAT_HF, err);
    if (rc == 0) rc = hparams_validate(&s->hp, err);
    if (rc == 0) rc = arch_hparams_gguf_check(&s->hp, a, err);
    cJSON_Delete(text);
    if (rc < 0) return -1;
    if (s->hp.n_expert > 0 && !a->moe)
        return wick_fail(err, "architecture %s has no mixture-of-experts form, but the config names %d experts",
                         a->name, s->hp.n_expert);
    if (a->moe && s->hp.n_expert <= 0) return wick_fail(err, "%s model without an expert count", a->name);
    for (int il = 0; a->moe && il < s->hp.n_layer; il++)
        if (!hparams_layer_is_moe(&s->hp, il))
            return wick_fail(err, "layer %d is dense (mlp_only_layers / decoder_sparse_step), which a GGUF file of %s "
                                  "cannot hold (every layer has experts)",
                             il, a->name);
    return 0;
}

int source_open_hf(model_source *s, const char *dir, wick_error *err) {
    s->hf = true;
    char path[4096];
    cJSON *cfg;
    const char *model_type;
    if (!(s->arch = arch_hf_open_config(dir, "converts", path, sizeof path, &cfg, &model_type, err))) return -1;
    const int rc = read_config(s, cfg, model_type, err) < 0 ? wick_fail_prefix(err, "%s: ", path) : 0;
    cJSON_Delete(cfg);
    if (rc < 0) return -1;
    snprintf(s->arch_name, sizeof s->arch_name, "%s", s->arch->gguf_arch);
    s->n_layer = s->hp.n_layer;
    s->n_head = s->hp.n_head;
    s->n_head_kv = s->hp.n_head_kv;
    s->n_expert = s->hp.n_expert;
    if (!(s->st = st_open_dir(dir, err))) return -1;
    if (!(s->tok = tok_load_hf_dir(dir, err))) return -1;
    if (path_join(path, sizeof path, dir, "generation_config.json") == 0 && file_exists(path) &&
        !(s->gen_config = json_read_file(path, err)))
        return -1;
    return map_hf_tensors(s, err);
}

/* ---- metadata ---- */

/* generation_config.json -> llama.cpp's general.sampling.* keys */
static int write_sampling(const cJSON *g, gguf_writer *w, wick_error *err) {
    static const struct {
        const char *hf, *gguf;
        bool integer;
    } KEYS[] = {
        {"temperature", "general.sampling.temp", false}, {"top_k", "general.sampling.top_k", true},
        {"top_p", "general.sampling.top_p", false},      {"min_p", "general.sampling.min_p", false},
        {"repetition_penalty", "general.sampling.penalty_repeat", false},
    };
    const char *what = "generation_config.json";
    bool greedy = false, do_sample = true;
    if (json_get_bool(g, "do_sample", &do_sample, what, err) < 0) return -1;
    greedy = cJSON_GetObjectItemCaseSensitive(g, "do_sample") && !do_sample;
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        double v;
        const int found = json_get_double(g, KEYS[i].hf, &v, what, err);
        if (found < 0) return -1;
        if (found == 0) continue;
        if (KEYS[i].integer) gguf_set_i32(w, KEYS[i].gguf, (int32_t)v);
        else gguf_set_f32(w, KEYS[i].gguf, (float)v);
    }
    if (greedy) gguf_set_f32(w, "general.sampling.temp", 0.0f); /* do_sample false: greedy */
    return 0;
}

/* The last path component of dir, without trailing slashes. */
static void base_name(const char *dir, char *out, size_t cap) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    size_t b = n;
    while (b > 0 && dir[b - 1] != '/') b--;
    snprintf(out, cap, "%.*s", (int)(n - b), dir + b);
}

int source_write_hf_metadata(const model_source *s, gguf_writer *w, wick_error *err) {
    char name[256];
    base_name(s->path, name, sizeof name);
    const char *arch = s->arch->gguf_arch;
    gguf_set_str(w, "general.architecture", arch);
    gguf_set_str(w, "general.name", name);
    hparams hp = s->hp;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->t[i].name, "token_embd.weight") == 0) hp.n_vocab = (int)s->t[i].ne[1];
    /* the expert widths llama.cpp's converters write: an expert's where the
     * config names it apart from intermediate_size, the shared expert's where there is one */
    const moe_desc *md = s->arch->moe;
    if (!md || !md->hf_ff_key) hp.n_ff_exp = 0;
    if (!md || !md->shared_expert) hp.n_ff_shexp = 0;
    hparams_to_gguf(&hp, arch, w);
    if (arch_hparams_to_gguf(&s->hp, &s->named, s->arch, arch, w, err) < 0 ||
        tok_write_gguf(s->tok, hp.n_vocab, w, err) < 0 || (s->gen_config && write_sampling(s->gen_config, w, err) < 0))
        return wick_fail_prefix(err, "%s: ", s->path);
    return 0;
}
