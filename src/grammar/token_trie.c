/* token_trie.c — building the flat vocabulary trie from the tokens' bytes
 * (sorted, so that depth-first order is the order of the sorted list) and
 * walking it under an automaton (token_trie.h). */
#include "grammar/token_trie.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "grammar/regex_internal.h"

#define PIECE_MAX 4096 /* bytes of the longest token piece taken */

typedef struct trie_node {
    uint32_t subtree;   /* nodes in this node's subtree, itself included */
    uint32_t tok_first; /* its tokens: ids[tok_first .. tok_first + tok_n) */
    uint16_t depth;     /* bytes from the root */
    uint16_t tok_n;
    uint8_t byte;
} trie_node;

struct token_trie {
    uint8_t *pool;     /* every token's bytes */
    size_t *tok_at;    /* token id's bytes: pool[tok_at[id] .. tok_at[id + 1]) (empty: left out) */
    trie_node *nodes;
    size_t n_nodes;
    int32_t *ids;
    int32_t n_vocab, n_pieces;
    int max_depth;
};

typedef struct piece {
    uint8_t *b;
    uint32_t len;
    int32_t id;
} piece;

static int cmp_piece(const void *x, const void *y) {
    const piece *a = x, *b = y;
    const uint32_t n = a->len < b->len ? a->len : b->len;
    const int c = memcmp(a->b, b->b, n);
    if (c) return c;
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static void free_pieces(piece *p, int32_t n) {
    for (int32_t i = 0; i < n; i++) free(p[i].b);
    free(p);
}

/* Fills t's nodes and ids from np pieces sorted by cmp_piece. */
static bool build_nodes(token_trie *t, const piece *ps, int32_t np, size_t total) {
    /* at most one node per byte of every piece, plus the root */
    t->nodes = malloc(sizeof *t->nodes * total);
    t->ids = malloc(sizeof *t->ids * (size_t)(np ? np : 1));
    uint32_t *path = malloc(sizeof *path * (PIECE_MAX + 1));
    if (!t->nodes || !t->ids || !path) {
        free(path);
        return false;
    }
    t->nodes[0] = (trie_node){.tok_first = 0};
    size_t n = 1;
    path[0] = 0;
    for (int32_t i = 0; i < np; i++) {
        uint32_t l = 0;
        if (i > 0) {
            const uint32_t m = ps[i - 1].len < ps[i].len ? ps[i - 1].len : ps[i].len;
            while (l < m && ps[i - 1].b[l] == ps[i].b[l]) l++;
        }
        for (uint32_t d = l + 1; d <= ps[i].len; d++) {
            t->nodes[n] = (trie_node){.byte = ps[i].b[d - 1], .depth = (uint16_t)d, .tok_first = (uint32_t)i};
            path[d] = (uint32_t)n++;
        }
        trie_node *end = &t->nodes[path[ps[i].len]];
        if (end->tok_n == 0) end->tok_first = (uint32_t)i;
        if (end->tok_n < UINT16_MAX) end->tok_n++;
        t->ids[i] = ps[i].id;
        if ((int)ps[i].len > t->max_depth) t->max_depth = (int)ps[i].len;
    }
    /* subtree sizes: a node's subtree ends at the next node no deeper than it */
    size_t sp = 0;
    for (size_t i = 0; i <= n; i++) {
        const uint16_t d = i < n ? t->nodes[i].depth : 0;
        while (sp > 0 && (i == n || t->nodes[path[sp - 1]].depth >= d)) {
            const uint32_t j = path[--sp];
            t->nodes[j].subtree = (uint32_t)(i - j);
        }
        if (i < n) path[sp++] = (uint32_t)i; /* path reused as the stack (depth-ordered, ≤ max depth + 1) */
    }
    free(path);
    t->n_nodes = n;
    t->n_pieces = np;
    return true;
}

token_trie *token_trie_new(int32_t n_vocab, token_bytes_fn bytes, void *ctx, wick_error *err) {
    token_trie *t = calloc(1, sizeof *t);
    piece *ps = calloc((size_t)(n_vocab > 0 ? n_vocab : 1), sizeof *ps);
    uint8_t *buf = malloc(PIECE_MAX);
    int32_t np = 0;
    size_t total = 1;
    if (!t || !ps || !buf) goto oom;
    t->n_vocab = n_vocab;
    for (int32_t id = 0; id < n_vocab; id++) {
        size_t len = 0;
        if (!bytes(ctx, id, buf, PIECE_MAX, &len) || len == 0 || len > PIECE_MAX || len > UINT16_MAX) continue;
        ps[np] = (piece){.b = malloc(len), .len = (uint32_t)len, .id = id};
        if (!ps[np].b) goto oom;
        memcpy(ps[np].b, buf, len);
        total += len;
        np++;
    }
    qsort(ps, (size_t)np, sizeof *ps, cmp_piece);
    if (!build_nodes(t, ps, np, total)) goto oom;
    /* the bytes by id, for matchers that advance by token */
    t->tok_at = calloc((size_t)n_vocab + 1, sizeof *t->tok_at);
    t->pool = malloc(total);
    if (!t->tok_at || !t->pool) goto oom;
    {
        uint32_t *len_of = calloc((size_t)(n_vocab > 0 ? n_vocab : 1), sizeof *len_of);
        const uint8_t **src = calloc((size_t)(n_vocab > 0 ? n_vocab : 1), sizeof *src);
        if (!len_of || !src) {
            free(len_of), free(src);
            goto oom;
        }
        for (int32_t i = 0; i < np; i++) len_of[ps[i].id] = ps[i].len, src[ps[i].id] = ps[i].b;
        size_t at = 0;
        for (int32_t id = 0; id < n_vocab; id++) {
            t->tok_at[id] = at;
            if (len_of[id]) memcpy(t->pool + at, src[id], len_of[id]);
            at += len_of[id];
        }
        t->tok_at[n_vocab] = at;
        free(len_of), free(src);
    }
    free_pieces(ps, np);
    free(buf);
    return t;
oom:
    free(buf);
    if (ps) free_pieces(ps, np);
    token_trie_free(t);
    wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory building the vocabulary trie");
    return NULL;
}

token_trie *token_trie_of_pieces(int32_t n_vocab, const token_piece *pieces, size_t n) {
    token_trie *t = calloc(1, sizeof *t);
    piece *ps = malloc(sizeof *ps * (n ? n : 1));
    size_t total = 1;
    if (!t || !ps || n > INT32_MAX) goto oom;
    t->n_vocab = n_vocab;
    for (size_t i = 0; i < n; i++) {
        ps[i] = (piece){.b = (uint8_t *)pieces[i].bytes, .len = pieces[i].len, .id = pieces[i].id};
        total += pieces[i].len;
    }
    qsort(ps, n, sizeof *ps, cmp_piece);
    if (!build_nodes(t, ps, (int32_t)n, total)) goto oom;
    free(ps);
    return t;
oom:
    free(ps);
    token_trie_free(t);
    return NULL;
}

void token_trie_free(token_trie *t) {
    if (!t) return;
    free(t->nodes);
    free(t->ids);
    free(t->pool);
    free(t->tok_at);
    free(t);
}

int32_t token_trie_vocab(const token_trie *t) { return t->n_vocab; }

const uint8_t *token_trie_bytes(const token_trie *t, int32_t id, size_t *len) {
    if (!t->tok_at || id < 0 || id >= t->n_vocab || t->tok_at[id + 1] == t->tok_at[id]) return NULL;
    *len = t->tok_at[id + 1] - t->tok_at[id];
    return t->pool + t->tok_at[id];
}
size_t token_trie_nodes(const token_trie *t) { return t->n_nodes; }

/* Sets the bits of the tokens ending at nd. */
static inline void add_tokens(const token_trie *t, const trie_node *nd, uint64_t *mask) {
    for (uint32_t k = 0; k < nd->tok_n; k++) {
        const int32_t id = t->ids[nd->tok_first + k];
        mask[id >> 6] |= 1ull << (id & 63);
    }
}

void token_trie_mask_regex(const token_trie *t, rx_store *s, rx_id r, uint64_t *mask) {
    memset(mask, 0, sizeof *mask * token_mask_words(t->n_vocab));
    token_trie_add_regex(t, s, r, mask);
}

void token_trie_add_regex(const token_trie *t, rx_store *s, rx_id r, uint64_t *mask) {
    rx_id stack[PIECE_MAX + 1];
    stack[0] = r;
    const trie_node *nodes = t->nodes;
    for (size_t p = 1; p < t->n_nodes;) {
        const trie_node *nd = &nodes[p];
        const rx_id ns = rx_next(s, stack[nd->depth - 1], nd->byte);
        if (ns == RX_NOTHING) {
            p += nd->subtree;
            continue;
        }
        stack[nd->depth] = ns;
        add_tokens(t, nd, mask);
        p++;
    }
}

void token_trie_walk(const token_trie *t, bool (*push)(void *ctx, uint8_t c), void (*pop)(void *ctx, size_t n),
                     void *ctx, uint64_t *mask) {
    size_t depth = 0; /* bytes pushed: the path to the node before p */
    for (size_t p = 1; p < t->n_nodes;) {
        const trie_node *nd = &t->nodes[p];
        if (depth >= nd->depth) { /* back up to nd's parent */
            pop(ctx, depth - (nd->depth - 1u));
            depth = nd->depth - 1u;
        }
        if (!push(ctx, nd->byte)) {
            p += nd->subtree;
            continue;
        }
        depth = nd->depth;
        add_tokens(t, nd, mask);
        p++;
    }
    pop(ctx, depth);
}

void token_trie_walk_under(const token_trie *t, size_t node, bool (*step)(void *ctx, size_t depth, uint8_t c),
                           void *ctx, uint64_t *mask) {
    const size_t end = node + t->nodes[node].subtree, d0 = t->nodes[node].depth;
    for (size_t p = node + 1; p < end;) {
        const trie_node *nd = &t->nodes[p];
        if (!step(ctx, nd->depth - d0, nd->byte)) {
            p += nd->subtree;
            continue;
        }
        add_tokens(t, nd, mask);
        p++;
    }
}

void token_trie_walk_nodes(const token_trie *t, int (*step)(void *ctx, size_t node, size_t depth, uint8_t c),
                           void *ctx, uint64_t *mask) {
    for (size_t p = 1; p < t->n_nodes;) {
        const trie_node *nd = &t->nodes[p];
        const int r = step(ctx, p, nd->depth, nd->byte);
        if (r == TRIE_REFUSE) {
            p += nd->subtree;
            continue;
        }
        if (mask) add_tokens(t, nd, mask);
        p += r == TRIE_TAKE_NODE ? nd->subtree : 1;
    }
}

int token_trie_max_depth(const token_trie *t) { return t->max_depth; }

size_t token_trie_pieces_under(const token_trie *t, size_t node, size_t *first) {
    const trie_node *nd = &t->nodes[node];
    const size_t next = node + nd->subtree;
    *first = nd->tok_first;
    return (next < t->n_nodes ? t->nodes[next].tok_first : (size_t)t->n_pieces) - nd->tok_first;
}

int32_t token_trie_piece_id(const token_trie *t, size_t i) { return t->ids[i]; }
size_t token_trie_node_depth(const token_trie *t, size_t node) { return t->nodes[node].depth; }
