/* model_source.c — owns reading a model (GGUF file or HF directory) as the
 * tensors and keys of a GGUF file (see model_source.h). */
#include "tools/model_source.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json_util.h"
#include "kernels/convert.h"

/* ---- GGUF ---- */

/* An integer hyperparameter "<arch>.<suffix>"; a per-layer array gives its first
 * element. 0 when absent or of another type. */
static int gguf_arch_int(const gguf_file *f, const char *arch, const char *suffix) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    wick_error e;
    int64_t x = 0;
    if (v->type == GGUF_ARRAY) {
        if (v->arr.n == 0 || !v->arr.data) return 0;
        x = gguf_arr_int(v, 0);
    } else if (gguf_get_int(f, key, &x, &e) != 1) {
        return 0;
    }
    return x > 0 && x < (1 << 30) ? (int)x : 0;
}

static int open_gguf(model_source *s, const char *path, wick_error *err) {
    s->gguf = gguf_open(path, err);
    if (!s->gguf) return -1;
    char *arch = NULL;
    const int found = gguf_get_string(s->gguf, "general.architecture", &arch, err);
    if (found < 0) return -1;
    if (found == 0) return wick_fail(err, "missing GGUF key general.architecture (%s)", path);
    snprintf(s->arch_name, sizeof s->arch_name, "%s", arch);
    free(arch);
    s->arch = arch_by_gguf(s->arch_name);
    s->n_layer = gguf_arch_int(s->gguf, s->arch_name, "block_count");
    s->n_head = gguf_arch_int(s->gguf, s->arch_name, "attention.head_count");
    s->n_head_kv = gguf_arch_int(s->gguf, s->arch_name, "attention.head_count_kv");
    if (!s->n_head_kv) s->n_head_kv = s->n_head;
    s->n_expert = gguf_arch_int(s->gguf, s->arch_name, "expert_count");
    s->n = gguf_n_tensors(s->gguf);
    s->t = calloc((size_t)(s->n ? s->n : 1), sizeof *s->t);
    if (!s->t) return wick_fail(err, "out of memory");
    for (int i = 0; i < s->n; i++) {
        const wick_tensor *g = gguf_tensor(s->gguf, i);
        src_tensor *t = &s->t[i];
        if (strlen(g->name) >= sizeof t->name)
            return wick_fail(err, "tensor name '%.40s...' is too long (%s)", g->name, path);
        snprintf(t->name, sizeof t->name, "%s", g->name);
        t->type = g->type;
        t->n_dims = g->n_dims;
        memcpy(t->ne, g->ne, sizeof t->ne);
        t->data = g->data;
        t->nbytes = g->nbytes;
        if (strcmp(t->name, "output.weight") == 0) s->has_output = true;
    }
    return 0;
}

/* ---- Hugging Face ---- */

/* Roles whose rows an HF file keeps in rotate-half order and GGUF in
 * interleaved pairs, when the architecture's two formats differ. */
static const struct {
    tensor_role role;
    bool kv_heads; /* the K side: n_head_kv heads */
} PERMUTED[] = {
    {T_ATTN_Q, false}, {T_ATTN_K, true}, {T_ATTN_Q_BIAS, false}, {T_ATTN_K_BIAS, true},
};

/* HF tensors that carry nothing a GGUF file keeps (llama.cpp's converter drops them). */
static bool hf_ignored(const char *name) {
    const size_t n = strlen(name), k = strlen(".rotary_emb.inv_freq");
    return n >= k && strcmp(name + n - k, ".rotary_emb.inv_freq") == 0;
}

static int add_tensor(model_source *s, const wick_tensor *w, tensor_role role, int layer, wick_error *err) {
    src_tensor *t = &s->t[s->n];
    if (!arch_tensor_name(s->arch, t->name, (int)sizeof t->name, FORMAT_GGUF, role, layer))
        return wick_fail(err, "tensor '%s' has no GGUF name (%s)", w->name, s->path);
    if (w->type < 0 || dtype_block_elems(w->type) != 1)
        return wick_fail(err, "tensor '%s' has a type wick cannot convert (%s)", w->name, s->path);
    t->type = w->type;
    t->n_dims = w->n_dims;
    memcpy(t->ne, w->ne, sizeof t->ne);
    t->data = w->data;
    t->nbytes = w->nbytes;
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
    s->n++;
    return 0;
}

/* Llama-3 RoPE scaling travels as the rope_freqs.weight tensor. */
static int add_rope_freqs(model_source *s, wick_error *err) {
    const int half = s->hp.rot_dim / 2;
    s->rope_freqs = malloc((size_t)half * sizeof *s->rope_freqs);
    if (!s->rope_freqs) return wick_fail(err, "out of memory");
    hparams_rope_freq_factors(&s->hp, s->rope_freqs);
    src_tensor *t = &s->t[s->n++];
    tensor_name(t->name, (int)sizeof t->name, FORMAT_GGUF, T_ROPE_FREQS, 0);
    t->type = WICK_F32;
    t->n_dims = 1;
    t->ne[0] = half;
    t->ne[1] = t->ne[2] = t->ne[3] = 1;
    t->data = s->rope_freqs;
    t->nbytes = (size_t)half * sizeof(float);
    return 0;
}

/* Add the HF tensor of `role` (layer il) if the file has it, marking it used. */
static int map_role(model_source *s, tensor_role role, int il, bool *used, wick_error *err) {
    if (role == T_ROPE_FREQS) return s->hp.rope_scaling == ROPE_SCALING_LLAMA3 ? add_rope_freqs(s, err) : 0;
    char name[256];
    if (!arch_tensor_name(s->arch, name, (int)sizeof name, FORMAT_HF, role, il)) return 0;
    const wick_tensor *w = st_find_tensor(s->st, name);
    if (!w) return 0;
    for (int i = 0; i < st_n_tensors(s->st); i++)
        if (st_tensor(s->st, i) == w) used[i] = true;
    if (role == T_OUTPUT && s->hp.tied) return 0; /* the embedding serves */
    if (add_tensor(s, w, role, il, err) < 0) return -1;
    if (role == T_OUTPUT) s->has_output = true;
    return 0;
}

static int map_hf_tensors(model_source *s, wick_error *err) {
    const int n_st = st_n_tensors(s->st);
    bool *used = calloc((size_t)(n_st ? n_st : 1), sizeof *used);
    s->t = calloc((size_t)n_st + 1, sizeof *s->t);
    if (!used || !s->t) {
        free(used);
        return wick_fail(err, "out of memory");
    }
    /* the embedding (and rope_freqs) first, then layer by layer, then the other global roles */
    int rc = map_role(s, T_TOK_EMBD, 0, used, err);
    if (rc == 0) rc = map_role(s, T_ROPE_FREQS, 0, used, err);
    for (int il = 0; il < s->hp.n_layer && rc == 0; il++)
        for (int r = 0; r < T_ROLE_COUNT && rc == 0; r++)
            if (tensor_role_per_layer((tensor_role)r)) rc = map_role(s, (tensor_role)r, il, used, err);
    for (int r = 0; r < T_ROLE_COUNT && rc == 0; r++)
        if (!tensor_role_per_layer((tensor_role)r) && r != T_TOK_EMBD && r != T_ROPE_FREQS)
            rc = map_role(s, (tensor_role)r, 0, used, err);
    for (int i = 0; i < n_st && rc == 0; i++) {
        const wick_tensor *w = st_tensor(s->st, i);
        if (!used[i] && !hf_ignored(w->name))
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

static int open_hf(model_source *s, const char *dir, wick_error *err) {
    s->hf = true;
    char path[4096];
    if (path_join(path, sizeof path, dir, "config.json") < 0) return wick_fail(err, "path too long: %s", dir);
    if (!file_exists(path)) return wick_fail(err, "%s has no config.json (not a model directory)", dir);
    cJSON *cfg = json_read_file(path, err);
    if (!cfg) return -1;
    const char *model_type = NULL;
    int rc = json_get_string(cfg, "model_type", &model_type, "config.json", err);
    if (rc == 0) rc = wick_fail(err, "config.json has no \"model_type\" (%s)", path);
    if (rc > 0) {
        s->arch = arch_by_hf(model_type);
        if (!s->arch)
            rc = wick_fail(err, "unknown architecture \"%s\" (%s); wick converts %s", model_type, path, arch_list());
        else if (hparams_from_hf(&s->hp, cfg, model_type, err) < 0 || hparams_validate(&s->hp, err) < 0)
            rc = wick_fail_prefix(err, "%s: ", path);
    }
    int64_t n_expert = 0;
    if (rc > 0 && (json_get_int(cfg, "num_local_experts", 0, 1 << 20, &n_expert, "config.json", err) < 0 ||
                   (!n_expert && json_get_int(cfg, "num_experts", 0, 1 << 20, &n_expert, "config.json", err) < 0)))
        rc = -1;
    cJSON_Delete(cfg);
    if (rc < 0) return -1;
    snprintf(s->arch_name, sizeof s->arch_name, "%s", s->arch->gguf_arch);
    s->n_layer = s->hp.n_layer;
    s->n_head = s->hp.n_head;
    s->n_head_kv = s->hp.n_head_kv;
    s->n_expert = (int)n_expert;
    if (!(s->st = st_open_dir(dir, err))) return -1;
    if (!(s->tok = tok_load_hf_dir(dir, err))) return -1;
    if (path_join(path, sizeof path, dir, "generation_config.json") == 0 && file_exists(path) &&
        !(s->gen_config = json_read_file(path, err)))
        return -1;
    return map_hf_tensors(s, err);
}

int source_open(model_source *s, const char *path, wick_error *err) {
    memset(s, 0, sizeof *s);
    s->path = path;
    int rc;
    if (dir_exists(path)) rc = open_hf(s, path, err);
    else if (file_exists(path)) rc = open_gguf(s, path, err);
    else rc = wick_fail(err, "model not found: %s", path);
    if (rc < 0) source_close(s);
    return rc;
}

void source_close(model_source *s) {
    if (s->gguf) gguf_close(s->gguf);
    if (s->st) st_close(s->st);
    if (s->tok) tok_free(s->tok);
    if (s->gen_config) cJSON_Delete(s->gen_config);
    free(s->t);
    free(s->rope_freqs);
    const char *path = s->path;
    memset(s, 0, sizeof *s);
    s->path = path;
}

/* ---- metadata ---- */

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

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

int source_write_metadata(const model_source *s, gguf_writer *w, wick_error *err) {
    if (!s->hf) {
        for (int i = 0; i < gguf_n_kv(s->gguf); i++) {
            const char *key = gguf_kv_key(s->gguf, i);
            const bool skip = strcmp(key, "general.file_type") == 0 ||
                              strcmp(key, "general.quantization_version") == 0 || starts_with(key, "split.");
            if (!skip && gguf_set_value(w, key, gguf_kv_value(s->gguf, i), err) < 0) return wick_fail_prefix(err, "%s: ", s->path);
        }
        return 0;
    }
    char name[256];
    base_name(s->path, name, sizeof name);
    gguf_set_str(w, "general.architecture", s->arch->gguf_arch);
    gguf_set_str(w, "general.name", name);
    hparams hp = s->hp;
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->t[i].name, "token_embd.weight") == 0) hp.n_vocab = (int)s->t[i].ne[1];
    hparams_to_gguf(&hp, s->arch->gguf_arch, w);
    if (tok_write_gguf(s->tok, hp.n_vocab, w, err) < 0) return wick_fail_prefix(err, "%s: ", s->path);
    if (s->gen_config && write_sampling(s->gen_config, w, err) < 0) return wick_fail_prefix(err, "%s: ", s->path);
    return 0;
}

/* ---- rows ---- */

void source_row_f32(const src_tensor *t, int64_t r, float *out, void *scratch) {
    const int64_t cols = t->ne[0];
    const size_t rb = dtype_row_bytes(t->type, cols);
    if (t->permute_heads > 0 && t->n_dims == 1) { /* a bias: its elements are the rows */
        const size_t eb = dtype_block_bytes(t->type);
        const int hd = t->head_dim, half = hd / 2;
        for (int64_t k = 0; k < cols; k++) {
            const int64_t h = k / hd, i = (k % hd) / 2, j = k % 2;
            memcpy(scratch, (const char *)t->data + (size_t)(h * hd + j * half + i) * eb, eb);
            dequantize_row(t->type, scratch, out + k, 1);
        }
        return;
    }
    if (t->permute_heads > 0) { /* GGUF row h·hd + 2i + j holds HF row h·hd + j·hd/2 + i */
        const int64_t hd = t->head_dim, h = r / hd, i = (r % hd) / 2, j = r % 2;
        r = h * hd + j * (hd / 2) + i;
    }
    memcpy(scratch, (const char *)t->data + (size_t)r * rb, rb); /* the map may be unaligned (safetensors) */
    dequantize_row(t->type, scratch, out, cols);
}
