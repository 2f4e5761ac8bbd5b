/* loader.c — wick_model_load: open a GGUF file or an HF directory, read the
 * hyperparameters, bind every weight tensor by role (checking type and
 * shape), load the tokenizer; the end-of-generation ids and sampling
 * defaults come from gen_config.c. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fileio.h"
#include "core/threadpool.h"
#include "core/weight_alloc.h"
#include "kernels/convert.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/tuning_env.h"
#include "model/arch_hparams.h"
#include "model/grammar_vocab.h"
#include "model/loader.h"
#include "model/model.h"

#include <sys/mman.h>
#include <unistd.h>

static const wick_tensor *find_tensor(const wick_model *m, const char *name) {
    if (m->format == FORMAT_GGUF) return gguf_find_tensor(m->gguf, name);
    const wick_tensor *t = st_find_tensor(m->st, name);
    if (t || !m->hf_multimodal || strncmp(name, "model.", 6) != 0) return t;
    /* HF Gemma 3 multimodal checkpoints: the text model under a prefix (arch.h) */
    for (int i = 0; i < ARCH_HF_N_TEXT_PREFIXES && !t; i++) {
        char alt[256];
        snprintf(alt, sizeof alt, "%s%s", arch_hf_text_prefixes[i], name + 6);
        t = st_find_tensor(m->st, alt);
    }
    return t;
}

static const wick_tensor *aligned_tensor(loader *L, const wick_tensor *t);

/* Bind tensor `role` (layer il) and check its shape {ne0, ne1} (ne1 = 0 for a
 * vector). Returns NULL with err set if required and absent or malformed;
 * NULL without error if optional and absent. */
static const wick_tensor *bind(loader *L, tensor_role role, int il, int64_t ne0, int64_t ne1,
                               bool required, bool matmul) {
    char name[128];
    if (!arch_tensor_name(L->m->arch, name, sizeof name, L->m->format, role, il)) return NULL;
    const wick_tensor *t = find_tensor(L->m, name);
    if (!t) {
        if (required) wick_fail_code(L->err, WICK_E_FORMAT, "missing tensor '%s' (%s)", name, L->path);
        return NULL;
    }
    if (!dtype_supported(t->type)) {
        wick_fail_code(L->err, WICK_E_UNSUPPORTED, "tensor '%s' has unsupported type %s (%s); wick supports F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS",
                       name, t->type < 0 ? "(unknown)" : dtype_name(t->type), L->path);
        return NULL;
    }
    int want_dims = ne1 ? 2 : 1;
    bool ok = t->n_dims == want_dims && t->ne[0] == ne0 && (ne1 == 0 || t->ne[1] == ne1);
    if (!ok) {
        if (ne1)
            wick_fail_code(L->err, WICK_E_FORMAT, "tensor '%s' has shape [%lld, %lld], expected [%lld, %lld] (%s)", name,
                           (long long)t->ne[1], (long long)t->ne[0], (long long)ne1, (long long)ne0,
                           L->path);
        else
            wick_fail_code(L->err, WICK_E_FORMAT, "tensor '%s' has %d dims (first %lld), expected a vector of %lld (%s)",
                           name, t->n_dims, (long long)t->ne[0], (long long)ne0, L->path);
        return NULL;
    }
    if (matmul && t->ne[0] % dtype_block_elems(t->type) != 0) {
        wick_fail_code(L->err, WICK_E_FORMAT, "tensor '%s' row length %lld is not a multiple of the %s block (%s)",
                       name, (long long)t->ne[0], dtype_name(t->type), L->path);
        return NULL;
    }
    return aligned_tensor(L, t);
}

/* Keep p (malloc'd) until the model is freed; NULL if p is NULL or on OOM. */
static void *own(wick_model *m, void *p) {
    if (!p) return NULL;
    if (m->n_owned == INT_MAX || !GROW_ARRAY(m->owned, (size_t)m->n_owned + 1, &m->cap_owned)) {
        free(p);
        return NULL;
    }
    m->owned[m->n_owned++] = p;
    return p;
}

/* `bytes` for a weight copy: from the phase's arena, else a buffer of its own. */
static void *weight_copy_buffer(loader *L, size_t bytes) {
    void *p = weight_arena_take(&L->arena[L->phase], bytes);
    return p ? p : own(L->m, weight_alloc(bytes));
}

/* Safetensors may place a tensor at an offset that is not a multiple of its
 * element size; kernels read whole elements, so such a tensor gets an
 * aligned copy the model owns. */
static const wick_tensor *aligned_tensor(loader *L, const wick_tensor *t) {
    size_t elem = dtype_block_bytes(t->type);
    if (dtype_block_elems(t->type) > 1) elem = 2; /* block types: their fp16 fields */
    if ((uintptr_t)t->data % elem == 0) return t;
    wick_tensor *copy = own(L->m, malloc(sizeof *copy));
    void *data = own(L->m, aligned_alloc(64, (t->nbytes + 63) & ~(size_t)63));
    if (!copy || !data) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    memcpy(data, t->data, t->nbytes);
    *copy = *t;
    copy->data = data;
    return copy;
}

/* An f32 copy of a vector tensor, owned by the model. */
static const float *bind_vec(loader *L, tensor_role role, int il, int64_t n, bool required,
                             bool *failed) {
    const wick_tensor *t = bind(L, role, il, n, 0, required, false);
    if (!t) {
        if (required || L->err->msg[0]) *failed = true;
        return NULL;
    }
    float *v = own(L->m, malloc((size_t)n * sizeof *v));
    if (!v) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        *failed = true;
        return NULL;
    }
    dequantize_row(t->type, t->data, v, n);
    return v;
}

/* A norm weight: bind_vec, plus one where the arch's HF files store w for a
 * norm that scales by 1 + w (Gemma; llama.cpp's converter already added it). */
static const float *bind_norm(loader *L, tensor_role role, int il, int64_t n, bool required, bool *failed) {
    float *v = (float *)bind_vec(L, role, il, n, required, failed);
    if (v && L->m->format == FORMAT_HF && L->m->arch->hf_norm_plus_one)
        for (int64_t i = 0; i < n; i++) v[i] += 1.0f;
    return v;
}

/* Rows [r0, r0 + n) of matrix t as a tensor of their own (no copy: the rows
 * of every supported type are contiguous). A fused projection is split this
 * way so that matmul_multi, --dtype and the R16 repack see ordinary
 * matrices: each part is repacked by itself, so no 16-row group straddles
 * two parts (a part of fewer than 16·k rows keeps the file layout). */
static const wick_tensor *rows_view(loader *L, const wick_tensor *t, int64_t r0, int64_t n) {
    wick_tensor *v = own(L->m, malloc(sizeof *v));
    if (!v) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    const size_t rb = dtype_row_bytes(t->type, t->ne[0]);
    *v = *t;
    v->ne[1] = n;
    v->data = (const char *)t->data + (size_t)r0 * rb;
    v->nbytes = (size_t)n * rb;
    return v;
}

/* Bind a fused projection of sum(rows) rows (optional: NULL without error if
 * absent) and split it into parts. Returns 1 if bound, 0 if absent, -1 on error. */
static int bind_fused(loader *L, tensor_role role, int il, int64_t cols, const int64_t *rows, int n,
                      const wick_tensor **out[]) {
    int64_t total = 0;
    for (int i = 0; i < n; i++) total += rows[i];
    const wick_tensor *t = bind(L, role, il, cols, total, false, true);
    if (!t) return L->err->msg[0] ? -1 : 0;
    int64_t r0 = 0;
    for (int i = 0; i < n; r0 += rows[i], i++)
        if (!(*out[i] = rows_view(L, t, r0, rows[i]))) return -1;
    return 1;
}

/* The RoPE frequency sets (model.h): global (with the file's scaling), the
 * sliding layers' local one, LongRoPE's long one. */
static int rope_frequencies(loader *L) {
    wick_model *m = L->m;
    hparams *hp = &m->hp;
    const int half = hp->rot_dim / 2;
    bool failed = false;
    const float *freq_factors = NULL, *lr_short = m->longrope_factors, *lr_long = NULL;
    if (m->format == FORMAT_GGUF) {
        freq_factors = bind_vec(L, T_ROPE_FREQS, 0, half, false, &failed);
        /* LongRoPE in GGUF: the two factor tensors (llama.cpp's phi3) */
        if (!failed) lr_short = bind_vec(L, T_ROPE_SHORT, 0, half, false, &failed);
        if (!failed && lr_short) lr_long = bind_vec(L, T_ROPE_LONG, 0, half, true, &failed);
        if (failed) return -1;
        if (lr_short) {
            hp->rope_scaling = ROPE_SCALING_LONGROPE;
            if (hp->rope_orig_ctx <= 0)
                return wick_fail_code(L->err, WICK_E_FORMAT, "LongRoPE factors without %s.rope.scaling.original_context_length (%s)",
                                      m->arch->gguf_arch, L->path);
        }
    } else if (lr_short) {
        lr_long = lr_short + half;
    }
    if (hp->rope_scaling == ROPE_SCALING_LONGROPE && !lr_short)
        return wick_fail_code(L->err, WICK_E_FORMAT, "LongRoPE scaling without its short/long factors (%s)", L->path);
    for (int i = 0; lr_short && i < half; i++)
        if (!(lr_short[i] > 0) || !(lr_long[i] > 0) || !isfinite(lr_short[i]) || !isfinite(lr_long[i]))
            return wick_fail_code(L->err, WICK_E_FORMAT, "LongRoPE factors must be positive and finite (%s)", L->path);
    const size_t bytes = (size_t)half * sizeof(float);
    m->inv_freq = malloc(bytes);
    if (!m->inv_freq) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    hparams_rope_inv_freq(hp, lr_short ? lr_short : freq_factors, m->inv_freq);
    if (freq_factors && hp->rope_scaling == ROPE_SCALING_NONE) hp->rope_scaling = ROPE_SCALING_LLAMA3;
    if (lr_long) {
        if (!(m->inv_freq_long = own(m, malloc(bytes)))) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        hparams_rope_inv_freq(hp, lr_long, m->inv_freq_long);
    }
    bool local = false;
    for (int il = 0; il < hp->n_layer; il++) local |= hparams_layer_rope_local(hp, il);
    if (local) {
        hparams h = *hp; /* the local base, unscaled (HF rope_local_base_freq with the default RoPE) */
        h.rope_theta = hp->rope_theta_local;
        h.rope_scaling = ROPE_SCALING_NONE;
        if (!(m->inv_freq_local = own(m, malloc(bytes)))) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        hparams_rope_inv_freq(&h, NULL, m->inv_freq_local);
    }
    return 0;
}

static int bind_weights(loader *L) {
    wick_model *m = L->m;
    hparams *hp = &m->hp;
    wick_error_clear(L->err);
    /* The vocabulary size is the embedding's row count. */
    char name[128];
    tensor_name(name, sizeof name, m->format, T_TOK_EMBD, 0);
    const wick_tensor *emb = find_tensor(m, name);
    if (!emb) return wick_fail_code(L->err, WICK_E_FORMAT, "missing tensor '%s' (%s)", name, L->path);
    if (emb->n_dims != 2)
        return wick_fail_code(L->err, WICK_E_FORMAT, "tensor '%s' must be a [vocab, %d] matrix, not %d-D (%s)", name, hp->n_embd,
                              emb->n_dims, L->path);
    m->tok_embd = bind(L, T_TOK_EMBD, 0, hp->n_embd, emb->ne[1], true, false);
    if (!m->tok_embd) return -1;
    int64_t n_vocab = m->tok_embd->ne[1];
    if (n_vocab <= 0 || n_vocab > (1 << 24))
        return wick_fail_code(L->err, WICK_E_FORMAT, "vocabulary size %lld out of range (%s)", (long long)n_vocab, L->path);
    if (hp->n_vocab && hp->n_vocab != n_vocab)
        return wick_fail_code(L->err, WICK_E_FORMAT, "vocab_size %d does not match the embedding's %lld rows (%s)",
                              hp->n_vocab, (long long)n_vocab, L->path);
    hp->n_vocab = (int)n_vocab;

    bool failed = false;
    m->out_norm = bind_norm(L, T_OUTPUT_NORM, 0, hp->n_embd, true, &failed);
    if (failed) return -1;
    m->output = bind(L, T_OUTPUT, 0, hp->n_embd, n_vocab, false, true);
    if (!m->output) {
        if (L->err->msg[0]) return -1;
        if (m->format == FORMAT_HF && !hp->tied) {
            char name[128];
            tensor_name(name, sizeof name, m->format, T_OUTPUT, 0);
            return wick_fail_code(L->err, WICK_E_FORMAT, "missing tensor '%s' (%s)", name, L->path);
        }
        m->output = m->tok_embd;
        hp->tied = true;
    } else {
        hp->tied = false;
    }

    int q_dim = model_q_dim(m), kv_dim = model_kv_dim(m);
    m->layers = calloc((size_t)hp->n_layer, sizeof *m->layers);
    if (!m->layers) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    for (int il = 0; il < hp->n_layer; il++) {
        layer_weights *w = &m->layers[il];
        /* Phi-3 fuses q/k/v and gate/up (split into row views); separate
         * tensors are accepted too, as llama.cpp does. */
        const int64_t qkv_rows[3] = {q_dim, kv_dim, kv_dim}, gu_rows[2] = {hp->n_ff, hp->n_ff};
        const wick_tensor **qkv_out[3] = {&w->wq, &w->wk, &w->wv}, **gu_out[2] = {&w->w_gate, &w->w_up};
        int fused_qkv = 0, fused_gu = 0;
        if (m->arch->fused_qkv && (fused_qkv = bind_fused(L, T_ATTN_QKV, il, hp->n_embd, qkv_rows, 3, qkv_out)) < 0)
            return -1;
        if ((!fused_qkv && (!(w->wq = bind(L, T_ATTN_Q, il, hp->n_embd, q_dim, true, true)) ||
                            !(w->wk = bind(L, T_ATTN_K, il, hp->n_embd, kv_dim, true, true)) ||
                            !(w->wv = bind(L, T_ATTN_V, il, hp->n_embd, kv_dim, true, true)))) ||
            !(w->wo = bind(L, T_ATTN_O, il, q_dim, hp->n_embd, true, true)))
            return -1;
        if (hparams_layer_is_moe(hp, il)) {
            if (moe_bind_layer(L, il, w) < 0) return -1;
        } else {
            if (m->arch->fused_gate_up &&
                (fused_gu = bind_fused(L, T_FFN_GATE_UP, il, hp->n_embd, gu_rows, 2, gu_out)) < 0)
                return -1;
            if ((!fused_gu && (!(w->w_gate = bind(L, T_FFN_GATE, il, hp->n_embd, hp->n_ff, true, true)) ||
                               !(w->w_up = bind(L, T_FFN_UP, il, hp->n_embd, hp->n_ff, true, true)))) ||
                !(w->w_down = bind(L, T_FFN_DOWN, il, hp->n_ff, hp->n_embd, true, true)))
                return -1;
        }
        w->attn_norm = bind_norm(L, T_ATTN_NORM, il, hp->n_embd, true, &failed);
        if (!failed) w->ffn_norm = bind_norm(L, T_FFN_NORM, il, hp->n_embd, true, &failed);
        if (m->arch->post_norms) {
            if (!failed) w->attn_post_norm = bind_norm(L, T_ATTN_POST_NORM, il, hp->n_embd, true, &failed);
            if (!failed) w->ffn_post_norm = bind_norm(L, T_FFN_POST_NORM, il, hp->n_embd, true, &failed);
        }
        /* Biases are required for Qwen2 and accepted for any architecture. */
        bool bias = m->arch->qkv_bias;
        if (!failed) w->bq = bind_vec(L, T_ATTN_Q_BIAS, il, q_dim, bias, &failed);
        if (!failed) w->bk = bind_vec(L, T_ATTN_K_BIAS, il, kv_dim, bias, &failed);
        if (!failed) w->bv = bind_vec(L, T_ATTN_V_BIAS, il, kv_dim, bias, &failed);
        if (m->arch->qk_norm) {
            if (!failed) w->q_norm = bind_norm(L, T_ATTN_Q_NORM, il, hp->head_dim, true, &failed);
            if (!failed) w->k_norm = bind_norm(L, T_ATTN_K_NORM, il, hp->head_dim, true, &failed);
        }
        if (failed) return -1;
    }
    return rope_frequencies(L);
}

static void count_params(wick_model *m) {
    int n = m->format == FORMAT_GGUF ? gguf_n_tensors(m->gguf) : st_n_tensors(m->st);
    m->n_params = 0;
    m->weight_bytes = 0;
    for (int i = 0; i < n; i++) {
        const wick_tensor *t = m->format == FORMAT_GGUF ? gguf_tensor(m->gguf, i) : st_tensor(m->st, i);
        m->n_params += tensor_nelements(t);
        m->weight_bytes += t->nbytes;
    }
}

static int load_gguf(wick_model *m, const char *path, wick_error *err) {
    m->format = FORMAT_GGUF;
    m->gguf = gguf_open(path, err);
    if (!m->gguf) return -1;
    char *arch = NULL;
    int found = gguf_get_string(m->gguf, "general.architecture", &arch, err);
    if (found < 0) return -1;
    if (found == 0) return wick_fail_code(err, WICK_E_FORMAT, "missing GGUF key general.architecture (%s)", path);
    m->arch = arch_by_gguf(arch);
    if (!m->arch) {
        wick_fail_code(err, WICK_E_UNSUPPORTED, "unknown architecture \"%s\" (%s); wick runs %s", arch, path, arch_list());
        free(arch);
        return -1;
    }
    int rc = hparams_from_gguf(&m->hp, m->gguf, arch, err);
    if (rc == 0) rc = arch_hparams_gguf(&m->hp, m->arch, m->gguf, arch, err);
    if (rc == 0) rc = arch_hparams_finish(&m->hp, m->arch, FORMAT_GGUF, err);
    free(arch);
    if (rc < 0) return wick_fail_prefix(err, "%s: ", path);
    /* llama.cpp writes Mixtral as "llama" with experts */
    if (m->hp.n_expert > 0 && !m->arch->moe && m->arch->moe_variant) m->arch = arch_by_name(m->arch->moe_variant);
    m->rope = m->arch->rope_gguf;
    m->tok = tok_load_gguf(m->gguf, err);
    if (!m->tok) return wick_fail_prefix(err, "%s: ", path);
    if (model_read_gguf_sampling(m, err) < 0) return wick_fail_prefix(err, "%s: ", path);
    return 0;
}

/* HF LongRoPE: rope_scaling's short_factor and long_factor lists, rot_dim/2 each. */
static int read_longrope_factors(wick_model *m, const cJSON *cfg, wick_error *err) {
    if (m->hp.rope_scaling != ROPE_SCALING_LONGROPE) return 0;
    float *f = own(m, malloc(2 * (size_t)(m->hp.rot_dim / 2) * sizeof *f));
    if (!f) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    if (arch_hf_longrope_factors(&m->hp, cfg, f, err) < 0) return -1;
    m->longrope_factors = f;
    return 0;
}

static int load_hf(wick_model *m, const char *dir, wick_error *err) {
    m->format = FORMAT_HF;
    char path[4096];
    cJSON *cfg;
    const char *model_type;
    if (!(m->arch = arch_hf_open_config(dir, "runs", path, sizeof path, &cfg, &model_type, err))) return -1;
    cJSON *text = NULL; /* Gemma 3 multimodal: the text model's config */
    m->hf_multimodal = m->arch->hf_multimodal_type && strcmp(model_type, m->arch->hf_multimodal_type) == 0;
    if (m->hf_multimodal) text = arch_hf_text_config(m->arch, cfg, err);
    const cJSON *c = text ? text : cfg;
    int rc = text || !m->hf_multimodal ? hparams_from_hf(&m->hp, c, model_type, err) : -1;
    if (rc == 0) rc = arch_hparams_hf(&m->hp, m->arch, c, err);
    if (rc == 0) rc = read_longrope_factors(m, c, err);
    if (rc == 0) rc = arch_hparams_finish(&m->hp, m->arch, FORMAT_HF, err);
    if (rc < 0) wick_fail_prefix(err, "%s: ", path);
    cJSON_Delete(text);
    cJSON_Delete(cfg);
    if (rc < 0) return -1;
    m->rope = m->arch->rope_hf;
    m->st = st_open_dir(dir, err);
    if (!m->st) return -1;
    m->tok = tok_load_hf_dir(dir, err);
    if (!m->tok) return -1;
    return 0;
}

/* ---- --dtype: convert the matrices at load ---- */

typedef struct conv_job {
    const wick_tensor *src;
    void *dst;
    int to;
    _Atomic int failed;
} conv_job;

static void conv_task(void *arg, int ith, int nth) {
    conv_job *j = arg;
    const int64_t cols = j->src->ne[0], rows = j->src->ne[1];
    const size_t sb = dtype_row_bytes(j->src->type, cols), db = dtype_row_bytes(j->to, cols);
    int64_t lo, hi;
    pool_split(rows, ith, nth, 1, &lo, &hi);
    if (lo >= hi) return;
    float *tmp = malloc((size_t)cols * sizeof *tmp);
    if (!tmp) {
        j->failed = 1;
        return;
    }
    for (int64_t r = lo; r < hi; r++) {
        dequantize_row(j->src->type, (const char *)j->src->data + (size_t)r * sb, tmp, cols);
        char *d = (char *)j->dst + (size_t)r * db;
        switch (j->to) {
        case WICK_F32: memcpy(d, tmp, (size_t)cols * sizeof *tmp); break;
        case WICK_F16: f32_to_f16_row(tmp, (uint16_t *)d, (int)cols); break;
        case WICK_BF16:
            for (int64_t c = 0; c < cols; c++) ((uint16_t *)d)[c] = f32_to_bf16(tmp[c]);
            break;
        default: quantize_row(j->to, tmp, d, cols); break;
        }
    }
    free(tmp);
}

/* Drop the source pages of a converted tensor from memory (they stay in the
 * file; RSS then holds only the converted copy). */
static void release_pages(const wick_tensor *t) {
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return;
    uintptr_t a = ((uintptr_t)t->data + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    uintptr_t b = ((uintptr_t)t->data + t->nbytes) & ~((uintptr_t)pg - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

/* A model-owned copy of t in type `to` (t itself if it already is); a type
 * whose block does not divide t's rows falls back per tensor as
 * llama-quantize does (dtype_fallback: Q4_K -> Q5_0, ..., else F16). */
static const wick_tensor *convert_tensor(loader *L, wick_pool *pool, const wick_tensor *t, int to);

typedef struct map_ctx {
    loader *L;
    wick_pool *pool;
    int to;
} map_ctx;

static const wick_tensor *convert_cb(void *ctx, const wick_tensor *t, int64_t unit_rows) {
    const map_ctx *c = ctx;
    (void)unit_rows;
    return convert_tensor(c->L, c->pool, t, c->to);
}

static const wick_tensor *convert_tensor(loader *L, wick_pool *pool, const wick_tensor *t, int to) {
    if (!t) return t;
    to = dtype_fallback(to, t->ne[0]);
    if (t->type == to) return t;
    const size_t bytes = dtype_row_bytes(to, t->ne[0]) * (size_t)t->ne[1];
    if (L->sizing) {
        L->need += weight_arena_bytes(bytes);
        return t;
    }
    wick_tensor *copy = own(L->m, malloc(sizeof *copy));
    void *data = weight_copy_buffer(L, bytes);
    if (!copy || !data) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory converting '%s' to %s (%zu MiB)", t->name, dtype_name(to), bytes >> 20);
        return NULL;
    }
    conv_job j = {t, data, to, 0};
    pool_run(pool, conv_task, &j);
    if (j.failed) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory converting '%s'", t->name);
        return NULL;
    }
    *copy = *t;
    copy->type = to;
    copy->data = data;
    copy->nbytes = bytes;
    release_pages(t);
    return copy;
}

/* One load phase on a pool of all cores: run it sizing, reserve the
 * phase's arena for what it asked for (the model owns the buffer), then run
 * it for real. */
static int run_phase(loader *L, int phase, int (*run)(loader *, map_ctx *), int to) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    wick_pool *pool = pool_new(cores > 0 ? (int)cores : 1, L->err);
    if (!pool) return -1;
    map_ctx c = {L, pool, to};
    L->phase = phase;
    L->sizing = true;
    L->need = 0;
    int rc = run(L, &c);
    L->sizing = false;
    if (rc == 0 && (!weight_arena_init(&L->arena[phase], L->need) || (L->need && !own(L->m, L->arena[phase].base))))
        rc = wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory for the weights (%zu MiB)", L->need >> 20);
    if (rc == 0) rc = run(L, &c);
    pool_free(pool);
    return rc;
}

/* Every matrix converted to c->to; sizing, what that takes. */
static int convert_all(loader *L, map_ctx *c) {
    wick_model *m = L->m;
    wick_pool *pool = c->pool;
    const int to = c->to;
    int rc = 0;
    const bool tied = m->output == m->tok_embd;
    if (!(m->tok_embd = convert_tensor(L, pool, m->tok_embd, to))) rc = -1;
    if (rc == 0) {
        if (tied) m->output = m->tok_embd;
        else if (!(m->output = convert_tensor(L, pool, m->output, to))) rc = -1;
    }
    for (int il = 0; rc == 0 && il < m->hp.n_layer; il++) {
        layer_weights *w = &m->layers[il];
        const wick_tensor **mats[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->w_gate, &w->w_up, &w->w_down};
        for (size_t i = 0; rc == 0 && i < sizeof mats / sizeof mats[0]; i++)
            if (*mats[i] && !(*mats[i] = convert_tensor(L, pool, *mats[i], to))) rc = -1;
        /* The router stays as stored (llama.cpp's quantizer keeps it too): its top-k is a cliff. */
        if (rc == 0 && w->moe && moe_map_matrices(w->moe, false, convert_cb, c) < 0) rc = -1;
    }
    return rc;
}

/* The --dtype conversion, its copies in one arena. */
static int convert_weights(loader *L, const char *dtype) {
    int to = dtype_from_name(dtype);
    if (to < 0 || !dtype_supported(to) || !quantize_row_supported(to))
        return wick_fail(L->err, "unknown dtype \"%s\"; choose one of %s", dtype, quantize_row_type_names());
    const int rc = run_phase(L, 0, convert_all, to);
    if (rc == 0) L->m->converted_type = to;
    return rc;
}

/* ---- interleaved layouts for the AVX-512 VNNI matmul kernels ---- */

static bool model_owns(const wick_model *m, const void *p) {
    for (int i = 0; i < m->n_owned; i++)
        if (m->owned[i] == p) return true;
    return false;
}

/* t repacked (matmul_repack), in place when the model owns its data (a
 * --dtype copy), else into the phase's arena with the file's pages released. */
static const wick_tensor *repack_tensor(loader *L, wick_pool *pool, const wick_tensor *t) {
    if (!t || matmul_repack_type(&L->m->tuning, t) < 0) return t;
    const bool in_place = model_owns(L->m, t->data) || weight_arena_holds(&L->arena[0], t->data);
    if (L->sizing) {
        if (!in_place) L->need += weight_arena_bytes(t->nbytes);
        return t;
    }
    wick_tensor *copy = own(L->m, malloc(sizeof *copy));
    void *data = in_place ? (void *)t->data : weight_copy_buffer(L, t->nbytes);
    if (!copy || !data) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory repacking '%s' (%zu MiB)", t->name, t->nbytes >> 20);
        return NULL;
    }
    const int type = matmul_repack(&L->m->tuning, pool, t, data);
    if (type < 0) {
        wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory repacking '%s'", t->name);
        return NULL;
    }
    *copy = *t;
    if (!in_place) release_pages(t);
    copy->type = type;
    copy->data = data;
    return copy;
}

static const wick_tensor *repack_cb(void *ctx, const wick_tensor *t, int64_t unit_rows) {
    const map_ctx *c = ctx;
    const int to = matmul_repack_type(&c->L->m->tuning, t);
    if (to < 0 || unit_rows % matmul_repack_unit_rows(to) != 0) return t; /* a packing unit would mix two experts' rows */
    return repack_tensor(c->L, c->pool, t);
}

/* Repack every matrix matmul reads (the output projection, and with it a
 * tied token_embd, whose rows forward reads through matmul_weight_row);
 * sizing, what that takes. */
static int repack_all(loader *L, map_ctx *c) {
    wick_model *m = L->m;
    wick_pool *pool = c->pool;
    int rc = 0;
    const bool tied = m->output == m->tok_embd;
    if (!(m->output = repack_tensor(L, pool, m->output))) rc = -1;
    if (rc == 0 && tied) m->tok_embd = m->output;
    for (int il = 0; rc == 0 && il < m->hp.n_layer; il++) {
        layer_weights *w = &m->layers[il];
        const wick_tensor **mats[] = {&w->wq, &w->wk, &w->wv, &w->wo, &w->w_gate, &w->w_up, &w->w_down};
        for (size_t i = 0; rc == 0 && i < sizeof mats / sizeof mats[0]; i++)
            if (*mats[i] && !(*mats[i] = repack_tensor(L, pool, *mats[i]))) rc = -1;
        if (rc == 0 && w->moe && moe_map_matrices(w->moe, true, repack_cb, c) < 0) rc = -1;
    }
    return rc;
}

/* The repack, its copies in one arena. WICK_REPACK=0 keeps the file layout (tuning_env.h). */
static int repack_weights(loader *L) {
    if (!env_repack_weights()) return 0;
    return run_phase(L, 1, repack_all, -1);
}

/* Bytes of weights one decode step reads: every matrix once (the embedding
 * counts only as the output matrix when tied; a lookup reads one row); of a
 * mixture-of-experts layer only the router, k experts and the shared expert. */
static void count_decode_bytes(wick_model *m) {
    size_t b = m->output->nbytes, idle = 0;
    for (int il = 0; il < m->hp.n_layer; il++) {
        const layer_weights *w = &m->layers[il];
        b += w->wq->nbytes + w->wk->nbytes + w->wv->nbytes + w->wo->nbytes;
        b += w->moe ? moe_decode_bytes(w->moe) : w->w_gate->nbytes + w->w_up->nbytes + w->w_down->nbytes;
        if (w->moe) idle += moe_all_bytes(w->moe) - moe_decode_bytes(w->moe);
    }
    m->decode_bytes = b;
    m->resident_bytes = b + idle;
}

wick_model *wick_model_load(const char *path, const wick_model_params *params, wick_error *err) {
    wick_error local;
    if (!err) err = &local;
    wick_error_clear(err);
    if (!path || !*path) {
        wick_fail(err, "no model path given");
        return NULL;
    }
    wick_model *m = calloc(1, sizeof *m);
    if (!m) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    m->converted_type = -1;
    m->tuning = kernel_tuning_from_env(cpu_get_features());
    if (!(m->lazy = model_lazy_new())) {
        free(m);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    int rc;
    if (dir_exists(path))
        rc = load_hf(m, path, err);
    else if (file_exists(path))
        rc = load_gguf(m, path, err);
    else
        rc = wick_fail_code(err, WICK_E_NOT_FOUND, "model not found: %s (%s)", path, strerror(ENOENT));
    if (rc == 0 && m->hp.n_expert > 0 && !m->arch->moe)
        rc = wick_fail_code(err, WICK_E_FORMAT, "architecture %s has no mixture-of-experts form, but the file names %d experts (%s)",
                            m->arch->name, m->hp.n_expert, path);
    if (rc == 0 && m->arch->moe && m->hp.n_expert <= 0)
        rc = wick_fail_code(err, WICK_E_FORMAT, "%s model without an expert count (%s)", m->arch->name, path);
    if (rc == 0) rc = hparams_validate(&m->hp, err);
    if (rc == 0) {
        loader L = {.m = m, .path = path, .err = err};
        rc = bind_weights(&L);
        if (rc == 0 && params && params->dtype && params->dtype[0]) rc = convert_weights(&L, params->dtype);
        if (rc == 0) rc = repack_weights(&L);
    }
    if (rc == 0 && tok_n_vocab(m->tok) > m->hp.n_vocab)
        rc = wick_fail_code(err, WICK_E_FORMAT, "tokenizer has %d tokens but the model only %d embeddings (%s)",
                            tok_n_vocab(m->tok), m->hp.n_vocab, path);
    if (rc == 0) {
        model_collect_eog(m);
        if (m->format == FORMAT_HF) rc = model_read_generation_config(m, path, err);
    }
    if (rc < 0) {
        wick_model_free(m);
        return NULL;
    }
    count_params(m);
    count_decode_bytes(m);
    model_compute_identity(m);
    if (m->gguf) gguf_forget_metadata(m->gguf);
    return m;
}

void wick_model_free(wick_model *m) {
    if (!m) return;
    for (int i = 0; i < m->n_owned; i++) free(m->owned[i]);
    free(m->owned);
    free(m->layers);
    free(m->inv_freq);
    if (m->tok) tok_free(m->tok);
    if (m->gguf) gguf_close(m->gguf);
    if (m->st) st_close(m->st);
    model_lazy_free(m->lazy);
    free(m);
}

/* ---- for moe_load.c (loader.h) ---- */

const wick_tensor *loader_find(const loader *L, const char *name) { return find_tensor(L->m, name); }
const wick_tensor *loader_aligned(loader *L, const wick_tensor *t) { return aligned_tensor(L, t); }
void *loader_own(loader *L, void *p) { return own(L->m, p); }
