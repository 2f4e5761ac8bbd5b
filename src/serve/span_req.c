/* span_req.c — the span_cache options, the /v1/completions span prompt
 * object and the segments a span request owns (see span_req.h). */
#include "serve/span_req.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "serve/prompt.h"

static const cJSON *get(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* An array of token ids, each an integer in [0, n_vocab). *ids malloc'd. */
static int ids_of(const wick_model *m, const cJSON *arr, const char *what, int32_t **ids, int *n, fld_error *e) {
    const int n_vocab = wick_tokenizer_n_vocab(wick_model_tokenizer(m));
    const int count = cJSON_GetArraySize(arr);
    int32_t *out = malloc(sizeof *out * (size_t)(count ? count : 1));
    if (!out) return fld_fail(e, 500, NULL, "out of memory");
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        double d = cJSON_IsNumber(it) ? it->valuedouble : -1;
        if (!cJSON_IsNumber(it) || d != floor(d) || d < 0 || d >= n_vocab) {
            free(out);
            return fld_fail(e, 400, "prompt", "token ids in \"%s\" must be integers in [0, %d)", what, n_vocab);
        }
        out[i++] = (int32_t)d;
    }
    *ids = out;
    *n = i;
    return 0;
}

/* A segment given as text (tokenized with or without BOS) or as ids. */
static int segment(const wick_model *m, const cJSON *v, bool bos, const char *what, int32_t **ids, int *n,
                   fld_error *e) {
    if (cJSON_IsString(v)) {
        if (prompt_text(m, v->valuestring, bos, 0, ids, n, e) < 0) return -1;
        snprintf(e->param, sizeof e->param, "prompt");
        return 0;
    }
    if (cJSON_IsArray(v)) return ids_of(m, v, what, ids, n, e);
    return fld_fail(e, 400, "prompt", "\"%s\" must be a string or an array of token ids", what);
}

int span_req_add(span_req *r, int32_t *ids, int n, const char *param, const char *what, fld_error *e) {
    if (n <= 0) {
        free(ids);
        return fld_fail(e, 400, param, "%s is empty: every span needs at least one token", what);
    }
    if (r->n_spans >= SPAN_REQ_MAX_SPANS) {
        free(ids);
        return fld_fail(e, 400, param, "too many spans: at most %d per request", SPAN_REQ_MAX_SPANS);
    }
    /* two arrays, one capacity: each grows the same way from the same start */
    size_t cap_s = r->cap_spans, cap_l = r->cap_spans, need = (size_t)r->n_spans + 1;
    if (!GROW_ARRAY(r->spans, need, &cap_s) || !GROW_ARRAY(r->span_len, need, &cap_l)) {
        free(ids);
        return fld_fail(e, 500, NULL, "out of memory");
    }
    r->cap_spans = cap_s;
    r->spans[r->n_spans] = ids;
    r->span_len[r->n_spans++] = n;
    return 0;
}

int span_req_completion(const wick_model *m, const cJSON *p, span_req *r, fld_error *e) {
    if (!cJSON_IsObject(p)) return fld_fail(e, 400, "prompt", "a span prompt must be an object {prefix, spans, suffix}");
    const cJSON *prefix = get(p, "prefix"), *spans = get(p, "spans"), *suffix = get(p, "suffix");
    if (!spans) return fld_fail(e, 400, "prompt", "\"prompt.spans\" is required in a prompt object (an array of texts or token id arrays)");
    if (!cJSON_IsArray(spans)) return fld_fail(e, 400, "prompt", "\"prompt.spans\" must be an array of texts or token id arrays");
    if (cJSON_GetArraySize(spans) > SPAN_REQ_MAX_SPANS)
        return fld_fail(e, 400, "prompt", "too many spans (%d): at most %d per request", cJSON_GetArraySize(spans),
                        SPAN_REQ_MAX_SPANS);
    if (!suffix) return fld_fail(e, 400, "prompt", "\"prompt.suffix\" is required: its last token's logits give the first new token");
    /* no prefix: the empty text, i.e. BOS alone where the model adds one */
    if (prefix ? segment(m, prefix, true, "prompt.prefix", &r->prefix, &r->n_prefix, e) < 0
               : prompt_text(m, "", true, 0, &r->prefix, &r->n_prefix, e) < 0)
        return -1;
    int k = 0;
    const cJSON *s;
    cJSON_ArrayForEach(s, spans) {
        char what[40];
        snprintf(what, sizeof what, "prompt.spans[%d]", k++);
        int32_t *ids = NULL;
        int n = 0;
        if (segment(m, s, false, what, &ids, &n, e) < 0 || span_req_add(r, ids, n, "prompt", what, e) < 0) return -1;
    }
    if (segment(m, suffix, false, "prompt.suffix", &r->suffix, &r->n_suffix, e) < 0) return -1;
    if (r->n_suffix == 0) return fld_fail(e, 400, "prompt", "\"prompt.suffix\" is empty: its last token's logits give the first new token");
    return 0;
}

int span_req_options(const cJSON *b, const wick_model *m, span_req *r, fld_error *e) {
    r->v.anchor = WICK_ANCHOR_PREFIX;
    r->v.positions = WICK_POSITIONS_SEQUENTIAL;
    r->v.blend_first_k = 0;
    const cJSON *o = get(b, "span_cache");
    if (!o) return 0;
    if (!cJSON_IsObject(o)) return fld_fail(e, 400, "span_cache", "\"span_cache\" must be an object {anchor, positions, blend}");
    const cJSON *a = get(o, "anchor");
    if (cJSON_IsString(a)) {
        const char *s = a->valuestring;
        if (!strcmp(s, "prefix")) r->v.anchor = WICK_ANCHOR_PREFIX;
        else if (!strcmp(s, "bos")) r->v.anchor = WICK_ANCHOR_BOS;
        else if (!strcmp(s, "none")) r->v.anchor = WICK_ANCHOR_NONE;
        else
            return fld_fail(e, 400, "span_cache.anchor",
                            "\"span_cache.anchor\" must be \"prefix\", \"bos\", \"none\" or an array of token ids, not \"%.60s\"", s);
    } else if (cJSON_IsArray(a)) {
        if (ids_of(m, a, "span_cache.anchor", &r->anchor, &r->n_anchor, e) < 0) {
            snprintf(e->param, sizeof e->param, "span_cache.anchor");
            return -1;
        }
        r->v.anchor = WICK_ANCHOR_IDS;
    } else if (a) {
        return fld_fail(e, 400, "span_cache.anchor",
                        "\"span_cache.anchor\" must be \"prefix\", \"bos\", \"none\" or an array of token ids");
    }
    const cJSON *pos = get(o, "positions");
    if (pos) {
        if (!cJSON_IsString(pos))
            return fld_fail(e, 400, "span_cache.positions", "\"span_cache.positions\" must be \"sequential\" or \"shared\"");
        if (!strcmp(pos->valuestring, "sequential")) r->v.positions = WICK_POSITIONS_SEQUENTIAL;
        else if (!strcmp(pos->valuestring, "shared")) r->v.positions = WICK_POSITIONS_SHARED;
        else
            return fld_fail(e, 400, "span_cache.positions",
                            "\"span_cache.positions\" must be \"sequential\" or \"shared\", not \"%.60s\"", pos->valuestring);
    }
    const cJSON *bl = get(o, "blend");
    if (bl) {
        if (!cJSON_IsObject(bl)) return fld_fail(e, 400, "span_cache.blend", "\"span_cache.blend\" must be an object {\"first_k\": K}");
        if (get(bl, "topk_ratio") || get(bl, "check_layer"))
            return fld_fail(e, 400, "span_cache.blend", "\"span_cache.blend\": only first_k is supported (topk_ratio is not)");
        const cJSON *k = get(bl, "first_k");
        if (k) {
            if (!cJSON_IsNumber(k) || k->valuedouble != floor(k->valuedouble) || k->valuedouble < 0 || k->valuedouble > 1e9)
                return fld_fail(e, 400, "span_cache.blend.first_k", "\"span_cache.blend.first_k\" must be an integer of 0 or more");
            r->v.blend_first_k = (int)k->valuedouble;
        }
    }
    return 0;
}

int span_req_finish(span_req *r) {
    r->v.prefix = r->prefix;
    r->v.n_prefix = r->n_prefix;
    r->v.spans = (const int32_t *const *)r->spans;
    r->v.span_len = r->span_len;
    r->v.n_spans = r->n_spans;
    r->v.suffix = r->suffix;
    r->v.n_suffix = r->n_suffix;
    r->v.anchor_ids = r->anchor;
    r->v.n_anchor_ids = r->n_anchor;
    long total = (long)r->n_prefix + r->n_suffix;
    for (int k = 0; k < r->n_spans; k++) total += r->span_len[k];
    return total > INT32_MAX / 2 ? INT32_MAX / 2 : (int)total;
}

static cJSON *ids_json(const int32_t *ids, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ids[i]));
    return a;
}

cJSON *span_req_segments_json(const span_req *r) {
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    cJSON_AddItemToObject(o, "prefix", ids_json(r->prefix, r->n_prefix));
    cJSON *sp = cJSON_AddArrayToObject(o, "spans");
    for (int k = 0; sp && k < r->n_spans; k++) cJSON_AddItemToArray(sp, ids_json(r->spans[k], r->span_len[k]));
    cJSON_AddItemToObject(o, "suffix", ids_json(r->suffix, r->n_suffix));
    return o;
}

void span_req_free(span_req *r) {
    free(r->prefix);
    free(r->suffix);
    free(r->anchor);
    for (int k = 0; k < r->n_spans; k++) free(r->spans[k]);
    free(r->spans);
    free(r->span_len);
    memset(r, 0, sizeof *r);
}
