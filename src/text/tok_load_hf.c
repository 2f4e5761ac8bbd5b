/* tok_load_hf.c — loading Hugging Face tokenizer files: tokenizer.json (model
 * BPE, normalizer, pre_tokenizer, post_processor, decoder, added_tokens), the
 * "slow" vocab.json + merges.txt pair, and tokenizer_config.json (BOS/EOS
 * rules, special token strings, chat template, added_tokens_decoder).
 * Each JSON component becomes a data step (tok_norm / tok_pre); unsupported
 * components give an error naming them rather than silently wrong ids. */
#include <cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fileio.h"
#include "text/tok_internal.h"

static const char META[] = "\xe2\x96\x81"; /* U+2581 */

static cJSON *parse_json_file(const char *path, wick_error *err) {
    size_t n;
    char *text = file_read_all(path, &n, err);
    if (!text) return NULL;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, n, &end, 0);
    if (!j) {
        size_t at = end ? (size_t)(end - text) : 0;
        wick_fail(err, "%s: invalid JSON near byte %zu", path, at);
    }
    free(text);
    return j;
}

static const char *jstr(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* true/false with a default when absent or not a bool */
static bool jbool(const cJSON *o, const char *key, bool dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (cJSON_IsBool(v)) return cJSON_IsTrue(v);
    return dflt;
}

/* A token given as "text" or {"content": "text"}. */
static const char *token_string(const cJSON *v) {
    if (cJSON_IsString(v)) return v->valuestring;
    if (cJSON_IsObject(v)) return jstr(v, "content");
    return NULL;
}

/* {"String": s} or {"Regex": r} */
static const char *pattern_of(const cJSON *o, bool *is_regex) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "pattern");
    if (cJSON_IsString(p)) {
        *is_regex = false;
        return p->valuestring;
    }
    const char *s = jstr(p, "String");
    if (s) {
        *is_regex = false;
        return s;
    }
    s = jstr(p, "Regex");
    if (s) *is_regex = true;
    return s;
}

/* ------------------------------------------------------------ components */

static int add_normalizer(tokenizer *t, const cJSON *n, wick_error *err) {
    if (!n || cJSON_IsNull(n)) return 0;
    const char *type = jstr(n, "type");
    if (!type) return wick_fail(err, "tokenizer.json: normalizer without a type");
    tok_norm s;
    memset(&s, 0, sizeof s);
    if (!strcmp(type, "Sequence")) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(n, "normalizers");
        const cJSON *it;
        cJSON_ArrayForEach(it, list) if (add_normalizer(t, it, err)) return -1;
        return 0;
    } else if (!strcmp(type, "NFC")) {
        s.kind = NORM_NFC;
    } else if (!strcmp(type, "NFD")) {
        s.kind = NORM_NFD;
    } else if (!strcmp(type, "NFKC")) {
        s.kind = NORM_NFKC;
    } else if (!strcmp(type, "NFKD")) {
        s.kind = NORM_NFKD;
    } else if (!strcmp(type, "Lowercase")) {
        s.kind = NORM_LOWERCASE;
    } else if (!strcmp(type, "Prepend")) {
        s.kind = NORM_PREPEND;
        s.a = (char *)jstr(n, "prepend");
        if (!s.a) return wick_fail(err, "tokenizer.json: Prepend without \"prepend\"");
        s.alen = strlen(s.a);
    } else if (!strcmp(type, "Replace")) {
        bool rx = false;
        const char *pat = pattern_of(n, &rx);
        const char *content = jstr(n, "content");
        if (!pat || !content) return wick_fail(err, "tokenizer.json: Replace needs pattern and content");
        if (rx) return wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: Replace with a Regex pattern is not supported");
        s.kind = NORM_REPLACE;
        s.a = (char *)pat;
        s.alen = strlen(pat);
        s.b = (char *)content;
        s.blen = strlen(content);
    } else if (!strcmp(type, "Strip")) {
        s.kind = NORM_STRIP;
        s.flag1 = jbool(n, "strip_left", true);
        s.flag2 = jbool(n, "strip_right", true);
    } else {
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: normalizer \"%s\" is not supported", type);
    }
    return tok_add_norm(t, &s, err);
}

static int add_pretokenizer(tokenizer *t, const cJSON *p, wick_error *err) {
    if (!p || cJSON_IsNull(p)) return 0;
    const char *type = jstr(p, "type");
    if (!type) return wick_fail(err, "tokenizer.json: pre_tokenizer without a type");
    tok_pre s;
    memset(&s, 0, sizeof s);
    if (!strcmp(type, "Sequence")) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(p, "pretokenizers");
        const cJSON *it;
        cJSON_ArrayForEach(it, list) if (add_pretokenizer(t, it, err)) return -1;
        return 0;
    } else if (!strcmp(type, "Split")) {
        bool rx = false;
        const char *pat = pattern_of(p, &rx);
        if (!pat) return wick_fail(err, "tokenizer.json: Split without a pattern");
        const char *beh = jstr(p, "behavior");
        s.kind = PRE_SPLIT;
        s.pattern = (char *)pat;
        s.pattern_is_regex = rx;
        s.invert = jbool(p, "invert", false);
        if (!beh || !strcmp(beh, "Isolated")) s.behavior = SPLIT_ISOLATED;
        else if (!strcmp(beh, "Removed")) s.behavior = SPLIT_REMOVED;
        else if (!strcmp(beh, "MergedWithPrevious")) s.behavior = SPLIT_MERGED_PREV;
        else if (!strcmp(beh, "MergedWithNext")) s.behavior = SPLIT_MERGED_NEXT;
        else if (!strcmp(beh, "Contiguous")) s.behavior = SPLIT_CONTIGUOUS;
        else return wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: Split behavior \"%s\" is not supported", beh);
    } else if (!strcmp(type, "ByteLevel")) {
        s.kind = PRE_BYTELEVEL;
        s.add_prefix_space = jbool(p, "add_prefix_space", true);
        s.use_regex = jbool(p, "use_regex", true);
        t->byte_level = true;
    } else if (!strcmp(type, "Metaspace")) {
        s.kind = PRE_METASPACE;
        const char *rep = jstr(p, "replacement");
        s.pattern = (char *)(rep ? rep : META);
        const char *scheme = jstr(p, "prepend_scheme");
        if (scheme) {
            if (!strcmp(scheme, "always")) s.prepend = PREPEND_ALWAYS;
            else if (!strcmp(scheme, "first")) s.prepend = PREPEND_FIRST;
            else if (!strcmp(scheme, "never")) s.prepend = PREPEND_NEVER;
            else return wick_fail(err, "tokenizer.json: Metaspace prepend_scheme \"%s\"", scheme);
        } else {
            s.prepend = jbool(p, "add_prefix_space", true) ? PREPEND_ALWAYS : PREPEND_NEVER;
        }
        s.split = jbool(p, "split", true);
        if (s.prepend != PREPEND_NEVER) {
            t->strip_leading_space = true;
            t->add_space_prefix = true;
        }
    } else if (!strcmp(type, "Digits")) {
        s.kind = PRE_DIGITS;
        s.individual_digits = jbool(p, "individual_digits", false);
    } else {
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: pre_tokenizer \"%s\" is not supported", type);
    }
    return tok_add_pre(t, &s, err);
}

/* The id of a TemplateProcessing SpecialToken: its entry in special_tokens
 * ({"<s>": {"ids": [1], ...}}) when there is one, else the token with that text. */
static int32_t template_special_id(const tokenizer *t, const cJSON *pp, const cJSON *item) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(item, "SpecialToken");
    const char *name = st ? jstr(st, "id") : NULL;
    if (!name) return -1;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(pp, "special_tokens");
    const cJSON *ent = cJSON_IsObject(map) ? cJSON_GetObjectItemCaseSensitive(map, name) : NULL;
    const cJSON *ids = ent ? cJSON_GetObjectItemCaseSensitive(ent, "ids") : NULL;
    const cJSON *first = cJSON_IsArray(ids) ? cJSON_GetArrayItem(ids, 0) : NULL;
    if (cJSON_IsNumber(first) && first->valuedouble >= 0 && first->valuedouble < t->n_vocab)
        return (int32_t)first->valuedouble;
    return tok_find(t, name);
}

/* Post-processor: which special tokens wrap a single sequence (-1 = none). */
static void read_post_processor(const tokenizer *t, const cJSON *pp, int32_t *bos, int32_t *eos) {
    if (!pp || cJSON_IsNull(pp)) return;
    const char *type = jstr(pp, "type");
    if (!type) return;
    if (!strcmp(type, "Sequence")) {
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(pp, "processors"))
            read_post_processor(t, it, bos, eos);
    } else if (!strcmp(type, "TemplateProcessing")) {
        /* "single": [SpecialToken]* $A [SpecialToken]*: the first one before $A is the
         * BOS, the last one after it the EOS */
        const cJSON *single = cJSON_GetObjectItemCaseSensitive(pp, "single");
        int n = cJSON_GetArraySize(single);
        if (n <= 0) return;
        const cJSON *first = cJSON_GetArrayItem(single, 0);
        const cJSON *last = cJSON_GetArrayItem(single, n - 1);
        int32_t b = template_special_id(t, pp, first);
        if (b >= 0) *bos = b;
        if (n > 1) {
            int32_t e = template_special_id(t, pp, last);
            if (e >= 0) *eos = e;
        }
    } else if (!strcmp(type, "RobertaProcessing") || !strcmp(type, "BertProcessing")) {
        /* "cls": ["<s>", 0], "sep": ["</s>", 2] */
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(pp, "cls");
        const cJSON *sep = cJSON_GetObjectItemCaseSensitive(pp, "sep");
        const cJSON *ci = cJSON_GetArrayItem(cls, 1), *si = cJSON_GetArrayItem(sep, 1);
        if (cJSON_IsNumber(ci) && ci->valuedouble >= 0 && ci->valuedouble < t->n_vocab) *bos = (int32_t)ci->valuedouble;
        else if (cJSON_IsArray(cls) && cJSON_IsString(cJSON_GetArrayItem(cls, 0)))
            *bos = tok_find(t, cJSON_GetArrayItem(cls, 0)->valuestring);
        if (cJSON_IsNumber(si) && si->valuedouble >= 0 && si->valuedouble < t->n_vocab) *eos = (int32_t)si->valuedouble;
        else if (cJSON_IsArray(sep) && cJSON_IsString(cJSON_GetArrayItem(sep, 0)))
            *eos = tok_find(t, cJSON_GetArrayItem(sep, 0)->valuestring);
    }
}

/* Decoder: each Hugging Face decoder becomes a step (tok_dec); the chain runs
 * over the token strings at decode time (tokenizer.c). */
static int read_decoder(tokenizer *t, const cJSON *d, wick_error *err) {
    if (!d || cJSON_IsNull(d)) return 0;
    const char *type = jstr(d, "type");
    if (!type) return wick_fail(err, "tokenizer.json: decoder without a type");
    tok_dec s;
    memset(&s, 0, sizeof s);
    if (!strcmp(type, "Sequence")) {
        const cJSON *it;
        cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(d, "decoders")) if (read_decoder(t, it, err)) return -1;
        return 0;
    } else if (!strcmp(type, "Replace")) {
        bool rx = false;
        const char *pat = pattern_of(d, &rx);
        const char *content = jstr(d, "content");
        if (!pat || !content) return wick_fail(err, "tokenizer.json: Replace decoder needs pattern and content");
        if (rx) return wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: Replace decoder with a Regex pattern is not supported");
        s.kind = DEC_REPLACE;
        s.a = (char *)pat;
        s.alen = strlen(pat);
        s.b = (char *)content;
        s.blen = strlen(content);
    } else if (!strcmp(type, "ByteFallback")) {
        s.kind = DEC_BYTE_FALLBACK;
    } else if (!strcmp(type, "Fuse")) {
        s.kind = DEC_FUSE;
    } else if (!strcmp(type, "Strip")) {
        const cJSON *start = cJSON_GetObjectItemCaseSensitive(d, "start");
        const cJSON *stop = cJSON_GetObjectItemCaseSensitive(d, "stop");
        const char *content = jstr(d, "content");
        if (!content || !*content || tok_utf8_len((unsigned char)content[0]) != (int)strlen(content))
            return wick_fail(err, "tokenizer.json: Strip decoder needs a one-character content");
        s.kind = DEC_STRIP;
        s.a = (char *)content;
        s.alen = strlen(content);
        s.start = cJSON_IsNumber(start) && start->valuedouble > 0 ? (int)(start->valuedouble < 1e6 ? start->valuedouble : 1e6) : 0;
        s.stop = cJSON_IsNumber(stop) && stop->valuedouble > 0 ? (int)(stop->valuedouble < 1e6 ? stop->valuedouble : 1e6) : 0;
        if (s.start >= 1 && !strcmp(content, " ")) t->strip_leading_space = true;
    } else if (!strcmp(type, "Metaspace")) {
        const char *rep = jstr(d, "replacement");
        const char *scheme = jstr(d, "prepend_scheme");
        s.kind = DEC_METASPACE;
        s.a = (char *)(rep && *rep ? rep : META);
        s.alen = strlen(s.a);
        s.prepend = scheme ? strcmp(scheme, "never") != 0 : jbool(d, "add_prefix_space", true);
        if (s.prepend) t->strip_leading_space = true;
    } else if (!strcmp(type, "ByteLevel")) {
        s.kind = DEC_BYTE_LEVEL;
    } else {
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: decoder \"%s\" is not supported", type);
    }
    return tok_add_dec(t, &s, err);
}

/* ---------------------------------------------------------------- merges */

/* Add merge "a b" (split at the first space after the first byte). */
static int add_merge_str(tokenizer *t, const char *line, size_t n, char **cat, size_t *cat_cap,
                         wick_error *err) {
    const char *sp = n > 1 ? memchr(line + 1, ' ', n - 1) : NULL;
    if (!sp) return wick_fail(err, "bad merge \"%.*s\"", (int)(n > 60 ? 60 : n), line);
    size_t la = (size_t)(sp - line), lb = n - la - 1;
    int32_t a = tok_find_n(t, line, la), b = tok_find_n(t, sp + 1, lb);
    if (a < 0 || b < 0) return 0; /* a merge of unknown tokens can never apply */
    if (!GROW_ARRAY(*cat, la + lb, cat_cap)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    memcpy(*cat, line, la);
    memcpy(*cat + la, sp + 1, lb);
    int32_t r = tok_find_n(t, *cat, la + lb);
    if (r < 0) return 0;
    return tok_add_merge(t, a, b, r, err);
}

static int add_merge_pair(tokenizer *t, const char *sa, const char *sb, char **cat, size_t *cat_cap,
                          wick_error *err) {
    size_t la = strlen(sa), lb = strlen(sb);
    int32_t a = tok_find_n(t, sa, la), b = tok_find_n(t, sb, lb);
    if (a < 0 || b < 0) return 0;
    if (!GROW_ARRAY(*cat, la + lb, cat_cap)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    memcpy(*cat, sa, la);
    memcpy(*cat + la, sb, lb);
    int32_t r = tok_find_n(t, *cat, la + lb);
    if (r < 0) return 0;
    return tok_add_merge(t, a, b, r, err);
}

static int add_json_merges(tokenizer *t, const cJSON *merges, wick_error *err) {
    char *cat = NULL;
    size_t cap = 0;
    const cJSON *m;
    int rc = 0;
    cJSON_ArrayForEach(m, merges) {
        if (cJSON_IsString(m)) {
            rc = add_merge_str(t, m->valuestring, strlen(m->valuestring), &cat, &cap, err);
        } else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 &&
                   cJSON_IsString(cJSON_GetArrayItem(m, 0)) && cJSON_IsString(cJSON_GetArrayItem(m, 1))) {
            rc = add_merge_pair(t, cJSON_GetArrayItem(m, 0)->valuestring,
                                cJSON_GetArrayItem(m, 1)->valuestring, &cat, &cap, err);
        } else {
            rc = wick_fail(err, "tokenizer.json: a merge is neither \"a b\" nor [\"a\", \"b\"]");
        }
        if (rc) break;
    }
    free(cat);
    return rc;
}

/* ------------------------------------------------------------ vocabulary */

/* Largest id in a {"token": id} object, or -1; -2 on a bad entry. */
static int64_t max_vocab_id(const cJSON *vocab) {
    int64_t mx = -1;
    const cJSON *it;
    cJSON_ArrayForEach(it, vocab) {
        if (!cJSON_IsNumber(it) || !it->string || it->valuedouble < 0 || it->valuedouble >= (1 << 26) ||
            it->valuedouble != (double)(int64_t)it->valuedouble)
            return -2;
        if ((int64_t)it->valuedouble > mx) mx = (int64_t)it->valuedouble;
    }
    return mx;
}

static int set_vocab(tokenizer *t, const cJSON *vocab, wick_error *err) {
    const cJSON *it;
    cJSON_ArrayForEach(it, vocab) {
        int32_t id = (int32_t)it->valuedouble;
        if (tok_set_token(t, id, it->string, strlen(it->string), 0.0f, TT_NORMAL, err)) return -1;
    }
    return 0;
}

/* One added token: {"id", "content", "special", "lstrip", "rstrip", "single_word", "normalized"} */
static int set_added(tokenizer *t, int64_t id, const cJSON *a, wick_error *err) {
    const char *content = jstr(a, "content");
    if (!content || id < 0 || id >= t->n_vocab) return wick_fail(err, "bad added token");
    bool special = jbool(a, "special", false);
    if (tok_set_token(t, (int32_t)id, content, strlen(content), 0.0f, special ? TT_CONTROL : TT_USER, err))
        return -1;
    /* Hugging Face's default: special tokens match raw text, others normalized text */
    t->flags[id] = (uint8_t)((jbool(a, "lstrip", false) ? TF_LSTRIP : 0) |
                             (jbool(a, "rstrip", false) ? TF_RSTRIP : 0) |
                             (jbool(a, "single_word", false) ? TF_SINGLE_WORD : 0) |
                             (jbool(a, "normalized", !special) ? TF_NORMALIZED : 0));
    return 0;
}

/* --------------------------------------------------------- tokenizer_config */

static int32_t find_special(const tokenizer *t, const cJSON *v) {
    const char *s = token_string(v);
    return s ? tok_find(t, s) : -1;
}

static int apply_config(tokenizer *t, const cJSON *cfg, wick_error *err) {
    (void)err;
    if (!cfg) return 0;
    const cJSON *v;
    if ((v = cJSON_GetObjectItemCaseSensitive(cfg, "bos_token")) && !cJSON_IsNull(v)) {
        int32_t id = find_special(t, v);
        if (id >= 0) t->bos = id;
    } else if (v && cJSON_IsNull(v)) {
        t->bos = -1;
        t->add_bos = false;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(cfg, "eos_token")) && !cJSON_IsNull(v)) {
        int32_t id = find_special(t, v);
        if (id >= 0) t->eos = id;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(cfg, "pad_token")) && !cJSON_IsNull(v)) {
        int32_t id = find_special(t, v);
        if (id >= 0) t->pad = id;
    }
    if ((v = cJSON_GetObjectItemCaseSensitive(cfg, "unk_token")) && !cJSON_IsNull(v)) {
        int32_t id = find_special(t, v);
        if (id >= 0) t->unk = id;
    }
    v = cJSON_GetObjectItemCaseSensitive(cfg, "add_bos_token");
    if (cJSON_IsBool(v)) t->add_bos = cJSON_IsTrue(v);
    v = cJSON_GetObjectItemCaseSensitive(cfg, "add_eos_token");
    if (cJSON_IsBool(v)) t->add_eos = cJSON_IsTrue(v);
    v = cJSON_GetObjectItemCaseSensitive(cfg, "clean_up_tokenization_spaces");
    if (cJSON_IsBool(v)) t->clean_spaces = cJSON_IsTrue(v);

    v = cJSON_GetObjectItemCaseSensitive(cfg, "chat_template");
    const char *tmpl = NULL;
    if (cJSON_IsString(v)) {
        tmpl = v->valuestring;
    } else if (cJSON_IsArray(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            const char *name = jstr(it, "name"), *tt = jstr(it, "template");
            if (tt && (!tmpl || (name && !strcmp(name, "default")))) tmpl = tt;
        }
    }
    if (tmpl) {
        free(t->chat_template);
        t->chat_template = tok_strdup(tmpl);
        if (!t->chat_template) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    }
    return 0;
}

/* ------------------------------------------------------------- loaders */

static tokenizer *load_tokenizer_json(const cJSON *j, const cJSON *cfg, wick_error *err) {
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(j, "model");
    if (!cJSON_IsObject(model)) {
        wick_fail(err, "tokenizer.json: no \"model\" object");
        return NULL;
    }
    const char *mtype = jstr(model, "type");
    const cJSON *vocab = cJSON_GetObjectItemCaseSensitive(model, "vocab");
    const cJSON *merges = cJSON_GetObjectItemCaseSensitive(model, "merges");
    if (mtype && strcmp(mtype, "BPE") != 0) {
        wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: model type \"%s\" is not supported (only BPE)", mtype);
        return NULL;
    }
    if (!cJSON_IsObject(vocab) || !cJSON_IsArray(merges)) {
        wick_fail(err, "tokenizer.json: BPE model needs a vocab object and a merges array");
        return NULL;
    }
    const char *cont = jstr(model, "continuing_subword_prefix");
    const char *eow = jstr(model, "end_of_word_suffix");
    if ((cont && *cont) || (eow && *eow)) {
        wick_fail_code(err, WICK_E_UNSUPPORTED, "tokenizer.json: continuing_subword_prefix / end_of_word_suffix are not supported");
        return NULL;
    }
    int64_t mx = max_vocab_id(vocab);
    if (mx == -2) {
        wick_fail(err, "tokenizer.json: bad vocab entry (ids must be integers in [0, 2^26))");
        return NULL;
    }
    const cJSON *added = cJSON_GetObjectItemCaseSensitive(j, "added_tokens");
    const cJSON *a;
    cJSON_ArrayForEach(a, added) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(a, "id");
        if (!cJSON_IsNumber(id) || id->valuedouble < 0 || id->valuedouble >= (1 << 26)) {
            wick_fail(err, "tokenizer.json: added token with a bad id");
            return NULL;
        }
        if ((int64_t)id->valuedouble > mx) mx = (int64_t)id->valuedouble;
    }
    if (mx < 0) {
        wick_fail(err, "tokenizer.json: empty vocabulary");
        return NULL;
    }
    if (mx >= (int64_t)cJSON_GetArraySize(vocab) + cJSON_GetArraySize(added) + 65536) {
        wick_fail(err, "tokenizer.json: token id %lld is far beyond the vocabulary size", (long long)mx);
        return NULL;
    }

    tokenizer *t = tok_new(TOK_KIND_SPM, err);
    if (!t) return NULL;
    if (tok_resize(t, (int)mx + 1, err) || set_vocab(t, vocab, err)) goto fail;
    cJSON_ArrayForEach(a, added) {
        if (set_added(t, (int64_t)cJSON_GetObjectItemCaseSensitive(a, "id")->valuedouble, a, err)) goto fail;
    }
    t->byte_fallback = jbool(model, "byte_fallback", false);
    t->fuse_unk = jbool(model, "fuse_unk", false);
    t->ignore_merges = jbool(model, "ignore_merges", false);
    if (add_normalizer(t, cJSON_GetObjectItemCaseSensitive(j, "normalizer"), err)) goto fail;
    if (add_pretokenizer(t, cJSON_GetObjectItemCaseSensitive(j, "pre_tokenizer"), err)) goto fail;
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(j, "decoder");
    if (!t->byte_level && cJSON_IsObject(dec) && jstr(dec, "type") && !strcmp(jstr(dec, "type"), "ByteLevel"))
        t->byte_level = true;
    t->kind = t->byte_level ? TOK_KIND_BPE_BYTELEVEL : TOK_KIND_SPM;
    /* decoder null: tok_finalize infers the chain from the model (byte-level or
     * SentencePiece); Hugging Face would join the token strings with spaces */
    if (read_decoder(t, dec, err)) goto fail;
    /* a Prepend of U+2581 in the normalizer is the SentencePiece space prefix */
    for (int i = 0; i < t->n_norms; i++)
        if (t->norms[i].kind == NORM_PREPEND && !strcmp(t->norms[i].a, META)) t->add_space_prefix = true;

    if (tok_build_map(t, err)) goto fail;
    if (add_json_merges(t, merges, err)) goto fail;

    const char *unk = jstr(model, "unk_token");
    if (unk) {
        t->unk = tok_find(t, unk);
        if (t->unk >= 0 && t->type[t->unk] != TT_USER) t->type[t->unk] = TT_UNKNOWN;
    }
    int32_t bos = -1, eos = -1;
    read_post_processor(t, cJSON_GetObjectItemCaseSensitive(j, "post_processor"), &bos, &eos);
    if (bos >= 0) {
        t->bos = bos;
        t->add_bos = true;
    }
    if (eos >= 0) {
        t->eos = eos;
        t->add_eos = true;
    }
    if (apply_config(t, cfg, err)) goto fail;
    return t;
fail:
    tok_free(t);
    return NULL;
}

static tokenizer *load_vocab_merges(const char *vocab_path, const char *merges_path, const cJSON *cfg,
                                    wick_error *err) {
    cJSON *vocab = parse_json_file(vocab_path, err);
    if (!vocab) return NULL;
    tokenizer *t = NULL;
    char *mtext = NULL, *cat = NULL;
    size_t cat_cap = 0;
    if (!cJSON_IsObject(vocab)) {
        wick_fail(err, "%s: not a JSON object", vocab_path);
        goto fail;
    }
    int64_t mx = max_vocab_id(vocab);
    if (mx < 0) {
        wick_fail(err, "%s: bad or empty vocabulary", vocab_path);
        goto fail;
    }
    const cJSON *atd = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, "added_tokens_decoder") : NULL;
    const cJSON *a;
    cJSON_ArrayForEach(a, atd) {
        char *end = NULL;
        long id = a->string ? strtol(a->string, &end, 10) : -1;
        if (!a->string || *end || id < 0 || id >= (1 << 26)) {
            wick_fail(err, "tokenizer_config.json: bad added_tokens_decoder id");
            goto fail;
        }
        if (id > mx) mx = id;
    }
    if (mx >= (int64_t)cJSON_GetArraySize(vocab) + cJSON_GetArraySize(atd) + 65536) {
        wick_fail(err, "%s: token id %lld is far beyond the vocabulary size", vocab_path, (long long)mx);
        goto fail;
    }
    t = tok_new(TOK_KIND_BPE_BYTELEVEL, err);
    if (!t) goto fail;
    if (tok_resize(t, (int)mx + 1, err) || set_vocab(t, vocab, err)) goto fail;
    cJSON_ArrayForEach(a, atd) {
        if (set_added(t, strtol(a->string, NULL, 10), a, err)) goto fail;
    }
    t->byte_level = true;

    /* the slow tokenizer class decides the pipeline */
    const char *cls = cfg ? jstr(cfg, "tokenizer_class") : NULL;
    bool prefix = cfg ? jbool(cfg, "add_prefix_space", false) : false;
    if (cls && !strncmp(cls, "Qwen2Tokenizer", 14)) {
        tok_norm nfc = {.kind = NORM_NFC};
        tok_pre split = {.kind = PRE_SPLIT, .pattern = (char *)TOK_REGEX_QWEN2, .pattern_is_regex = true,
                         .behavior = SPLIT_ISOLATED};
        tok_pre bl = {.kind = PRE_BYTELEVEL, .add_prefix_space = prefix, .use_regex = false};
        if (tok_add_norm(t, &nfc, err) || tok_add_pre(t, &split, err) || tok_add_pre(t, &bl, err)) goto fail;
    } else {
        tok_pre bl = {.kind = PRE_BYTELEVEL, .add_prefix_space = prefix, .use_regex = true};
        if (tok_add_pre(t, &bl, err)) goto fail;
    }
    if (tok_build_map(t, err)) goto fail;

    size_t mlen;
    mtext = file_read_all(merges_path, &mlen, err);
    if (!mtext) goto fail;
    size_t pos = 0;
    bool first_line = true;
    while (pos < mlen) {
        char *nl = memchr(mtext + pos, '\n', mlen - pos);
        size_t e = nl ? (size_t)(nl - mtext) : mlen;
        size_t ln = e - pos;
        if (ln && mtext[pos + ln - 1] == '\r') ln--;
        bool skip = ln == 0 || (first_line && ln >= 8 && !memcmp(mtext + pos, "#version", 8));
        if (!skip && add_merge_str(t, mtext + pos, ln, &cat, &cat_cap, err)) {
            wick_fail_prefix(err, "%s: ", merges_path);
            goto fail;
        }
        first_line = false;
        pos = e + 1;
    }
    if (apply_config(t, cfg, err)) goto fail;
    free(mtext);
    free(cat);
    cJSON_Delete(vocab);
    return t;
fail:
    free(mtext);
    free(cat);
    cJSON_Delete(vocab);
    tok_free(t);
    return NULL;
}

tokenizer *tok_load_hf_dir(const char *dir, wick_error *err) {
    char p_json[4096], p_cfg[4096], p_vocab[4096], p_merges[4096];
    if (!dir || path_join(p_json, sizeof p_json, dir, "tokenizer.json") ||
        path_join(p_cfg, sizeof p_cfg, dir, "tokenizer_config.json") ||
        path_join(p_vocab, sizeof p_vocab, dir, "vocab.json") ||
        path_join(p_merges, sizeof p_merges, dir, "merges.txt")) {
        wick_fail(err, "tokenizer: bad directory path");
        return NULL;
    }
    cJSON *cfg = NULL;
    if (file_exists(p_cfg)) {
        cfg = parse_json_file(p_cfg, err);
        if (!cfg) return NULL;
        if (!cJSON_IsObject(cfg)) {
            cJSON_Delete(cfg);
            wick_fail(err, "%s: not a JSON object", p_cfg);
            return NULL;
        }
    }
    tokenizer *t = NULL;
    if (file_exists(p_json)) {
        cJSON *j = parse_json_file(p_json, err);
        if (j) {
            if (!cJSON_IsObject(j)) wick_fail(err, "%s: not a JSON object", p_json);
            else t = load_tokenizer_json(j, cfg, err);
            if (!t) wick_fail_prefix(err, "%s: ", dir);
            cJSON_Delete(j);
        }
    } else if (file_exists(p_vocab) && file_exists(p_merges)) {
        t = load_vocab_merges(p_vocab, p_merges, cfg, err);
    } else {
        wick_fail(err, "%s: no tokenizer.json or vocab.json + merges.txt", dir);
    }
    cJSON_Delete(cfg);
    if (t && tok_finalize(t, err)) {
        tok_free(t);
        t = NULL;
    }
    return t;
}
