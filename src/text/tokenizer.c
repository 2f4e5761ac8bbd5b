/* tokenizer.c — the tokenizer object: token table, string -> id hash map, merge
 * table, finalization, and the piece / decode entry points (encoding is
 * encode.c). */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

/* ---------------------------------------------------------------- helpers */

char *tok_strndup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    if (n) memcpy(d, s, n);
    d[n] = 0;
    return d;
}

char *tok_strdup(const char *s) { return s ? tok_strndup(s, strlen(s)) : NULL; }

static uint32_t hash_bytes(const char *s, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

static uint64_t mix64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

int tok_ids_push(tok_ids *a, int32_t id) {
    if (!GROW_ARRAY(a->v, a->n + 1, &a->cap)) return -1;
    a->v[a->n++] = id;
    return 0;
}

void tok_scratch_free(tok_scratch *s) {
    free(s->a.buf);
    free(s->a.p);
    free(s->b.buf);
    free(s->b.p);
    free(s->nbuf);
    free(s->nbuf2);
    free(s->syms);
    free(s->heap);
    free(s->mbuf);
    free(s->seg);
    free(s->cache);
    free(s->cache_ids);
    if (s->md) pcre2_match_data_free(s->md);
    memset(s, 0, sizeof *s);
}

/* ----------------------------------------------------------- construction */

tokenizer *tok_new(tok_kind kind, wick_error *err) {
    tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
        return NULL;
    }
    t->kind = kind;
    t->model = MODEL_BPE_RANK;
    t->bos = t->eos = t->unk = t->pad = -1;
    for (int i = 0; i < 256; i++) t->byte_ids[i] = -1;
    return t;
}

int tok_resize(tokenizer *t, int n, wick_error *err) {
    if (n < 0 || n > (1 << 26)) return wick_fail(err, "tokenizer: bad vocabulary size %d", n);
    if (n <= t->n_vocab) return 0;
    uint32_t *off = realloc(t->off, (size_t)n * sizeof *off);
    if (off) t->off = off;
    uint32_t *len = realloc(t->len, (size_t)n * sizeof *len);
    if (len) t->len = len;
    float *sc = realloc(t->scores, (size_t)n * sizeof *sc);
    if (sc) t->scores = sc;
    uint8_t *ty = realloc(t->type, (size_t)n);
    if (ty) t->type = ty;
    uint8_t *fl = realloc(t->flags, (size_t)n);
    if (fl) t->flags = fl;
    if (!off || !len || !sc || !ty || !fl) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    if (!t->arena) {
        t->arena_cap = 4096;
        t->arena = malloc(t->arena_cap);
        if (!t->arena) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
        t->arena[0] = 0;
        t->arena_len = 1; /* offset 0 = the empty string */
    }
    for (int i = t->n_vocab; i < n; i++) {
        t->off[i] = 0;
        t->len[i] = 0;
        t->scores[i] = 0.0f;
        t->type[i] = TT_UNUSED;
        t->flags[i] = 0;
    }
    t->n_vocab = n;
    return 0;
}

int tok_set_token(tokenizer *t, int32_t id, const char *s, size_t len, float score, int type,
                  wick_error *err) {
    if (id < 0 || id >= t->n_vocab) return wick_fail(err, "tokenizer: token id %d out of range", id);
    if (len > (1u << 20)) return wick_fail(err, "tokenizer: token %d is too long", id);
    if (t->arena_len + len + 1 > UINT32_MAX) return wick_fail(err, "tokenizer: vocabulary too large");
    if (!GROW_ARRAY(t->arena, t->arena_len + len + 1, &t->arena_cap))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    memcpy(t->arena + t->arena_len, s, len);
    t->arena[t->arena_len + len] = 0;
    t->off[id] = (uint32_t)t->arena_len;
    t->len[id] = (uint32_t)len;
    t->arena_len += len + 1;
    t->scores[id] = score;
    t->type[id] = (uint8_t)type;
    return 0;
}

int tok_build_map(tokenizer *t, wick_error *err) {
    free(t->map_ids);
    free(t->map_hash);
    size_t cap = 64;
    while (cap * 3 < (size_t)t->n_vocab * 4) cap *= 2;
    t->map_ids = malloc(cap * sizeof *t->map_ids);
    t->map_hash = malloc(cap * sizeof *t->map_hash);
    if (!t->map_ids || !t->map_hash) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    for (size_t i = 0; i < cap; i++) t->map_ids[i] = -1;
    t->map_cap = cap;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        if (t->len[id] == 0) continue;
        const char *s = tok_text(t, id);
        uint32_t h = hash_bytes(s, t->len[id]);
        size_t i = h & (cap - 1);
        for (;;) {
            int32_t o = t->map_ids[i];
            if (o < 0) {
                t->map_ids[i] = id;
                t->map_hash[i] = h;
                break;
            }
            if (t->map_hash[i] == h && t->len[o] == t->len[id] &&
                memcmp(tok_text(t, o), s, t->len[id]) == 0) {
                t->map_ids[i] = id; /* the later id wins */
                break;
            }
            i = (i + 1) & (cap - 1);
        }
    }
    return 0;
}

int32_t tok_find_n(const tokenizer *t, const char *s, size_t len) {
    if (!t->map_ids || len == 0) return -1;
    uint32_t h = hash_bytes(s, len);
    size_t i = h & (t->map_cap - 1);
    for (;;) {
        int32_t o = t->map_ids[i];
        if (o < 0) return -1;
        if (t->map_hash[i] == h && t->len[o] == len && memcmp(tok_text(t, o), s, len) == 0)
            return o;
        i = (i + 1) & (t->map_cap - 1);
    }
}

static uint64_t merge_key(int32_t a, int32_t b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }

static int merges_rehash(tokenizer *t, size_t cap) {
    int32_t *sl = malloc(cap * sizeof *sl);
    if (!sl) return -1;
    for (size_t i = 0; i < cap; i++) sl[i] = -1;
    for (size_t j = 0; j < t->mcap; j++) {
        int32_t r = t->mslots[j];
        if (r < 0) continue;
        size_t i = mix64(merge_key(t->merge_a[r], t->merge_b[r])) & (cap - 1);
        while (sl[i] >= 0) i = (i + 1) & (cap - 1);
        sl[i] = r;
    }
    free(t->mslots);
    t->mslots = sl;
    t->mcap = cap;
    return 0;
}

int32_t tok_merge_lookup(const tokenizer *t, int32_t a, int32_t b, int32_t *res) {
    if (!t->mcap) return -1;
    size_t i = mix64(merge_key(a, b)) & (t->mcap - 1);
    for (;;) {
        int32_t r = t->mslots[i];
        if (r < 0) return -1;
        if (t->merge_a[r] == a && t->merge_b[r] == b) {
            *res = t->merge_res[r];
            return r;
        }
        i = (i + 1) & (t->mcap - 1);
    }
}

int tok_add_merge(tokenizer *t, int32_t a, int32_t b, int32_t res, wick_error *err) {
    if (a < 0 || b < 0 || res < 0 || a >= t->n_vocab || b >= t->n_vocab || res >= t->n_vocab)
        return wick_fail(err, "tokenizer: bad merge ids");
    int32_t dummy;
    if (tok_merge_lookup(t, a, b, &dummy) >= 0) return 0; /* duplicate: keep the first */
    if ((size_t)(t->n_merges + 1) * 4 > t->mcap * 3) {
        if (merges_rehash(t, t->mcap ? t->mcap * 2 : 1024)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    }
    /* three arrays, one capacity: each grows the same way from the same start */
    size_t ca = t->merges_cap, cb = t->merges_cap, cr = t->merges_cap, need = (size_t)t->n_merges + 1;
    if (!GROW_ARRAY(t->merge_a, need, &ca) || !GROW_ARRAY(t->merge_b, need, &cb) || !GROW_ARRAY(t->merge_res, need, &cr))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->merges_cap = ca;
    int rank = t->n_merges++;
    t->merge_a[rank] = a;
    t->merge_b[rank] = b;
    t->merge_res[rank] = res;
    size_t i = mix64(merge_key(a, b)) & (t->mcap - 1);
    while (t->mslots[i] >= 0) i = (i + 1) & (t->mcap - 1);
    t->mslots[i] = rank;
    return 0;
}

/* Copies of a step's two strings (either may be NULL): 0, or -1 with neither
 * kept when memory runs out. */
static int dup_pair(const char *a, size_t alen, const char *b, size_t blen, char **oa, char **ob) {
    *oa = a ? tok_strndup(a, alen) : NULL;
    *ob = b ? tok_strndup(b, blen) : NULL;
    if ((a && !*oa) || (b && !*ob)) {
        free(*oa);
        free(*ob);
        return -1;
    }
    return 0;
}

int tok_add_norm(tokenizer *t, const tok_norm *n, wick_error *err) {
    tok_norm *nn = realloc(t->norms, (size_t)(t->n_norms + 1) * sizeof *nn);
    if (!nn) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->norms = nn;
    tok_norm c = *n;
    if (dup_pair(n->a, n->alen, n->b, n->blen, &c.a, &c.b)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->norms[t->n_norms++] = c;
    return 0;
}

int tok_add_pre(tokenizer *t, const tok_pre *p, wick_error *err) {
    tok_pre *np = realloc(t->pres, (size_t)(t->n_pres + 1) * sizeof *np);
    if (!np) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->pres = np;
    tok_pre c = *p;
    c.re = NULL;
    c.pattern = p->pattern ? tok_strdup(p->pattern) : NULL;
    if (p->pattern && !c.pattern) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    if (tok_pre_compile(&c, err)) {
        tok_pre_free(&c);
        return -1;
    }
    t->pres[t->n_pres++] = c;
    return 0;
}

int tok_add_dec(tokenizer *t, const tok_dec *d, wick_error *err) {
    tok_dec *nd = realloc(t->decs, (size_t)(t->n_decs + 1) * sizeof *nd);
    if (!nd) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->decs = nd;
    tok_dec c = *d;
    if (dup_pair(d->a, d->alen, d->b, d->blen, &c.a, &c.b)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->decs[t->n_decs++] = c;
    return 0;
}

typedef struct special_key {
    unsigned first;
    uint32_t len;
    int32_t id;
    char *text; /* normalized content (TF_NORMALIZED tokens) */
} special_key;

static int cmp_special(const void *pa, const void *pb) {
    const special_key *a = pa, *b = pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    if (a->len != b->len) return a->len > b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static bool is_added(const tokenizer *t, int32_t id) {
    uint8_t ty = t->type[id];
    return (ty == TT_CONTROL || ty == TT_USER || ty == TT_UNKNOWN) && t->len[id] > 0;
}

static void free_nspecials(tokenizer *t) {
    for (int i = 0; i < t->n_nspecials; i++) free(t->nspecial_text[i]);
    free(t->nspecials);
    free(t->nspecial_text);
    free(t->nspecial_len);
    t->nspecials = NULL;
    t->nspecial_text = NULL;
    t->nspecial_len = NULL;
    t->n_nspecials = 0;
}

/* Added tokens matched in normalized text: their content goes through the
 * normalizer as Hugging Face's AddedVocabulary does. */
static int build_nspecials(tokenizer *t, wick_error *err) {
    free_nspecials(t);
    int n = 0;
    for (int32_t id = 0; id < t->n_vocab; id++)
        if (is_added(t, id) && (t->flags[id] & TF_NORMALIZED)) n++;
    for (int c = 0; c < 257; c++) t->nspecial_start[c] = 0;
    if (!n) return 0;
    special_key *keys = calloc((size_t)n, sizeof *keys);
    if (!keys) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    tok_scratch sc;
    memset(&sc, 0, sizeof sc);
    int m = 0, rc = 0;
    for (int32_t id = 0; id < t->n_vocab && rc == 0; id++) {
        if (!is_added(t, id) || !(t->flags[id] & TF_NORMALIZED)) continue;
        if (tok_normalize(t, tok_text(t, id), t->len[id], &sc, err)) {
            rc = -1;
            break;
        }
        if (sc.nlen == 0) continue;
        char *txt = tok_strndup(sc.nbuf, sc.nlen);
        if (!txt) {
            rc = wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
            break;
        }
        keys[m++] = (special_key){(unsigned char)txt[0], (uint32_t)sc.nlen, id, txt};
    }
    tok_scratch_free(&sc);
    if (rc == 0) {
        t->nspecials = malloc((size_t)(m ? m : 1) * sizeof *t->nspecials);
        t->nspecial_text = malloc((size_t)(m ? m : 1) * sizeof *t->nspecial_text);
        t->nspecial_len = malloc((size_t)(m ? m : 1) * sizeof *t->nspecial_len);
        if (!t->nspecials || !t->nspecial_text || !t->nspecial_len) rc = wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    }
    if (rc) {
        for (int i = 0; i < m; i++) free(keys[i].text);
        free(keys);
        free(t->nspecials);
        free(t->nspecial_text);
        free(t->nspecial_len);
        t->nspecials = NULL;
        t->nspecial_text = NULL;
        t->nspecial_len = NULL;
        return -1;
    }
    qsort(keys, (size_t)m, sizeof *keys, cmp_special);
    for (int i = 0; i < m; i++) {
        t->nspecials[i] = keys[i].id;
        t->nspecial_text[i] = keys[i].text;
        t->nspecial_len[i] = keys[i].len;
    }
    t->n_nspecials = m;
    free(keys);
    int k = 0;
    for (int c = 0; c < 256; c++) {
        t->nspecial_start[c] = k;
        while (k < m && (unsigned char)t->nspecial_text[k][0] == c) k++;
    }
    t->nspecial_start[256] = k;
    return 0;
}

static const char META_UTF8[] = "\xe2\x96\x81"; /* U+2581 */

/* The decoder chain of a tokenizer whose source named none: byte-level
 * unmapping, or SentencePiece's U+2581 -> ' ', byte fallback, and the
 * leading-space strip when the encoder adds a prefix. */
static int default_decoders(tokenizer *t, wick_error *err) {
    if (t->byte_level) {
        tok_dec bl = {.kind = DEC_BYTE_LEVEL};
        return tok_add_dec(t, &bl, err);
    }
    tok_dec rp = {.kind = DEC_REPLACE, .a = (char *)META_UTF8, .alen = 3, .b = (char *)" ", .blen = 1};
    tok_dec bf = {.kind = DEC_BYTE_FALLBACK};
    tok_dec fu = {.kind = DEC_FUSE};
    tok_dec st = {.kind = DEC_STRIP, .a = (char *)" ", .alen = 1, .start = 1, .stop = 0};
    if (tok_add_dec(t, &rp, err) || tok_add_dec(t, &bf, err) || tok_add_dec(t, &fu, err)) return -1;
    return t->strip_leading_space ? tok_add_dec(t, &st, err) : 0;
}

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* "<0xXX>" -> XX, else -1 */
static int byte_token_value(const char *s, size_t n) {
    if (n != 6 || s[0] != '<' || s[1] != '0' || s[2] != 'x' || s[5] != '>') return -1;
    int h = hexval(s[3]), l = hexval(s[4]);
    return (h < 0 || l < 0) ? -1 : h * 16 + l;
}

static uint64_t joint_key(uint32_t a, uint32_t b) { return (((uint64_t)a << 21) | b) + 1; }

bool tok_joint_has(const tokenizer *t, uint32_t cp1, uint32_t cp2) {
    uint64_t k = joint_key(cp1, cp2);
    size_t i = mix64(k) & (t->joints_cap - 1);
    for (;;) {
        uint64_t v = t->joints[i];
        if (v == k) return true;
        if (v == 0) return false;
        i = (i + 1) & (t->joints_cap - 1);
    }
}

static int build_joints(tokenizer *t, wick_error *err) {
    free(t->joints);
    t->joints = NULL;
    t->chunking = false;
    if (t->byte_level) return 0;
    if (t->model == MODEL_BPE_RANK) {
        /* merges of byte-fallback pieces cover text that their strings do not show */
        for (int r = 0; r < t->n_merges; r++)
            if (t->type[t->merge_a[r]] == TT_BYTE || t->type[t->merge_b[r]] == TT_BYTE) return 0;
    }
    size_t n = 0;
    for (int32_t id = 0; id < t->n_vocab; id++) n += t->len[id];
    size_t cap = 1024;
    while (cap < n * 2) cap *= 2;
    t->joints = calloc(cap, sizeof *t->joints);
    if (!t->joints) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    t->joints_cap = cap;
    for (int32_t id = 0; id < t->n_vocab; id++) {
        const char *s = tok_text(t, id);
        size_t len = t->len[id], i = 0;
        uint32_t prev = 0;
        bool have_prev = false;
        while (i < len) {
            uint32_t cp;
            i += (size_t)tok_utf8_decode(s + i, len - i, &cp);
            if (have_prev) {
                uint64_t k = joint_key(prev, cp);
                size_t j = mix64(k) & (cap - 1);
                while (t->joints[j] && t->joints[j] != k) j = (j + 1) & (cap - 1);
                t->joints[j] = k;
            }
            prev = cp;
            have_prev = true;
        }
    }
    t->chunking = true;
    return 0;
}

static int build_pieces(tokenizer *t, wick_error *err);

int tok_finalize(tokenizer *t, wick_error *err) {
    if (t->n_vocab <= 0) return wick_fail(err, "tokenizer: empty vocabulary");
    if (!t->map_ids && tok_build_map(t, err)) return -1;
    /* ids that must be in range */
    int32_t *ids[] = {&t->bos, &t->eos, &t->unk, &t->pad};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++)
        if (*ids[i] >= t->n_vocab || *ids[i] < -1) *ids[i] = -1;
    if (t->add_bos && t->bos < 0) t->add_bos = false;
    if (t->add_eos && t->eos < 0) t->add_eos = false;

    /* byte ids */
    for (int b = 0; b < 256; b++) {
        t->byte_ids[b] = -1;
        if (t->byte_level) {
            char u[4];
            int k = tok_byte_to_utf8((unsigned char)b, u);
            t->byte_ids[b] = tok_find_n(t, u, (size_t)k);
        } else {
            char hx[8];
            static const char *H = "0123456789ABCDEF";
            hx[0] = '<', hx[1] = '0', hx[2] = 'x', hx[3] = H[b >> 4], hx[4] = H[b & 15], hx[5] = '>';
            int32_t id = tok_find_n(t, hx, 6);
            if (id < 0 && t->model == MODEL_BPE_SCORE) {
                char one = (char)b;
                id = tok_find_n(t, &one, 1);
            }
            t->byte_ids[b] = id;
        }
    }
    if (!t->byte_level) {
        /* byte tokens of SentencePiece vocabularies decode to their byte */
        for (int32_t id = 0; id < t->n_vocab; id++)
            if (t->type[id] == TT_NORMAL && byte_token_value(tok_text(t, id), t->len[id]) >= 0 &&
                t->byte_fallback)
                t->type[id] = TT_BYTE;
    }

    /* special tokens matched in raw text */
    free(t->specials);
    t->specials = NULL;
    t->n_specials = 0;
    int n = 0;
    for (int32_t id = 0; id < t->n_vocab; id++)
        if (is_added(t, id) && !(t->flags[id] & TF_NORMALIZED)) n++;
    if (n) {
        t->specials = malloc((size_t)n * sizeof *t->specials);
        special_key *keys = malloc((size_t)n * sizeof *keys);
        if (!t->specials || !keys) {
            free(keys);
            return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
        }
        int m = 0;
        for (int32_t id = 0; id < t->n_vocab; id++)
            if (is_added(t, id) && !(t->flags[id] & TF_NORMALIZED))
                keys[m++] = (special_key){(unsigned char)tok_text(t, id)[0], t->len[id], id, NULL};
        qsort(keys, (size_t)m, sizeof *keys, cmp_special);
        for (int i = 0; i < m; i++) t->specials[i] = keys[i].id;
        t->n_specials = m;
        free(keys);
    }
    int k = 0;
    for (int c = 0; c < 256; c++) {
        t->special_start[c] = k;
        while (k < t->n_specials && (unsigned char)tok_text(t, t->specials[k])[0] == c) k++;
    }
    t->special_start[256] = k;

    /* end-of-generation ids */
    static const char *const EOG[] = {"<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|eom_id|>",
                                      "<|end|>",    "<end_of_turn>", "<EOT>"};
    t->n_eog = 0;
    if (t->eos >= 0) t->eog[t->n_eog++] = t->eos;
    for (size_t i = 0; i < sizeof EOG / sizeof EOG[0]; i++) {
        int32_t id = tok_find(t, EOG[i]);
        if (id >= 0 && id != t->eos && t->n_eog < 8) t->eog[t->n_eog++] = id;
    }
    if (build_nspecials(t, err)) return -1;
    if (t->n_decs == 0 && default_decoders(t, err)) return -1;
    if (build_joints(t, err)) return -1;
    if (tok_limit_setup(t, err)) return -1;
    return build_pieces(t, err);
}

void tok_free(tokenizer *t) {
    if (!t) return;
    free(t->arena);
    free(t->off);
    free(t->len);
    free(t->scores);
    free(t->type);
    free(t->flags);
    free(t->map_ids);
    free(t->map_hash);
    free(t->merge_a);
    free(t->merge_b);
    free(t->merge_res);
    free(t->mslots);
    free(t->chat_template);
    free(t->piece_buf);
    free(t->piece_off);
    free(t->specials);
    free(t->joints);
    for (int i = 0; i < t->n_norms; i++) {
        free(t->norms[i].a);
        free(t->norms[i].b);
    }
    free(t->norms);
    for (int i = 0; i < t->n_pres; i++) tok_pre_free(&t->pres[i]);
    free(t->pres);
    for (int i = 0; i < t->n_decs; i++) {
        free(t->decs[i].a);
        free(t->decs[i].b);
    }
    free(t->decs);
    free_nspecials(t);
    free(t);
}

/* -------------------------------------------------------------- accessors */

tok_kind tok_get_kind(const tokenizer *t) { return t->kind; }
const char *tok_kind_name(const tokenizer *t) {
    return t->kind == TOK_KIND_SPM ? "SentencePiece BPE" : t->kind == TOK_KIND_WPM ? "WordPiece" : "byte-level BPE";
}
int tok_n_vocab(const tokenizer *t) { return t->n_vocab; }
int32_t tok_bos(const tokenizer *t) { return t->bos; }
int32_t tok_eos(const tokenizer *t) { return t->eos; }
bool tok_adds_bos(const tokenizer *t) { return t->add_bos && t->bos >= 0; }
bool tok_adds_eos(const tokenizer *t) { return t->add_eos && t->eos >= 0; }
bool tok_is_special(const tokenizer *t, int32_t id) {
    if (id < 0 || id >= t->n_vocab) return false;
    return t->type[id] == TT_CONTROL || t->type[id] == TT_UNKNOWN;
}
const char *tok_chat_template(const tokenizer *t) { return t->chat_template; }
int tok_set_chat_template(tokenizer *t, const char *tmpl) {
    char *c = tmpl ? tok_strdup(tmpl) : NULL;
    if (tmpl && !c) return -1;
    free(t->chat_template);
    t->chat_template = c;
    return 0;
}
bool tok_is_eog(const tokenizer *t, int32_t id) {
    for (int i = 0; i < t->n_eog; i++)
        if (t->eog[i] == id) return true;
    return false;
}
const char *tok_token_text(const tokenizer *t, int32_t id, size_t *len) {
    if (id < 0 || id >= t->n_vocab) return NULL;
    if (len) *len = t->len[id];
    return tok_text(t, id);
}
int32_t tok_find(const tokenizer *t, const char *text) {
    return text ? tok_find_n(t, text, strlen(text)) : -1;
}

/* --------------------------------------------------------------- decoding */

/* A list of strings in one buffer: the token strings the decoder steps
 * transform, as Hugging Face's decode_chain does. */
typedef struct str_list {
    char *buf;
    size_t len, cap;
    size_t *p; /* (off, len) pairs */
    size_t n, pcap;
} str_list;

static void sl_free(str_list *l) {
    free(l->buf);
    free(l->p);
}

static int sl_bytes(str_list *l, const char *s, size_t n) {
    if (n > SIZE_MAX - 1 - l->len || !GROW_ARRAY(l->buf, l->len + n + 1, &l->cap)) return -1;
    if (n) memcpy(l->buf + l->len, s, n);
    l->len += n;
    if (l->n) l->p[2 * (l->n - 1) + 1] += n;
    return 0;
}

/* start a new (empty) string */
static int sl_new(str_list *l) {
    if (!l->buf && sl_bytes(l, "", 0)) return -1; /* a buffer even for empty strings */
    if (!grow_array(&l->p, 2 * sizeof *l->p, l->n + 1, &l->pcap)) return -1; /* (offset, length) pairs */
    l->p[2 * l->n] = l->len;
    l->p[2 * l->n + 1] = 0;
    l->n++;
    return 0;
}

static int sl_push(str_list *l, const char *s, size_t n) { return sl_new(l) || sl_bytes(l, s, n) ? -1 : 0; }

static void sl_clear(str_list *l) {
    l->len = 0;
    l->n = 0;
}

static int dec_replace(const tok_dec *d, const char *s, size_t n, str_list *out) {
    if (sl_new(out)) return -1;
    size_t i = 0;
    while (i < n) {
        const char *q = d->alen ? memmem(s + i, n - i, d->a, d->alen) : NULL;
        if (!q) return sl_bytes(out, s + i, n - i);
        if (sl_bytes(out, s + i, (size_t)(q - (s + i))) || sl_bytes(out, d->b, d->blen)) return -1;
        i = (size_t)(q - s) + d->alen;
    }
    return 0;
}

static int dec_strip(const tok_dec *d, const char *s, size_t n, str_list *out) {
    size_t b = 0, e = n;
    for (int k = 0; k < d->start && b + d->alen <= e && memcmp(s + b, d->a, d->alen) == 0; k++) b += d->alen;
    for (int k = 0; k < d->stop && e >= b + d->alen && memcmp(s + e - d->alen, d->a, d->alen) == 0; k++)
        e -= d->alen;
    return sl_push(out, s + b, e - b);
}

/* Metaspace: the replacement becomes ' ', except in the first string of the
 * text when a prefix was prepended while encoding: there it is dropped. */
static int dec_metaspace(const tok_dec *d, const char *s, size_t n, bool first, str_list *out) {
    tok_dec r = *d;
    r.b = (char *)" ";
    r.blen = first && d->prepend ? 0 : 1;
    return dec_replace(&r, s, n, out);
}

/* ByteLevel over one string: every character mapped back to its byte, or the
 * string as it is if some character is not in the byte map. */
static int dec_byte_level_one(const char *s, size_t n, str_list *out) {
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        i += (size_t)tok_utf8_decode(s + i, n - i, &cp);
        if (tok_cp_to_byte(cp) < 0) return sl_bytes(out, s, n);
    }
    for (i = 0; i < n;) {
        uint32_t cp;
        i += (size_t)tok_utf8_decode(s + i, n - i, &cp);
        char b = (char)tok_cp_to_byte(cp);
        if (sl_bytes(out, &b, 1)) return -1;
    }
    return 0;
}

/* Run the decoder steps over the strings of in (left in *in). whole: the
 * strings are a whole text (tok_decode); otherwise one token streamed on its
 * own (tok_piece), where only what a token means by itself applies: no
 * first-string rule, no strip of the fused text, byte tokens and byte-level
 * strings stay raw bytes (the stream assembles characters). */
static int run_decoders(const tokenizer *t, str_list *in, str_list *tmp, bool whole) {
    bool fused = false;
    for (int k = 0; k < t->n_decs; k++) {
        const tok_dec *d = &t->decs[k];
        sl_clear(tmp);
        int rc = 0;
        switch (d->kind) {
        case DEC_REPLACE:
            for (size_t i = 0; i < in->n && rc == 0; i++) rc = dec_replace(d, in->buf + in->p[2 * i], in->p[2 * i + 1], tmp);
            break;
        case DEC_STRIP:
            if (fused && !whole) continue;
            for (size_t i = 0; i < in->n && rc == 0; i++) rc = dec_strip(d, in->buf + in->p[2 * i], in->p[2 * i + 1], tmp);
            break;
        case DEC_METASPACE:
            for (size_t i = 0; i < in->n && rc == 0; i++)
                rc = dec_metaspace(d, in->buf + in->p[2 * i], in->p[2 * i + 1], whole && i == 0, tmp);
            break;
        case DEC_FUSE:
            fused = true;
            rc = sl_new(tmp);
            for (size_t i = 0; i < in->n && rc == 0; i++) rc = sl_bytes(tmp, in->buf + in->p[2 * i], in->p[2 * i + 1]);
            break;
        case DEC_BYTE_LEVEL:
            fused = true;
            rc = sl_new(tmp);
            for (size_t i = 0; i < in->n && rc == 0; i++) rc = dec_byte_level_one(in->buf + in->p[2 * i], in->p[2 * i + 1], tmp);
            break; /* lossy UTF-8 at the end of tok_decode */
        case DEC_BYTE_FALLBACK: {
            size_t i = 0;
            while (i < in->n && rc == 0) {
                size_t j = i;
                while (j < in->n && byte_token_value(in->buf + in->p[2 * j], in->p[2 * j + 1]) >= 0) j++;
                if (j == i) {
                    rc = sl_push(tmp, in->buf + in->p[2 * i], in->p[2 * i + 1]);
                    i++;
                    continue;
                }
                /* a run of byte tokens: its text if valid UTF-8, else one U+FFFD per byte */
                size_t start = tmp->len;
                rc = sl_new(tmp);
                for (size_t k2 = i; k2 < j && rc == 0; k2++) {
                    char b = (char)byte_token_value(in->buf + in->p[2 * k2], in->p[2 * k2 + 1]);
                    rc = sl_bytes(tmp, &b, 1);
                }
                if (rc == 0 && whole && tok_utf8_valid_prefix(tmp->buf + start, tmp->len - start) != tmp->len - start) {
                    tmp->n--;
                    tmp->len = start;
                    for (size_t k2 = i; k2 < j && rc == 0; k2++) rc = sl_push(tmp, "\xef\xbf\xbd", 3);
                }
                i = j;
            }
            break;
        }
        }
        if (rc) return -1;
        str_list x = *in;
        *in = *tmp;
        *tmp = x;
    }
    return 0;
}

/* The string the decoder sees for id: the vocabulary string, or for an added
 * token matched in normalized text its normalized content (as Hugging Face
 * decodes it). */
static const char *dec_string(const tokenizer *t, int32_t id, size_t *len) {
    if (t->type[id] == TT_UNUSED) { /* padding rows ([PAD<id>] in GGUF): nothing, as llama.cpp */
        *len = 0;
        return "";
    }
    if (t->flags[id] & TF_NORMALIZED)
        for (int k = 0; k < t->n_nspecials; k++)
            if (t->nspecials[k] == id) {
                *len = t->nspecial_len[k];
                return t->nspecial_text[k];
            }
    *len = t->len[id];
    return tok_text(t, id);
}

/* The decoder chain applied to one token alone (what streaming emits). */
static int piece_uncached(const tokenizer *t, int32_t id, char *buf, size_t cap) {
    if (id < 0 || id >= t->n_vocab) return -1;
    str_list a = {0}, b = {0};
    int r = -1;
    size_t dl;
    const char *ds = dec_string(t, id, &dl);
    if (sl_push(&a, ds, dl) == 0 && run_decoders(t, &a, &b, false) == 0) {
        size_t o = 0;
        for (size_t i = 0; i < a.n; i++)
            for (size_t k = 0; k < a.p[2 * i + 1]; k++, o++)
                if (o < cap) buf[o] = a.buf[a.p[2 * i] + k];
        r = o > (size_t)INT32_MAX ? -1 : (int)o;
    }
    sl_free(&a);
    sl_free(&b);
    return r;
}

/* Run the decoders once per token at load so streaming a token is a copy,
 * with no allocation in the generation loop. */
static int build_pieces(tokenizer *t, wick_error *err) {
    free(t->piece_buf);
    free(t->piece_off);
    t->piece_buf = NULL;
    t->piece_off = malloc(((size_t)t->n_vocab + 1) * sizeof *t->piece_off);
    size_t cap = (size_t)t->n_vocab * 8 + 64, used = 0;
    t->piece_buf = malloc(cap);
    if (!t->piece_off || !t->piece_buf) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    for (int32_t id = 0; id < t->n_vocab; id++) {
        t->piece_off[id] = (uint32_t)used;
        int n = piece_uncached(t, id, t->piece_buf + used, cap - used);
        if (n < 0) n = 0;
        if ((size_t)n > cap - used) {
            if (!GROW_ARRAY(t->piece_buf, used + (size_t)n, &cap))
                return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
            piece_uncached(t, id, t->piece_buf + used, cap - used);
        }
        used += (size_t)n;
        if (used > UINT32_MAX) return wick_fail(err, "tokenizer: token pieces too large");
    }
    t->piece_off[t->n_vocab] = (uint32_t)used;
    return 0;
}

int tok_piece(const tokenizer *t, int32_t id, char *buf, size_t cap) {
    if (id < 0 || id >= t->n_vocab) return -1;
    size_t n = t->piece_off[id + 1] - t->piece_off[id];
    memcpy(buf, t->piece_buf + t->piece_off[id], n < cap ? n : cap);
    return n > (size_t)INT32_MAX ? -1 : (int)n;
}

char *tok_decode(const tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                 wick_error *err) {
    return tok_decode_len(t, ids, n, skip_special, NULL, err);
}

char *tok_decode_len(const tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                     size_t *out_len, wick_error *err) {
    str_list a = {0}, b = {0};
    char *out = NULL;
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || id >= t->n_vocab) {
            wick_fail(err, "token id %d is out of range [0, %d)", id, t->n_vocab);
            goto done;
        }
        if (skip_special && tok_is_special(t, id)) continue;
        size_t dl;
        const char *ds = dec_string(t, id, &dl);
        if (sl_push(&a, ds, dl)) goto oom;
    }
    if (run_decoders(t, &a, &b, true)) goto oom;
    size_t len = 0;
    for (size_t i = 0; i < a.n; i++) len += a.p[2 * i + 1];
    out = malloc(len + 1);
    if (!out) goto oom;
    len = 0;
    for (size_t i = 0; i < a.n; i++) {
        if (a.p[2 * i + 1]) memcpy(out + len, a.buf + a.p[2 * i], a.p[2 * i + 1]);
        len += a.p[2 * i + 1];
    }
    out[len] = 0;
    if (tok_utf8_valid_prefix(out, len) != len) { /* lossy, as the byte-level decoder is */
        char *fixed = tok_utf8_sanitize(out, len, &len);
        free(out);
        out = fixed;
        if (!out) goto oom;
    }
    if (out_len) *out_len = len;
    goto done;
oom:
    wick_fail_code(err, WICK_E_NO_MEMORY, "tok_decode: out of memory");
done:
    sl_free(&a);
    sl_free(&b);
    return out;
}
