/* bpe.c — the BPE merge loop over one pre-tokenized piece.
 *
 * Symbols form a doubly linked list over the piece's bytes; candidate merges of
 * adjacent symbols sit in a binary heap ordered by (key, left position), so a
 * piece of n bytes costs O(n log n), never O(n^2). Two priorities:
 *  - rank mode (tokenizer.json / merges.txt / GGUF gpt2 merges): the pair
 *    (left id, right id) must be a merge; lowest rank first;
 *  - score mode (GGUF "llama", llama.cpp's SPM): any adjacent pair whose
 *    concatenated text is a token; highest token score first.
 * Ties go to the leftmost pair. A heap entry is stale when either symbol was
 * merged away or grew since it was pushed (detected by the byte size). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

static bool entry_less(const bpe_entry *a, const bpe_entry *b) {
    if (a->key != b->key) return a->key < b->key;
    return a->left < b->left;
}

static void heap_push(tok_scratch *s, bpe_entry e) {
    size_t i = s->heap_n++;
    bpe_entry *h = s->heap;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!entry_less(&e, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
}

static bpe_entry heap_pop(tok_scratch *s) {
    bpe_entry *h = s->heap;
    bpe_entry top = h[0];
    bpe_entry last = h[--s->heap_n];
    size_t n = s->heap_n, i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && entry_less(&h[c + 1], &h[c])) c++;
        if (!entry_less(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    if (n) h[i] = last;
    return top;
}

static int reserve_work(tok_scratch *s, size_t n, wick_error *err) {
    if (n > (SIZE_MAX - 4) / 3 || !GROW_ARRAY(s->syms, n, &s->syms_cap) || !GROW_ARRAY(s->heap, 3 * n + 4, &s->heap_cap))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    return 0;
}

static void try_pair(const tokenizer *t, tok_scratch *s, const char *p, int32_t l, int32_t r) {
    if (l < 0 || r < 0) return;
    const bpe_sym *L = &s->syms[l], *R = &s->syms[r];
    bpe_entry e;
    e.left = l;
    e.right = r;
    e.size = L->n + R->n;
    if (t->model == MODEL_BPE_SCORE) {
        int32_t id = tok_find_n(t, p + L->off, e.size);
        if (id < 0) return;
        e.key = -(double)t->scores[id];
        e.res = id;
    } else {
        if (L->id < 0 || R->id < 0) return;
        int32_t res;
        int32_t rank = tok_merge_lookup(t, L->id, R->id, &res);
        if (rank < 0) return;
        e.key = (double)rank;
        e.res = res;
    }
    heap_push(s, e);
}

static int emit(tok_ids *out, int32_t id, wick_error *err) {
    if (tok_ids_push(out, id)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    return 0;
}

static int encode_chunk(const tokenizer *t, tok_scratch *s, const char *p, size_t n, tok_ids *out,
                        wick_error *err);

/* Is the character at p (k bytes) a token by itself? (rank mode: an unknown
 * character becomes <unk> or bytes, which may fuse with a neighbour) */
static bool char_known(const tokenizer *t, const char *p, size_t k) {
    return t->model == MODEL_BPE_SCORE || tok_find_n(t, p, k) >= 0;
}

static int encode_piece(const tokenizer *t, tok_scratch *s, const char *p, size_t n, tok_ids *out,
                        wick_error *err);

/* The piece cache: direct-mapped by a hash of the piece's bytes, for pieces of
 * up to BPE_CACHE_KEY bytes; the id lists live in one pool that starts over
 * (with every slot emptied) when it is full. Made after the first pieces of a
 * call, so short texts pay nothing for it. */
#define BPE_CACHE_SLOTS 8192
#define BPE_CACHE_KEY 24
#define BPE_CACHE_POOL (1u << 20)

struct bpe_cache_slot {
    uint32_t hash, off; /* off: first id in cache_ids */
    uint8_t len, n;     /* len 0 = empty */
    char key[BPE_CACHE_KEY];
};

static uint32_t piece_hash(const char *p, size_t n) {
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

int tok_bpe_encode_piece(const tokenizer *t, tok_scratch *s, const char *p, size_t n, tok_ids *out,
                         wick_error *err) {
    if (n == 0) return 0;
    if (n > BPE_CACHE_KEY || ++s->pieces_seen < 256) return encode_piece(t, s, p, n, out, err);
    if (!s->cache) {
        s->cache = calloc(BPE_CACHE_SLOTS, sizeof *s->cache);
        s->cache_ids = malloc(BPE_CACHE_POOL * sizeof *s->cache_ids);
        if (!s->cache || !s->cache_ids) { /* no cache then: it is only a shortcut */
            free(s->cache);
            free(s->cache_ids);
            s->cache = NULL;
            s->cache_ids = NULL;
            return encode_piece(t, s, p, n, out, err);
        }
        s->cache_ids_cap = BPE_CACHE_POOL;
        s->cache_ids_n = 0;
    }
    uint32_t h = piece_hash(p, n);
    struct bpe_cache_slot *sl = &s->cache[h & (BPE_CACHE_SLOTS - 1)];
    if (sl->len == n && sl->hash == h && memcmp(sl->key, p, n) == 0) {
        for (uint32_t i = 0; i < sl->n; i++)
            if (tok_ids_push(out, s->cache_ids[sl->off + i])) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
        return 0;
    }
    size_t before = out->n;
    if (encode_piece(t, s, p, n, out, err)) return -1;
    size_t k = out->n - before;
    if (k > 255) return 0;
    if (s->cache_ids_n + k > s->cache_ids_cap) {
        memset(s->cache, 0, BPE_CACHE_SLOTS * sizeof *s->cache);
        s->cache_ids_n = 0;
    }
    memcpy(s->cache_ids + s->cache_ids_n, out->v + before, k * sizeof(int32_t));
    sl->hash = h;
    sl->off = (uint32_t)s->cache_ids_n;
    sl->len = (uint8_t)n;
    sl->n = (uint8_t)k;
    memcpy(sl->key, p, n);
    s->cache_ids_n += k;
    return 0;
}

static int encode_piece(const tokenizer *t, tok_scratch *s, const char *p, size_t n, tok_ids *out,
                        wick_error *err) {
    if (n > UINT32_MAX / 4) return wick_fail(err, "tokenizer: text piece too long");
    if (!t->chunking || n < 64 || t->ignore_merges) return encode_chunk(t, s, p, n, out, err);
    /* cut between characters whose bigram occurs in no token */
    size_t start = 0, i = 0;
    uint32_t prev = 0;
    bool prev_known = false;
    while (i < n) {
        uint32_t cp;
        size_t k = (size_t)tok_utf8_decode(p + i, n - i, &cp);
        bool known = char_known(t, p + i, k);
        if (i > start && prev_known && known && !tok_joint_has(t, prev, cp)) {
            if (encode_chunk(t, s, p + start, i - start, out, err)) return -1;
            if (s->id_limit && out->n >= s->id_limit) return 0; /* over the caller's limit: stop */
            start = i;
        }
        prev = cp;
        prev_known = known;
        i += k;
    }
    return encode_chunk(t, s, p + start, n - start, out, err);
}

static int encode_chunk(const tokenizer *t, tok_scratch *s, const char *p, size_t n, tok_ids *out,
                        wick_error *err) {

    /* byte-level: one byte is one token */
    if (t->byte_level && n == 1) {
        int32_t id = t->byte_ids[(unsigned char)p[0]];
        return id >= 0 ? emit(out, id, err) : 0;
    }

    if (t->ignore_merges && t->model == MODEL_BPE_RANK) {
        int32_t id;
        if (t->byte_level) {
            if (n > (SIZE_MAX - 1) / 2 || !GROW_ARRAY(s->mbuf, 2 * n + 1, &s->mcap))
                return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
            size_t o = 0;
            for (size_t i = 0; i < n; i++) o += (size_t)tok_byte_to_utf8((unsigned char)p[i], s->mbuf + o);
            id = tok_find_n(t, s->mbuf, o);
        } else {
            id = tok_find_n(t, p, n);
        }
        if (id >= 0) return emit(out, id, err);
    }

    if (reserve_work(s, n, err)) return -1;
    bpe_sym *sy = s->syms;
    int32_t ns = 0;

    if (t->byte_level) {
        for (size_t i = 0; i < n; i++)
            sy[ns++] = (bpe_sym){t->byte_ids[(unsigned char)p[i]], 0, 0, (uint32_t)i, 1};
    } else {
        size_t i = 0;
        while (i < n) {
            size_t k = (size_t)tok_utf8_len((unsigned char)p[i]);
            if (i + k > n) k = n - i;
            int32_t id = tok_find_n(t, p + i, k);
            if (id >= 0 || t->model == MODEL_BPE_SCORE) {
                sy[ns++] = (bpe_sym){id, 0, 0, (uint32_t)i, (uint32_t)k};
            } else {
                bool all = t->byte_fallback;
                for (size_t j = 0; j < k && all; j++)
                    if (t->byte_ids[(unsigned char)p[i + j]] < 0) all = false;
                if (all) {
                    for (size_t j = 0; j < k; j++)
                        sy[ns++] = (bpe_sym){t->byte_ids[(unsigned char)p[i + j]], 0, 0,
                                             (uint32_t)(i + j), 1};
                } else if (t->unk >= 0) {
                    if (t->fuse_unk && ns > 0 && sy[ns - 1].id == t->unk &&
                        sy[ns - 1].off + sy[ns - 1].n == i)
                        sy[ns - 1].n += (uint32_t)k;
                    else
                        sy[ns++] = (bpe_sym){t->unk, 0, 0, (uint32_t)i, (uint32_t)k};
                } else {
                    /* no way to represent this character: it is dropped */
                    sy[ns++] = (bpe_sym){-1, 0, 0, (uint32_t)i, (uint32_t)k};
                }
            }
            i += k;
        }
    }
    for (int32_t i = 0; i < ns; i++) {
        sy[i].prev = i - 1;
        sy[i].next = i + 1 < ns ? i + 1 : -1;
    }

    s->heap_n = 0;
    for (int32_t i = 0; i + 1 < ns; i++) try_pair(t, s, p, i, i + 1);
    while (s->heap_n > 0) {
        bpe_entry e = heap_pop(s);
        bpe_sym *L = &sy[e.left], *R = &sy[e.right];
        if (L->n == 0 || R->n == 0 || L->next != e.right || L->n + R->n != e.size) continue;
        L->id = e.res;
        L->n += R->n;
        R->n = 0;
        L->next = R->next;
        if (R->next >= 0) sy[R->next].prev = e.left;
        if (s->heap_n + 2 > s->heap_cap) { /* cannot happen: at most ns-1 + 2 per merge */
            return wick_fail(err, "tokenizer: internal heap overflow");
        }
        try_pair(t, s, p, L->prev, e.left);
        try_pair(t, s, p, e.left, L->next);
    }

    for (int32_t i = ns > 0 ? 0 : -1; i >= 0; i = sy[i].next) {
        const bpe_sym *x = &sy[i];
        if (x->n == 0) continue;
        if (x->id >= 0) {
            if (emit(out, x->id, err)) return -1;
            continue;
        }
        /* a character without a token: its bytes (score mode, llama.cpp's byte fallback) */
        if (t->model == MODEL_BPE_SCORE || t->byte_fallback) {
            for (uint32_t j = 0; j < x->n; j++) {
                int32_t id = t->byte_ids[(unsigned char)p[x->off + j]];
                if (id < 0) id = t->unk;
                if (id >= 0 && emit(out, id, err)) return -1;
            }
        }
    }
    return 0;
}
