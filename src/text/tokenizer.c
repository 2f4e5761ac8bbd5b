/* tokenizer.c — the tokenizer object: token table, string -> id hash map, merge
 * table, special-token matching in raw text, and the encode / piece / decode
 * entry points that dispatch to normalize.c, pretokenize.c and bpe.c. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

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
    if (a->n == a->cap) {
        size_t nc = a->cap ? a->cap * 2 : 64;
        int32_t *v = realloc(a->v, nc * sizeof *v);
        if (!v) return -1;
        a->v = v;
        a->cap = nc;
    }
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
    if (s->md) pcre2_match_data_free(s->md);
    memset(s, 0, sizeof *s);
}

/* ----------------------------------------------------------- construction */

tokenizer *tok_new(tok_kind kind, wick_error *err) {
    tokenizer *t = calloc(1, sizeof *t);
    if (!t) {
        wick_fail(err, "tokenizer: out of memory");
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
    if (!off || !len || !sc || !ty || !fl) return wick_fail(err, "tokenizer: out of memory");
    if (!t->arena) {
        t->arena_cap = 4096;
        t->arena = malloc(t->arena_cap);
        if (!t->arena) return wick_fail(err, "tokenizer: out of memory");
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
    if (t->arena_len + len + 1 > t->arena_cap) {
        size_t nc = t->arena_cap * 2;
        while (nc < t->arena_len + len + 1) nc *= 2;
        char *a = realloc(t->arena, nc);
        if (!a) return wick_fail(err, "tokenizer: out of memory");
        t->arena = a;
        t->arena_cap = nc;
    }
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
    while (cap < (size_t)t->n_vocab * 2) cap *= 2;
    t->map_ids = malloc(cap * sizeof *t->map_ids);
    t->map_hash = malloc(cap * sizeof *t->map_hash);
    if (!t->map_ids || !t->map_hash) return wick_fail(err, "tokenizer: out of memory");
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

static int merges_rehash(tokenizer *t, size_t cap) {
    tok_merge_slot *sl = malloc(cap * sizeof *sl);
    if (!sl) return -1;
    for (size_t i = 0; i < cap; i++) sl[i].key = UINT64_MAX;
    for (size_t j = 0; j < t->mcap; j++) {
        if (t->mslots[j].key == UINT64_MAX) continue;
        size_t i = mix64(t->mslots[j].key) & (cap - 1);
        while (sl[i].key != UINT64_MAX) i = (i + 1) & (cap - 1);
        sl[i] = t->mslots[j];
    }
    free(t->mslots);
    t->mslots = sl;
    t->mcap = cap;
    return 0;
}

int32_t tok_merge_lookup(const tokenizer *t, int32_t a, int32_t b, int32_t *res) {
    if (!t->mcap) return -1;
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    size_t i = mix64(key) & (t->mcap - 1);
    for (;;) {
        const tok_merge_slot *s = &t->mslots[i];
        if (s->key == UINT64_MAX) return -1;
        if (s->key == key) {
            *res = s->res;
            return s->rank;
        }
        i = (i + 1) & (t->mcap - 1);
    }
}

int tok_add_merge(tokenizer *t, int32_t a, int32_t b, int32_t res, wick_error *err) {
    if (a < 0 || b < 0 || res < 0 || a >= t->n_vocab || b >= t->n_vocab || res >= t->n_vocab)
        return wick_fail(err, "tokenizer: bad merge ids");
    int32_t dummy;
    if (tok_merge_lookup(t, a, b, &dummy) >= 0) return 0; /* duplicate: keep the first */
    if ((size_t)(t->n_merges + 1) * 2 > t->mcap) {
        if (merges_rehash(t, t->mcap ? t->mcap * 2 : 1024)) return wick_fail(err, "tokenizer: out of memory");
    }
    if (t->n_merges == t->merges_cap) {
        int nc = t->merges_cap ? t->merges_cap * 2 : 1024;
        int32_t *na = realloc(t->merge_a, (size_t)nc * sizeof *na);
        if (na) t->merge_a = na;
        int32_t *nb = realloc(t->merge_b, (size_t)nc * sizeof *nb);
        if (nb) t->merge_b = nb;
        int32_t *nr = realloc(t->merge_res, (size_t)nc * sizeof *nr);
        if (nr) t->merge_res = nr;
        if (!na || !nb || !nr) return wick_fail(err, "tokenizer: out of memory");
        t->merges_cap = nc;
    }
    int rank = t->n_merges++;
    t->merge_a[rank] = a;
    t->merge_b[rank] = b;
    t->merge_res[rank] = res;
    uint64_t key = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
    size_t i = mix64(key) & (t->mcap - 1);
    while (t->mslots[i].key != UINT64_MAX) i = (i + 1) & (t->mcap - 1);
    t->mslots[i].key = key;
    t->mslots[i].rank = rank;
    t->mslots[i].res = res;
    return 0;
}

int tok_add_norm(tokenizer *t, const tok_norm *n, wick_error *err) {
    tok_norm *nn = realloc(t->norms, (size_t)(t->n_norms + 1) * sizeof *nn);
    if (!nn) return wick_fail(err, "tokenizer: out of memory");
    t->norms = nn;
    tok_norm c = *n;
    c.a = n->a ? tok_strndup(n->a, n->alen) : NULL;
    c.b = n->b ? tok_strndup(n->b, n->blen) : NULL;
    if ((n->a && !c.a) || (n->b && !c.b)) {
        free(c.a);
        free(c.b);
        return wick_fail(err, "tokenizer: out of memory");
    }
    t->norms[t->n_norms++] = c;
    return 0;
}

int tok_add_pre(tokenizer *t, const tok_pre *p, wick_error *err) {
    tok_pre *np = realloc(t->pres, (size_t)(t->n_pres + 1) * sizeof *np);
    if (!np) return wick_fail(err, "tokenizer: out of memory");
    t->pres = np;
    tok_pre c = *p;
    c.re = NULL;
    c.pattern = p->pattern ? tok_strdup(p->pattern) : NULL;
    if (p->pattern && !c.pattern) return wick_fail(err, "tokenizer: out of memory");
    if (tok_pre_compile(&c, err)) {
        tok_pre_free(&c);
        return -1;
    }
    t->pres[t->n_pres++] = c;
    return 0;
}

typedef struct special_key {
    unsigned first;
    uint32_t len;
    int32_t id;
} special_key;

static int cmp_special(const void *pa, const void *pb) {
    const special_key *a = pa, *b = pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    if (a->len != b->len) return a->len > b->len ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
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
    if (!t->joints) return wick_fail(err, "tokenizer: out of memory");
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
    for (int32_t id = 0; id < t->n_vocab; id++) {
        uint8_t ty = t->type[id];
        if ((ty == TT_CONTROL || ty == TT_USER || ty == TT_UNKNOWN) && t->len[id] > 0) n++;
    }
    if (n) {
        t->specials = malloc((size_t)n * sizeof *t->specials);
        special_key *keys = malloc((size_t)n * sizeof *keys);
        if (!t->specials || !keys) {
            free(keys);
            return wick_fail(err, "tokenizer: out of memory");
        }
        int m = 0;
        for (int32_t id = 0; id < t->n_vocab; id++) {
            uint8_t ty = t->type[id];
            if ((ty == TT_CONTROL || ty == TT_USER || ty == TT_UNKNOWN) && t->len[id] > 0)
                keys[m++] = (special_key){(unsigned char)tok_text(t, id)[0], t->len[id], id};
        }
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
    return build_joints(t, err);
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
    free(t->specials);
    free(t->joints);
    for (int i = 0; i < t->n_norms; i++) {
        free(t->norms[i].a);
        free(t->norms[i].b);
    }
    free(t->norms);
    for (int i = 0; i < t->n_pres; i++) tok_pre_free(&t->pres[i]);
    free(t->pres);
    free(t);
}

/* -------------------------------------------------------------- accessors */

tok_kind tok_get_kind(const tokenizer *t) { return t->kind; }
const char *tok_kind_name(const tokenizer *t) {
    return t->kind == TOK_KIND_SPM ? "SentencePiece BPE" : "byte-level BPE";
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

/* --------------------------------------------------------------- encoding */

static int encode_fragment(const tokenizer *t, tok_scratch *s, const char *text, size_t len,
                           bool first, tok_ids *out, wick_error *err) {
    if (len == 0) return 0;
    if (tok_normalize(t, text, len, s, err)) return -1;
    if (s->nlen == 0) return 0;
    if (tok_pretokenize(t, s->nbuf, s->nlen, first, s, err)) return -1;
    for (size_t i = 0; i < s->a.n; i++) {
        size_t po = s->a.p[2 * i], pl = s->a.p[2 * i + 1];
        if (pl == 0) continue;
        if (tok_bpe_encode_piece(t, s, s->a.buf + po, pl, out, err)) return -1;
    }
    return 0;
}

static bool is_ws(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int tok_encode(const tokenizer *t, const char *text, size_t len, bool add_special,
               bool parse_special, int32_t **ids, size_t *n_ids, wick_error *err) {
    *ids = NULL;
    *n_ids = 0;
    if (!text && len) return wick_fail(err, "tok_encode: NULL text");
    tok_ids out = {0};
    tok_scratch s;
    memset(&s, 0, sizeof s);
    char *fixed = NULL;
    const char *src = text ? text : "";
    if (len && tok_utf8_valid_prefix(src, len) != len) {
        fixed = tok_utf8_sanitize(src, len, &len);
        if (!fixed) return wick_fail(err, "tok_encode: out of memory");
        src = fixed;
    }
    int rc = 0;
    if (add_special && tok_adds_bos(t)) rc |= tok_ids_push(&out, t->bos);

    size_t pos = 0, frag = 0;
    bool first = true;
    while (pos < len && rc == 0) {
        unsigned char c = (unsigned char)src[pos];
        int32_t match = -1;
        for (int k = t->special_start[c]; k < t->special_start[c + 1]; k++) {
            int32_t id = t->specials[k];
            uint8_t ty = t->type[id];
            if (!parse_special && ty != TT_USER) continue;
            if (t->len[id] <= len - pos && memcmp(src + pos, tok_text(t, id), t->len[id]) == 0) {
                match = id;
                break;
            }
        }
        if (match < 0) {
            pos++;
            continue;
        }
        size_t end = pos;
        if (t->flags[match] & TF_LSTRIP)
            while (end > frag && is_ws((unsigned char)src[end - 1])) end--;
        if (end > frag && encode_fragment(t, &s, src + frag, end - frag, first, &out, err)) {
            rc = -1;
            break;
        }
        rc |= tok_ids_push(&out, match);
        first = false;
        pos += t->len[match];
        if (t->flags[match] & TF_RSTRIP)
            while (pos < len && is_ws((unsigned char)src[pos])) pos++;
        frag = pos;
    }
    if (rc == 0 && frag < len && encode_fragment(t, &s, src + frag, len - frag, first, &out, err))
        rc = -1;
    if (rc == 0 && add_special && tok_adds_eos(t)) rc |= tok_ids_push(&out, t->eos);
    tok_scratch_free(&s);
    free(fixed);
    if (rc) {
        free(out.v);
        if (err && !err->msg[0]) wick_fail(err, "tok_encode: out of memory");
        return -1;
    }
    if (!out.v) {
        out.v = malloc(sizeof(int32_t)); /* a valid pointer even for no ids */
        if (!out.v) return wick_fail(err, "tok_encode: out of memory");
    }
    *ids = out.v;
    *n_ids = out.n;
    return 0;
}

/* --------------------------------------------------------------- decoding */

static size_t put(char *buf, size_t cap, size_t o, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++, o++)
        if (o < cap) buf[o] = s[i];
    return o;
}

int tok_piece(const tokenizer *t, int32_t id, char *buf, size_t cap) {
    if (id < 0 || id >= t->n_vocab) return -1;
    const char *s = tok_text(t, id);
    size_t n = t->len[id], o = 0;
    uint8_t ty = t->type[id];
    if (ty == TT_CONTROL || ty == TT_USER || ty == TT_UNKNOWN || ty == TT_UNUSED) {
        o = put(buf, cap, 0, s, n);
    } else if (ty == TT_BYTE && byte_token_value(s, n) >= 0) {
        char b = (char)byte_token_value(s, n);
        o = put(buf, cap, 0, &b, 1);
    } else if (t->byte_level) {
        o = tok_byte_level_unmap(s, n, buf, cap);
    } else {
        /* SentencePiece: U+2581 -> ' ' */
        size_t i = 0;
        while (i < n) {
            if (i + 3 <= n && (unsigned char)s[i] == 0xE2 && (unsigned char)s[i + 1] == 0x96 &&
                (unsigned char)s[i + 2] == 0x81) {
                o = put(buf, cap, o, " ", 1);
                i += 3;
            } else {
                o = put(buf, cap, o, s + i, 1);
                i++;
            }
        }
    }
    return o > (size_t)INT32_MAX ? -1 : (int)o;
}

char *tok_decode(const tokenizer *t, const int32_t *ids, size_t n, bool skip_special,
                 wick_error *err) {
    size_t cap = 64, len = 0;
    char *out = malloc(cap);
    if (!out) {
        wick_fail(err, "tok_decode: out of memory");
        return NULL;
    }
    char tmp[256];
    bool at_start = true; /* nothing emitted yet: the SentencePiece space strip applies */
    for (size_t i = 0; i < n; i++) {
        int32_t id = ids[i];
        if (id < 0 || id >= t->n_vocab) {
            free(out);
            wick_fail(err, "tok_decode: token id %d out of range [0, %d)", id, t->n_vocab);
            return NULL;
        }
        if (skip_special && tok_is_special(t, id)) continue;
        int k = tok_piece(t, id, tmp, sizeof tmp);
        if (k < 0) continue;
        if (len + (size_t)k + 1 > cap) {
            while (len + (size_t)k + 1 > cap) cap *= 2;
            char *no = realloc(out, cap);
            if (!no) {
                free(out);
                wick_fail(err, "tok_decode: out of memory");
                return NULL;
            }
            out = no;
        }
        if ((size_t)k <= sizeof tmp)
            memcpy(out + len, tmp, (size_t)k);
        else
            tok_piece(t, id, out + len, (size_t)k);
        const char *p = out + len;
        size_t pk = (size_t)k;
        if (at_start && t->strip_leading_space && pk > 0 && p[0] == ' ' && !tok_is_special(t, id) &&
            t->type[id] != TT_USER) {
            memmove(out, out + 1, pk - 1);
            pk--;
        }
        at_start = false;
        len += pk;
    }
    out[len] = 0;
    if (tok_utf8_valid_prefix(out, len) != len) {
        size_t nl;
        char *fixed = tok_utf8_sanitize(out, len, &nl);
        free(out);
        if (!fixed) wick_fail(err, "tok_decode: out of memory");
        return fixed;
    }
    return out;
}
