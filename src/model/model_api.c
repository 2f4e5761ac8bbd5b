/* model_api.c — the public read-only queries on a loaded model: info for
 * `wick info`, the tensor listing, and the tokenizer entry points (the
 * model's tokenizer, tokenize, a token's text). The sampling defaults are in
 * gen_config.c. */
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "core/error.h"
#include "model/model.h"
#include "model/moe.h"

void wick_model_get_info(const wick_model *m, wick_model_info *info) {
    const hparams *hp = &m->hp;
    memset(info, 0, sizeof *info);
    info->arch = m->arch->name;
    info->format = m->format == FORMAT_GGUF ? "gguf" : "hf";
    info->n_vocab = hp->n_vocab;
    info->n_embd = hp->n_embd;
    info->n_layer = hp->n_layer;
    info->n_head = hp->n_head;
    info->n_head_kv = hp->n_head_kv;
    info->head_dim = hp->head_dim;
    info->n_ff = hp->n_ff;
    info->n_ctx_train = hp->n_ctx_train;
    info->rms_eps = hp->rms_eps;
    info->rope_theta = hp->rope_theta;
    info->rope_scaling = rope_scaling_name(hp->rope_scaling);
    info->rope_factor = hp->rope_factor;
    info->tied_embeddings = hp->tied;
    info->qkv_bias = m->layers[0].bq != NULL;
    info->qk_norm = m->layers[0].q_norm != NULL;
    info->sliding_window = hp->sliding_window;
    info->n_params = m->n_params;
    info->weight_bytes = m->weight_bytes;
    info->tokenizer_kind = tok_kind_name(m->tok);
    info->tokenizer_vocab = tok_n_vocab(m->tok);
    info->bos = tok_bos(m->tok);
    info->eos = tok_eos(m->tok);
    info->add_bos = tok_adds_bos(m->tok);
    info->has_chat_template = tok_chat_template(m->tok) != NULL;
    info->decode_bytes = m->decode_bytes;
    info->resident_bytes = m->resident_bytes;
    info->converted_to = m->converted_type >= 0 ? dtype_name(m->converted_type) : NULL;
    info->ffn_act = m->arch->act == FFN_GELU_TANH ? "gelu_tanh" : "silu";
    info->attn_scale = hp->attn_scale;
    info->embd_scale = hp->embd_scale;
    info->resid_scale = hp->resid_scale;
    info->logit_scale = hp->logit_scale;
    info->attn_softcap = hp->attn_softcap;
    info->final_softcap = hp->final_softcap;
    info->sliding_period = hp->swa_period;
    info->rope_theta_local = m->inv_freq_local ? hp->rope_theta_local : 0.0f;
    info->fused_qkv = m->arch->fused_qkv;
    info->post_norms = m->arch->post_norms;
    for (int il = 0; il < hp->n_layer; il++) {
        const struct moe_weights *mw = m->layers[il].moe;
        if (!mw) continue;
        info->n_moe_layers++;
        info->n_expert = mw->n_expert;
        info->n_expert_used = mw->n_used;
        info->n_ff_exp = mw->n_ff;
        info->n_ff_shexp = mw->n_ff_shared;
    }
}

static const wick_tensor *tensor_at(const wick_model *m, int i) {
    return m->format == FORMAT_GGUF ? gguf_tensor(m->gguf, i) : st_tensor(m->st, i);
}

void model_compute_identity(wick_model *m) {
    const hparams *hp = &m->hp;
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, m->arch->name, strlen(m->arch->name) + 1);
    const int32_t ints[] = {hp->n_vocab, hp->n_embd, hp->n_layer, hp->n_head, hp->n_head_kv, hp->head_dim,
                            hp->n_ff, hp->rot_dim, hp->sliding_window, (int32_t)m->rope, m->converted_type};
    XXH3_128bits_update(&st, ints, sizeof ints);
    XXH3_128bits_update(&st, &hp->rms_eps, sizeof hp->rms_eps);
    if (hp->n_expert > 0) { /* routing: which experts and how they are weighed */
        const int32_t moe[] = {hp->n_expert, hp->n_expert_used, hp->n_ff_exp, hp->n_ff_shexp, hp->moe_norm_topk,
                               hp->moe_step};
        XXH3_128bits_update(&st, moe, sizeof moe);
        XXH3_128bits_update(&st, hp->moe_dense, sizeof hp->moe_dense);
    }
    if (m->inv_freq) XXH3_128bits_update(&st, m->inv_freq, (size_t)(hp->rot_dim / 2) * sizeof *m->inv_freq);
    /* the architecture features (Granite, Gemma, Phi-3; all 1 / 0 for the others) */
    const float feats[] = {hp->attn_scale, hp->embd_scale, hp->resid_scale, hp->logit_scale, hp->attn_softcap,
                           hp->final_softcap, hp->rope_attn_factor, (float)hp->swa_period};
    XXH3_128bits_update(&st, feats, sizeof feats);
    if (m->inv_freq_local) XXH3_128bits_update(&st, m->inv_freq_local, (size_t)(hp->rot_dim / 2) * sizeof(float));
    if (m->inv_freq_long) XXH3_128bits_update(&st, m->inv_freq_long, (size_t)(hp->rot_dim / 2) * sizeof(float));
    const int n = wick_model_n_tensors(m);
    for (int i = 0; i < n; i++) {
        const wick_tensor *t = tensor_at(m, i);
        XXH3_128bits_update(&st, t->name, strlen(t->name) + 1);
        const int64_t shape[5] = {t->type, t->ne[0], t->ne[1], t->ne[2], t->ne[3]};
        XXH3_128bits_update(&st, shape, sizeof shape);
        const size_t k = t->nbytes < 64 ? t->nbytes : 64;
        if (t->data && k) {
            XXH3_128bits_update(&st, t->data, k);
            XXH3_128bits_update(&st, (const char *)t->data + t->nbytes - k, k);
        }
    }
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    m->identity[0] = h.low64;
    m->identity[1] = h.high64;
}

int wick_model_n_tensors(const wick_model *m) {
    return m->format == FORMAT_GGUF ? gguf_n_tensors(m->gguf) : st_n_tensors(m->st);
}

void wick_model_tensor(const wick_model *m, int i, const char **name, const char **type,
                       int *n_dims, int64_t ne[4]) {
    const wick_tensor *t = tensor_at(m, i);
    *name = t->name;
    *type = (m->format == FORMAT_HF && t->type < 0) ? st_dtype_name(m->st, i) : dtype_name(t->type);
    *n_dims = t->n_dims;
    memcpy(ne, t->ne, 4 * sizeof ne[0]);
}

int wick_tokenize(const wick_model *m, const char *text, size_t len, bool add_special,
                  int32_t *out, int cap, wick_error *err) {
    int32_t *ids = NULL;
    size_t n = 0;
    /* no need to tokenize past what fits: stop once the count passes cap */
    int rc = tok_encode_limit(m->tok, text, len, add_special, true, cap > 0 ? (size_t)cap : 0, 0, &ids, &n, NULL, err);
    if (rc < 0) return -1;
    if (n > (size_t)1 << 30) {
        free(ids);
        return wick_fail_code(err, WICK_E_TOO_LONG, "text is too long to tokenize");
    }
    if (rc == 1) return (int)n; /* a lower bound on the count, > cap */
    for (size_t i = 0; i < n && (int)i < cap; i++) out[i] = ids[i];
    free(ids);
    return (int)n;
}

int wick_token_piece(const wick_model *m, int32_t id, char *buf, size_t cap) {
    return tok_piece(m->tok, id, buf, cap);
}

const wick_tokenizer *wick_model_tokenizer(const wick_model *m) { return m ? m->tok : NULL; }

int wick_model_set_chat_template(wick_model *m, const char *tmpl, wick_error *err) {
    if (tok_set_chat_template(m->tok, tmpl) < 0) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    return 0;
}
