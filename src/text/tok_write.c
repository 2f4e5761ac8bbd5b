/* tok_write.c — writing tokenizers for test models: the GGUF tokenizer.ggml.*
 * keys (llama.cpp conventions) and a Hugging Face tokenizer.json +
 * tokenizer_config.json pair, each chosen so that the matching loader gives
 * back a tokenizer that encodes identically.
 *  - GGUF "llama" needs scores: a tokenizer.json BPE source gets
 *    score = -(rank of the merge producing the token), single characters 0.
 *  - tokenizer.json needs merges: a score-only (GGUF "llama") source gets
 *    merges derived from the scores, as SentencePiece converters do. */
#include <cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/buf.h"
#include "core/fileio.h"
#include "text/tok_internal.h"

static bool single_char(const tokenizer *t, int32_t id) {
    return t->len[id] > 0 && (uint32_t)tok_utf8_len((unsigned char)tok_text(t, id)[0]) == t->len[id];
}

/* ------------------------------------------------------------------ GGUF */

/* The GGUF pre-tokenizer name for a byte-level tokenizer, or NULL. */
static const char *gguf_pre_name(const tokenizer *t) {
    if (t->pre_name[0]) return t->pre_name;
    const char *regex = NULL;
    int n_split = 0;
    bool bl_regex = false;
    for (int i = 0; i < t->n_pres; i++) {
        const tok_pre *p = &t->pres[i];
        if (p->kind == PRE_SPLIT) {
            n_split++;
            regex = p->pattern;
            if (p->behavior != SPLIT_ISOLATED || p->invert || !p->pattern_is_regex) return NULL;
        } else if (p->kind == PRE_BYTELEVEL) {
            if (p->add_prefix_space) return NULL;
            bl_regex = p->use_regex;
        } else {
            return NULL;
        }
    }
    if (n_split == 1 && !bl_regex) return tok_gguf_pre_for_regex(regex);
    if (n_split == 0 && bl_regex) return "gpt-2";
    return NULL;
}

int tok_write_gguf(const tokenizer *t, int32_t n_rows, gguf_writer *w, wick_error *err) {
    if (!t || !w) return wick_fail(err, "tok_write_gguf: NULL argument");
    if (t->kind == TOK_KIND_WPM) return wick_fail_code(err, WICK_E_UNSUPPORTED, "writing WordPiece tokenizers is not supported");
    /* The token list covers every embedding row, as llama.cpp's converter
     * writes it: rows past the tokenizer's ids become unused [PAD<id>] entries
     * (llama.cpp takes the vocabulary size from this list). */
    int n = n_rows > t->n_vocab ? n_rows : t->n_vocab;
    bool spm = t->kind == TOK_KIND_SPM;
    const char *pre = NULL;
    if (!spm) {
        pre = gguf_pre_name(t);
        if (!pre) return wick_fail(err, "tok_write_gguf: the pre-tokenizer has no GGUF tokenizer.ggml.pre name");
    } else if (t->model == MODEL_BPE_RANK && !t->byte_fallback) {
        return wick_fail(err, "tok_write_gguf: a SentencePiece GGUF needs byte fallback");
    }

    const char **strs = malloc((size_t)n * sizeof *strs);
    size_t *lens = malloc((size_t)n * sizeof *lens);
    char *pads = malloc((size_t)n * 24);
    int32_t *types = malloc((size_t)n * sizeof *types);
    float *scores = malloc((size_t)n * sizeof *scores);
    int rc = -1;
    if (!strs || !lens || !pads || !types || !scores) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_gguf: out of memory");
        goto done;
    }
    for (int32_t i = 0; i < n; i++) {
        if (i >= t->n_vocab || t->len[i] == 0) { /* a gap in the ids: a placeholder that can never match */
            char *p = pads + (size_t)i * 24;
            snprintf(p, 24, "[PAD%d]", i);
            strs[i] = p;
            lens[i] = strlen(p);
            types[i] = TT_UNUSED;
            scores[i] = 0.0f;
        } else {
            strs[i] = tok_text(t, i);
            lens[i] = t->len[i];
            types[i] = t->type[i] == TT_UNDEF ? TT_NORMAL : t->type[i];
            scores[i] = t->scores[i];
        }
    }
    if (spm && t->model == MODEL_BPE_RANK) {
        /* scores from merge ranks: the earlier the merge, the higher the score */
        for (int32_t i = 0; i < t->n_vocab; i++) scores[i] = single_char(t, i) ? 0.0f : -(float)(t->n_merges + 1);
        for (int r = t->n_merges - 1; r >= 0; r--) scores[t->merge_res[r]] = -(float)r;
        for (int32_t i = 0; i < n; i++)
            if (types[i] != TT_NORMAL) scores[i] = 0.0f;
    }

    gguf_set_str(w, "tokenizer.ggml.model", spm ? "llama" : "gpt2");
    if (pre) gguf_set_str(w, "tokenizer.ggml.pre", pre);
    gguf_set_arr_strn(w, "tokenizer.ggml.tokens", strs, lens, (size_t)n);
    gguf_set_arr_f32(w, "tokenizer.ggml.scores", scores, (size_t)n);
    gguf_set_arr_i32(w, "tokenizer.ggml.token_type", types, (size_t)n);
    if (!spm) {
        char **ms = malloc((size_t)(t->n_merges ? t->n_merges : 1) * sizeof *ms);
        if (!ms) {
            wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_gguf: out of memory");
            goto done;
        }
        int k = 0;
        for (; k < t->n_merges; k++) {
            int32_t a = t->merge_a[k], b = t->merge_b[k];
            const char *sa = tok_text(t, a);
            if (!t->len[a] || !t->len[b] || memchr(sa + 1, ' ', t->len[a] - 1)) {
                wick_fail(err, "tok_write_gguf: merge %d has a space inside its left token", k);
                break;
            }
            ms[k] = malloc((size_t)t->len[a] + t->len[b] + 2);
            if (!ms[k]) {
                wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_gguf: out of memory");
                break;
            }
            memcpy(ms[k], sa, t->len[a]);
            ms[k][t->len[a]] = ' ';
            memcpy(ms[k] + t->len[a] + 1, tok_text(t, b), t->len[b]);
            ms[k][t->len[a] + 1 + t->len[b]] = 0;
        }
        bool ok = k == t->n_merges;
        if (ok) gguf_set_arr_str(w, "tokenizer.ggml.merges", (const char *const *)ms, (size_t)k);
        for (int i = 0; i < k; i++) free(ms[i]);
        free(ms);
        if (!ok) goto done;
    }
    if (t->bos >= 0) gguf_set_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)t->bos);
    if (t->eos >= 0) gguf_set_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)t->eos);
    if (t->unk >= 0) gguf_set_u32(w, "tokenizer.ggml.unknown_token_id", (uint32_t)t->unk);
    if (t->pad >= 0) gguf_set_u32(w, "tokenizer.ggml.padding_token_id", (uint32_t)t->pad);
    gguf_set_bool(w, "tokenizer.ggml.add_bos_token", tok_adds_bos(t));
    gguf_set_bool(w, "tokenizer.ggml.add_eos_token", tok_adds_eos(t));
    if (spm) gguf_set_bool(w, "tokenizer.ggml.add_space_prefix", t->add_space_prefix);
    if (t->chat_template) gguf_set_str(w, "tokenizer.chat_template", t->chat_template);
    rc = 0;
done:
    free(strs);
    free(lens);
    free(pads);
    free(types);
    free(scores);
    return rc;
}

/* ------------------------------------------------------- derived merges */

typedef struct cand {
    float score;
    int32_t res, a, b;
} cand;

static int cmp_cand(const void *pa, const void *pb) {
    const cand *x = pa, *y = pb;
    if (x->score != y->score) return x->score > y->score ? -1 : 1;
    if (x->res != y->res) return x->res < y->res ? -1 : 1;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

/* Merges for a score-only tokenizer: every split of a normal token into two
 * tokens, best score first. */
static int derive_merges(const tokenizer *t, cand **out, size_t *n_out, wick_error *err) {
    size_t n = 0, cap = 1024;
    cand *c = malloc(cap * sizeof *c);
    if (!c) return wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_hf: out of memory");
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (t->type[id] != TT_NORMAL || t->len[id] < 2 || single_char(t, id)) continue;
        const char *s = tok_text(t, id);
        for (uint32_t k = (uint32_t)tok_utf8_len((unsigned char)s[0]); k < t->len[id];
             k += (uint32_t)tok_utf8_len((unsigned char)s[k])) {
            int32_t a = tok_find_n(t, s, k), b = tok_find_n(t, s + k, t->len[id] - k);
            if (a < 0 || b < 0) continue;
            if (!GROW_ARRAY(c, n + 1, &cap)) {
                free(c);
                return wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_hf: out of memory");
            }
            c[n++] = (cand){t->scores[id], id, a, b};
        }
    }
    qsort(c, n, sizeof *c, cmp_cand);
    *out = c;
    *n_out = n;
    return 0;
}

/* -------------------------------------------------------- tokenizer.json */

static cJSON *jstrn(const char *s, size_t n) {
    char *tmp = tok_strndup(s, n);
    if (!tmp) return NULL;
    cJSON *j = cJSON_CreateString(tmp);
    free(tmp);
    return j;
}

static cJSON *norm_json(const tok_norm *n) {
    cJSON *o = cJSON_CreateObject();
    switch (n->kind) {
    case NORM_NFC: cJSON_AddStringToObject(o, "type", "NFC"); break;
    case NORM_NFD: cJSON_AddStringToObject(o, "type", "NFD"); break;
    case NORM_NFKC: cJSON_AddStringToObject(o, "type", "NFKC"); break;
    case NORM_NFKD: cJSON_AddStringToObject(o, "type", "NFKD"); break;
    case NORM_LOWERCASE: cJSON_AddStringToObject(o, "type", "Lowercase"); break;
    case NORM_PREPEND:
        cJSON_AddStringToObject(o, "type", "Prepend");
        cJSON_AddItemToObject(o, "prepend", jstrn(n->a, n->alen));
        break;
    case NORM_REPLACE: {
        cJSON_AddStringToObject(o, "type", "Replace");
        cJSON *p = cJSON_AddObjectToObject(o, "pattern");
        cJSON_AddItemToObject(p, "String", jstrn(n->a, n->alen));
        cJSON_AddItemToObject(o, "content", jstrn(n->b ? n->b : "", n->blen));
        break;
    }
    case NORM_STRIP:
        cJSON_AddStringToObject(o, "type", "Strip");
        cJSON_AddBoolToObject(o, "strip_left", n->flag1);
        cJSON_AddBoolToObject(o, "strip_right", n->flag2);
        break;
    }
    return o;
}

static cJSON *pre_json(const tok_pre *p) {
    static const char *const BEH[] = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext",
                                      "Contiguous"};
    static const char *const SCHEME[] = {"always", "first", "never"};
    cJSON *o = cJSON_CreateObject();
    switch (p->kind) {
    case PRE_SPLIT: {
        cJSON_AddStringToObject(o, "type", "Split");
        cJSON *pat = cJSON_AddObjectToObject(o, "pattern");
        cJSON_AddStringToObject(pat, p->pattern_is_regex ? "Regex" : "String", p->pattern);
        cJSON_AddStringToObject(o, "behavior", BEH[p->behavior]);
        cJSON_AddBoolToObject(o, "invert", p->invert);
        break;
    }
    case PRE_BYTELEVEL:
        cJSON_AddStringToObject(o, "type", "ByteLevel");
        cJSON_AddBoolToObject(o, "add_prefix_space", p->add_prefix_space);
        cJSON_AddBoolToObject(o, "trim_offsets", false);
        cJSON_AddBoolToObject(o, "use_regex", p->use_regex);
        break;
    case PRE_METASPACE:
        cJSON_AddStringToObject(o, "type", "Metaspace");
        cJSON_AddStringToObject(o, "replacement", p->pattern);
        cJSON_AddStringToObject(o, "prepend_scheme", SCHEME[p->prepend]);
        cJSON_AddBoolToObject(o, "split", p->split);
        break;
    case PRE_DIGITS:
        cJSON_AddStringToObject(o, "type", "Digits");
        cJSON_AddBoolToObject(o, "individual_digits", p->individual_digits);
        break;
    }
    return o;
}

static cJSON *seq_or_single(cJSON *items, const char *seq_type, const char *list_key) {
    int n = cJSON_GetArraySize(items);
    if (n == 0) {
        cJSON_Delete(items);
        return cJSON_CreateNull();
    }
    if (n == 1) {
        cJSON *one = cJSON_DetachItemFromArray(items, 0);
        cJSON_Delete(items);
        return one;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", seq_type);
    cJSON_AddItemToObject(o, list_key, items);
    return o;
}

static cJSON *special_json(const tokenizer *t, int32_t id) {
    cJSON *o = cJSON_CreateObject();
    cJSON *st = cJSON_AddObjectToObject(o, "SpecialToken");
    cJSON_AddItemToObject(st, "id", jstrn(tok_text(t, id), t->len[id]));
    cJSON_AddNumberToObject(st, "type_id", 0);
    return o;
}

static cJSON *post_processor_json(const tokenizer *t) {
    bool bos = tok_adds_bos(t), eos = tok_adds_eos(t);
    if (!bos && !eos) {
        if (!t->byte_level) return cJSON_CreateNull();
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "ByteLevel");
        cJSON_AddBoolToObject(o, "add_prefix_space", false);
        cJSON_AddBoolToObject(o, "trim_offsets", false);
        cJSON_AddBoolToObject(o, "use_regex", false);
        return o;
    }
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "TemplateProcessing");
    cJSON *single = cJSON_AddArrayToObject(o, "single");
    cJSON *pair = cJSON_AddArrayToObject(o, "pair");
    for (int k = 0; k < 2; k++) {
        cJSON *arr = k == 0 ? single : pair;
        const char *seqs[2] = {"A", "B"};
        for (int s = 0; s < (k == 0 ? 1 : 2); s++) {
            if (bos) cJSON_AddItemToArray(arr, special_json(t, t->bos));
            cJSON *sq = cJSON_CreateObject();
            cJSON *inner = cJSON_AddObjectToObject(sq, "Sequence");
            cJSON_AddStringToObject(inner, "id", seqs[s]);
            cJSON_AddNumberToObject(inner, "type_id", s);
            cJSON_AddItemToArray(arr, sq);
            if (eos) cJSON_AddItemToArray(arr, special_json(t, t->eos));
        }
    }
    cJSON *sp = cJSON_AddObjectToObject(o, "special_tokens");
    int32_t ids[2] = {bos ? t->bos : -1, eos ? t->eos : -1};
    for (int k = 0; k < 2; k++) {
        if (ids[k] < 0 || (k == 1 && ids[1] == ids[0])) continue;
        char *name = tok_strndup(tok_text(t, ids[k]), t->len[ids[k]]);
        cJSON *e = cJSON_AddObjectToObject(sp, name ? name : "");
        cJSON_AddStringToObject(e, "id", name ? name : "");
        cJSON *idl = cJSON_AddArrayToObject(e, "ids");
        cJSON_AddItemToArray(idl, cJSON_CreateNumber(ids[k]));
        cJSON *tl = cJSON_AddArrayToObject(e, "tokens");
        cJSON_AddItemToArray(tl, cJSON_CreateString(name ? name : ""));
        free(name);
    }
    return o;
}

static cJSON *dec_json(const tok_dec *d) {
    cJSON *o = cJSON_CreateObject();
    switch (d->kind) {
    case DEC_REPLACE: {
        cJSON_AddStringToObject(o, "type", "Replace");
        cJSON *p = cJSON_AddObjectToObject(o, "pattern");
        cJSON_AddItemToObject(p, "String", jstrn(d->a, d->alen));
        cJSON_AddItemToObject(o, "content", jstrn(d->b, d->blen));
        break;
    }
    case DEC_BYTE_FALLBACK: cJSON_AddStringToObject(o, "type", "ByteFallback"); break;
    case DEC_FUSE: cJSON_AddStringToObject(o, "type", "Fuse"); break;
    case DEC_STRIP:
        cJSON_AddStringToObject(o, "type", "Strip");
        cJSON_AddItemToObject(o, "content", jstrn(d->a, d->alen));
        cJSON_AddNumberToObject(o, "start", d->start);
        cJSON_AddNumberToObject(o, "stop", d->stop);
        break;
    case DEC_METASPACE:
        cJSON_AddStringToObject(o, "type", "Metaspace");
        cJSON_AddItemToObject(o, "replacement", jstrn(d->a, d->alen));
        cJSON_AddStringToObject(o, "prepend_scheme", d->prepend ? "always" : "never");
        cJSON_AddBoolToObject(o, "split", true);
        break;
    case DEC_BYTE_LEVEL:
        cJSON_AddStringToObject(o, "type", "ByteLevel");
        cJSON_AddBoolToObject(o, "add_prefix_space", false);
        cJSON_AddBoolToObject(o, "trim_offsets", false);
        cJSON_AddBoolToObject(o, "use_regex", false);
        break;
    }
    return o;
}

/* The decoder chain (tok_finalize gave every tokenizer one). */
static cJSON *decoder_json(const tokenizer *t) {
    if (t->n_decs == 1) return dec_json(&t->decs[0]);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "type", "Sequence");
    cJSON *l = cJSON_AddArrayToObject(o, "decoders");
    for (int i = 0; i < t->n_decs; i++) cJSON_AddItemToArray(l, dec_json(&t->decs[i]));
    return o;
}

static int write_text(const char *path, const char *text, wick_error *err) {
    FILE *f = fopen(path, "wb");
    if (!f) return wick_fail(err, "cannot create %s: %s", path, strerror(errno));
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n;
    ok = (fclose(f) == 0) && ok;
    if (!ok) return wick_fail(err, "write error on %s", path);
    return 0;
}

static cJSON *tokenizer_json(const tokenizer *t, wick_error *err) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "version", "1.0");
    cJSON_AddNullToObject(root, "truncation");
    cJSON_AddNullToObject(root, "padding");
    cJSON *added = cJSON_AddArrayToObject(root, "added_tokens");
    for (int32_t id = 0; id < t->n_vocab; id++) {
        uint8_t ty = t->type[id];
        if (t->len[id] == 0 || (ty != TT_CONTROL && ty != TT_USER && ty != TT_UNKNOWN)) continue;
        cJSON *a = cJSON_CreateObject();
        cJSON_AddNumberToObject(a, "id", id);
        cJSON_AddItemToObject(a, "content", jstrn(tok_text(t, id), t->len[id]));
        cJSON_AddBoolToObject(a, "single_word", (t->flags[id] & TF_SINGLE_WORD) != 0);
        cJSON_AddBoolToObject(a, "lstrip", (t->flags[id] & TF_LSTRIP) != 0);
        cJSON_AddBoolToObject(a, "rstrip", (t->flags[id] & TF_RSTRIP) != 0);
        cJSON_AddBoolToObject(a, "normalized", (t->flags[id] & TF_NORMALIZED) != 0);
        cJSON_AddBoolToObject(a, "special", ty != TT_USER);
        cJSON_AddItemToArray(added, a);
    }

    cJSON *norms = cJSON_CreateArray();
    for (int i = 0; i < t->n_norms; i++) cJSON_AddItemToArray(norms, norm_json(&t->norms[i]));
    cJSON_AddItemToObject(root, "normalizer", seq_or_single(norms, "Sequence", "normalizers"));

    cJSON *pres = cJSON_CreateArray();
    bool has_bl = false;
    for (int i = 0; i < t->n_pres; i++) {
        cJSON_AddItemToArray(pres, pre_json(&t->pres[i]));
        if (t->pres[i].kind == PRE_BYTELEVEL) has_bl = true;
    }
    if (t->byte_level && !has_bl) {
        tok_pre bl = {.kind = PRE_BYTELEVEL};
        cJSON_AddItemToArray(pres, pre_json(&bl));
    }
    cJSON_AddItemToObject(root, "pre_tokenizer", seq_or_single(pres, "Sequence", "pretokenizers"));
    cJSON_AddItemToObject(root, "post_processor", post_processor_json(t));
    cJSON_AddItemToObject(root, "decoder", decoder_json(t));

    cJSON *model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(model, "type", "BPE");
    cJSON_AddNullToObject(model, "dropout");
    if (t->unk >= 0) cJSON_AddItemToObject(model, "unk_token", jstrn(tok_text(t, t->unk), t->len[t->unk]));
    else cJSON_AddNullToObject(model, "unk_token");
    cJSON_AddNullToObject(model, "continuing_subword_prefix");
    cJSON_AddNullToObject(model, "end_of_word_suffix");
    cJSON_AddBoolToObject(model, "fuse_unk", t->fuse_unk || t->model == MODEL_BPE_SCORE);
    cJSON_AddBoolToObject(model, "byte_fallback", t->byte_fallback);
    cJSON_AddBoolToObject(model, "ignore_merges", t->ignore_merges);
    cJSON *vocab = cJSON_AddObjectToObject(model, "vocab");
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (t->len[id] == 0) continue;
        char *k = tok_strndup(tok_text(t, id), t->len[id]);
        if (!k) {
            cJSON_Delete(root);
            wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_hf: out of memory");
            return NULL;
        }
        cJSON_AddItemToObject(vocab, k, cJSON_CreateNumber(id));
        free(k);
    }
    cJSON *merges = cJSON_AddArrayToObject(model, "merges");
    if (t->model == MODEL_BPE_SCORE) {
        cand *c = NULL;
        size_t nc = 0;
        if (derive_merges(t, &c, &nc, err)) {
            cJSON_Delete(root);
            return NULL;
        }
        for (size_t i = 0; i < nc; i++) {
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, jstrn(tok_text(t, c[i].a), t->len[c[i].a]));
            cJSON_AddItemToArray(pair, jstrn(tok_text(t, c[i].b), t->len[c[i].b]));
            cJSON_AddItemToArray(merges, pair);
        }
        free(c);
    } else {
        for (int r = 0; r < t->n_merges; r++) {
            cJSON *pair = cJSON_CreateArray();
            cJSON_AddItemToArray(pair, jstrn(tok_text(t, t->merge_a[r]), t->len[t->merge_a[r]]));
            cJSON_AddItemToArray(pair, jstrn(tok_text(t, t->merge_b[r]), t->len[t->merge_b[r]]));
            cJSON_AddItemToArray(merges, pair);
        }
    }
    return root;
}

static void add_token_field(cJSON *o, const char *key, const tokenizer *t, int32_t id) {
    if (id >= 0 && t->len[id] > 0) cJSON_AddItemToObject(o, key, jstrn(tok_text(t, id), t->len[id]));
    else cJSON_AddNullToObject(o, key);
}

int tok_write_hf(const tokenizer *t, const char *dir, wick_error *err) {
    if (!t || !dir) return wick_fail(err, "tok_write_hf: NULL argument");
    if (t->kind == TOK_KIND_WPM) return wick_fail_code(err, WICK_E_UNSUPPORTED, "writing WordPiece tokenizers is not supported");
    char p_json[4096], p_cfg[4096];
    if (path_join(p_json, sizeof p_json, dir, "tokenizer.json") ||
        path_join(p_cfg, sizeof p_cfg, dir, "tokenizer_config.json"))
        return wick_fail(err, "tok_write_hf: path too long");

    cJSON *root = tokenizer_json(t, err);
    if (!root) return -1;
    char *text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!text) return wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_hf: out of memory");
    int rc = write_text(p_json, text, err);
    free(text);
    if (rc) return -1;

    cJSON *cfg = cJSON_CreateObject();
    cJSON_AddBoolToObject(cfg, "add_bos_token", tok_adds_bos(t));
    cJSON_AddBoolToObject(cfg, "add_eos_token", tok_adds_eos(t));
    add_token_field(cfg, "bos_token", t, t->bos);
    add_token_field(cfg, "eos_token", t, t->eos);
    add_token_field(cfg, "pad_token", t, t->pad);
    add_token_field(cfg, "unk_token", t, t->unk);
    cJSON_AddBoolToObject(cfg, "clean_up_tokenization_spaces", t->clean_spaces);
    cJSON_AddStringToObject(cfg, "tokenizer_class", "PreTrainedTokenizerFast");
    if (t->chat_template) cJSON_AddStringToObject(cfg, "chat_template", t->chat_template);
    text = cJSON_Print(cfg);
    cJSON_Delete(cfg);
    if (!text) return wick_fail_code(err, WICK_E_NO_MEMORY, "tok_write_hf: out of memory");
    rc = write_text(p_cfg, text, err);
    free(text);
    return rc;
}
