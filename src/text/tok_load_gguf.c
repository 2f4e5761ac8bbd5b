/* tok_load_gguf.c — building a tokenizer from the tokenizer.ggml.* keys of a
 * GGUF file, following llama.cpp's conventions: model "llama" is SentencePiece
 * BPE merged by token score with <0xXX> byte fallback and a ' ' prefix; model
 * "gpt2" is byte-level BPE merged by rank, pre-split by the regexes that
 * tokenizer.ggml.pre names (pretokenize.c); model "bert" is WordPiece
 * (wordpiece.c) over NFD text, [CLS] + text + [SEP] with add_special, decoded
 * as U+2581 -> ' ' without the first space. Token types: 1 normal, 2 unknown,
 * 3 control, 4 user-defined, 5 unused, 6 byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

static const char META[] = "\xe2\x96\x81";

/* Optional numeric array with exactly n elements; NULL if absent. */
static const gguf_value *num_array(const gguf_file *f, const char *key, uint64_t n, int *bad) {
    const gguf_value *v = gguf_get(f, key);
    if (!v) return NULL;
    if (v->type != GGUF_ARRAY || v->arr.n != n || v->arr.type == GGUF_STRING || v->arr.type == GGUF_ARRAY ||
        v->arr.type == GGUF_BOOL || !v->arr.data) {
        *bad = 1;
        return NULL;
    }
    return v;
}

static int get_id(const gguf_file *f, const char *key, int32_t *out, wick_error *err) {
    int64_t v;
    int r = gguf_get_int(f, key, &v, err);
    if (r < 0) return -1;
    if (r == 1) *out = (v >= 0 && v < INT32_MAX) ? (int32_t)v : -1;
    return 0;
}

tokenizer *tok_load_gguf(const gguf_file *f, wick_error *err) {
    char *model = NULL, *pre = NULL, *tmpl = NULL, *cat = NULL;
    size_t cat_cap = 0;
    tokenizer *t = NULL;
    if (!f) {
        wick_fail(err, "tok_load_gguf: no file");
        return NULL;
    }
    int r = gguf_get_string(f, "tokenizer.ggml.model", &model, err);
    if (r <= 0) {
        if (r == 0) wick_fail(err, "GGUF has no tokenizer (tokenizer.ggml.model missing)");
        return NULL;
    }
    bool spm = !strcmp(model, "llama"), wpm = !strcmp(model, "bert");
    if (!spm && !wpm && strcmp(model, "gpt2") != 0) {
        wick_fail_code(err, WICK_E_UNSUPPORTED, "GGUF tokenizer model \"%s\" is not supported (only llama, gpt2, bert)", model);
        goto fail;
    }
    if (gguf_get_string(f, "tokenizer.ggml.pre", &pre, err) < 0) goto fail;

    const gguf_value *toks = gguf_get(f, "tokenizer.ggml.tokens");
    if (!toks || toks->type != GGUF_ARRAY || toks->arr.type != GGUF_STRING || !toks->arr.strs) {
        wick_fail(err, "GGUF tokenizer.ggml.tokens is missing or not a string array");
        goto fail;
    }
    uint64_t n = toks->arr.n;
    if (n == 0 || n >= (1u << 26)) {
        wick_fail(err, "GGUF tokenizer.ggml.tokens has a bad count %llu", (unsigned long long)n);
        goto fail;
    }
    int bad = 0;
    const gguf_value *scores = num_array(f, "tokenizer.ggml.scores", n, &bad);
    const gguf_value *types = num_array(f, "tokenizer.ggml.token_type", n, &bad);
    if (bad) {
        wick_fail(err, "GGUF tokenizer.ggml.scores / token_type do not match the %llu tokens",
                  (unsigned long long)n);
        goto fail;
    }

    t = tok_new(spm ? TOK_KIND_SPM : wpm ? TOK_KIND_WPM : TOK_KIND_BPE_BYTELEVEL, err);
    if (!t || tok_resize(t, (int)n, err)) goto fail;
    for (uint64_t i = 0; i < n; i++) {
        const gguf_str *s = &toks->arr.strs[i];
        float sc = scores ? (float)gguf_arr_float(scores, i) : 0.0f;
        int64_t ty = types ? gguf_arr_int(types, i) : TT_NORMAL;
        if (ty < TT_NORMAL || ty > TT_BYTE) ty = TT_NORMAL;
        if (s->len > (1u << 20)) {
            wick_fail(err, "GGUF token %llu is too long", (unsigned long long)i);
            goto fail;
        }
        if (tok_set_token(t, (int32_t)i, s->ptr, (size_t)s->len, sc, (int)ty, err)) goto fail;
    }
    if (tok_build_map(t, err)) goto fail;
    snprintf(t->pre_name, sizeof t->pre_name, "%s", pre ? pre : "");

    if (spm) {
        t->model = MODEL_BPE_SCORE;
        t->byte_fallback = true;
        t->bos = 1;
        t->eos = 2;
        t->unk = 0;
        t->add_bos = true;
        bool prefix = true;
        if (gguf_get_bool(f, "tokenizer.ggml.add_space_prefix", &prefix, err) < 0) goto fail;
        t->add_space_prefix = prefix;
        t->strip_leading_space = prefix;
        if (prefix) {
            tok_norm pn = {.kind = NORM_PREPEND, .a = (char *)META, .alen = 3};
            if (tok_add_norm(t, &pn, err)) goto fail;
        }
        tok_norm rp = {.kind = NORM_REPLACE, .a = (char *)" ", .alen = 1, .b = (char *)META, .blen = 3};
        if (tok_add_norm(t, &rp, err)) goto fail;
    } else if (wpm) {
        tok_norm nfd = {.kind = NORM_NFD};
        if (tok_add_norm(t, &nfd, err)) goto fail;
        t->strip_leading_space = true; /* the default decoders: U+2581 -> ' ', first one dropped */
        t->unk = tok_find(t, "[UNK]");
        t->bos = tok_find(t, "[CLS]");
        t->eos = tok_find(t, "[SEP]");
        t->add_bos = t->add_eos = true;
    } else {
        const char *rx[8];
        int nrx = tok_gguf_pre_regexes(pre, rx, 8);
        if (nrx == 0) {
            wick_fail_code(err, WICK_E_UNSUPPORTED, "GGUF tokenizer.ggml.pre \"%s\" is not supported", pre ? pre : "");
            goto fail;
        }
        const char *pn = pre && *pre ? pre : "default";
        if (!strcmp(pn, "qwen2")) { /* Qwen's tokenizer.json normalizes to NFC */
            tok_norm nfc = {.kind = NORM_NFC};
            if (tok_add_norm(t, &nfc, err)) goto fail;
        }
        for (int i = 0; i < nrx; i++) {
            tok_pre sp = {.kind = PRE_SPLIT, .pattern = (char *)rx[i], .pattern_is_regex = true,
                          .behavior = SPLIT_ISOLATED};
            if (tok_add_pre(t, &sp, err)) goto fail;
        }
        t->byte_level = true;
        if (!strcmp(pn, "llama3") || !strcmp(pn, "llama-v3") || !strcmp(pn, "llama-bpe") ||
            !strcmp(pn, "falcon3") || !strcmp(pn, "tekken")) {
            t->ignore_merges = true;
            t->add_bos = true;
        }
        if (!strcmp(pn, "chameleon")) t->add_bos = true;
        const gguf_value *merges = gguf_get(f, "tokenizer.ggml.merges");
        if (!merges || merges->type != GGUF_ARRAY || merges->arr.type != GGUF_STRING || !merges->arr.strs) {
            wick_fail(err, "GGUF tokenizer.ggml.merges is missing or not a string array");
            goto fail;
        }
        for (uint64_t i = 0; i < merges->arr.n; i++) {
            const gguf_str *m = &merges->arr.strs[i];
            const char *sp = m->len > 1 ? memchr(m->ptr + 1, ' ', (size_t)m->len - 1) : NULL;
            if (!sp) continue;
            size_t la = (size_t)(sp - m->ptr), lb = (size_t)m->len - la - 1;
            int32_t a = tok_find_n(t, m->ptr, la), b = tok_find_n(t, sp + 1, lb);
            if (a < 0 || b < 0) continue;
            if (!GROW_ARRAY(cat, la + lb, &cat_cap)) {
                wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
                goto fail;
            }
            memcpy(cat, m->ptr, la);
            memcpy(cat + la, sp + 1, lb);
            int32_t res = tok_find_n(t, cat, la + lb);
            if (res >= 0 && tok_add_merge(t, a, b, res, err)) goto fail;
        }
    }

    if (get_id(f, "tokenizer.ggml.bos_token_id", &t->bos, err) ||
        get_id(f, "tokenizer.ggml.eos_token_id", &t->eos, err) ||
        get_id(f, "tokenizer.ggml.unknown_token_id", &t->unk, err) ||
        get_id(f, "tokenizer.ggml.padding_token_id", &t->pad, err))
        goto fail;
    if (wpm && (get_id(f, "tokenizer.ggml.cls_token_id", &t->bos, err) ||
                get_id(f, "tokenizer.ggml.seperator_token_id", &t->eos, err) || /* llama.cpp's spelling */
                get_id(f, "tokenizer.ggml.sep_token_id", &t->eos, err)))
        goto fail;
    bool b;
    r = gguf_get_bool(f, "tokenizer.ggml.add_bos_token", &b, err);
    if (r < 0) goto fail;
    if (r == 1) t->add_bos = b;
    r = gguf_get_bool(f, "tokenizer.ggml.add_eos_token", &b, err);
    if (r < 0) goto fail;
    if (r == 1) t->add_eos = b;
    r = gguf_get_string(f, "tokenizer.chat_template", &tmpl, err);
    if (r < 0) goto fail;
    t->chat_template = tmpl;
    tmpl = NULL;
    if (wpm && (t->unk < 0 || t->unk >= t->n_vocab)) t->unk = -1;
    if (wpm && tok_wpm_setup(t, err)) goto fail;
    if (tok_finalize(t, err)) goto fail;
    free(model);
    free(pre);
    free(cat);
    return t;
fail:
    free(model);
    free(pre);
    free(tmpl);
    free(cat);
    tok_free(t);
    return NULL;
}
