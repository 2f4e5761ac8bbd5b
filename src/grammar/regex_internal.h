/* regex_internal.h — the term store's layout, shared by the files of the
 * regex engine (regex.c, regex_utf8.c, regex_parse.c). */
#ifndef WICK_GRAMMAR_REGEX_INTERNAL_H
#define WICK_GRAMMAR_REGEX_INTERNAL_H

#include "grammar/regex.h"

enum rx_kind { RXK_NOTHING, RXK_EPSILON, RXK_BYTES, RXK_CONCAT, RXK_OR, RXK_REPEAT };

typedef struct rx_node {
    uint8_t kind;
    bool nullable;
    int32_t a, b;     /* CONCAT: head, tail; REPEAT: body; OR: first alternative in args, count */
    int32_t min, max; /* REPEAT */
    int32_t max_len;  /* the longest string's length (RX_INF: unbounded) */
    rx_byteset set;   /* BYTES */
    uint64_t hash;
} rx_node;

struct rx_store {
    rx_node *nodes;
    size_t n, nodes_cap;
    rx_id *args; /* the alternatives of the OR nodes, each node's sorted */
    size_t n_args, args_cap;
    rx_id *index; /* hash-consing: open addressing over node ids, -1 empty */
    size_t index_cap;
    uint64_t *memo_key; /* derivative memo: (id << 8 | byte) + 1 -> id; 0 empty */
    rx_id *memo_val;
    size_t memo_n, memo_cap;
    int32_t *row_of; /* DFA table: per term, its row in rows, or -1 (row_of_cap entries) */
    size_t row_of_cap;
    rx_id *rows; /* 256 transitions a row, -1 not yet computed */
    size_t n_rows, rows_cap;
    rx_byteset *first; /* per term: the bytes with a live derivative (first_cap entries) */
    bool *first_known;
    size_t first_cap, first_known_cap;
    /* byte classes (regex_class.c): per term its partition's id, or -1
     * (cls_of_cap entries); the partitions, 256 class numbers each, and
     * their hash index (-1 empty) */
    int32_t *cls_of;
    size_t cls_of_cap;
    uint8_t *cls_maps;
    size_t n_cls, cls_maps_cap;
    int32_t *cls_index;
    size_t cls_index_cap;
    bool oom;
};

/* r's byte classes: 256 class numbers, bytes of one class having one
 * derivative (numbered in the order their first bytes come); NULL when out
 * of memory. Valid until the next call. */
const uint8_t *rx_class_map(rx_store *s, rx_id r);
/* The partition meeting p and q: bytes in one class of each (numbered as above). */
void rx_class_refine(uint8_t *out, const uint8_t *p, const uint8_t *q);

/* The slow path of rx_next: the derivative, filed in r's row. */
rx_id rx_next_slow(rx_store *s, rx_id r, uint8_t c);

/* The DFA transition from state r by byte c: a table lookup once computed. */
static inline rx_id rx_next(rx_store *s, rx_id r, uint8_t c) {
    if ((size_t)r < s->row_of_cap && s->row_of[r] >= 0) {
        const rx_id v = s->rows[(size_t)s->row_of[r] * 256 + c];
        if (v >= 0) return v;
    }
    return rx_next_slow(s, r, c);
}

/* rx_nullable and rx_first_bytes, inline where already known. */
static inline bool rx_nullable_fast(const rx_store *s, rx_id r) { return s->nodes[r].nullable; }
static inline const rx_byteset *rx_first_fast(rx_store *s, rx_id r) {
    if ((size_t)r < s->first_known_cap && s->first_known[r]) return &s->first[r];
    return rx_first_bytes(s, r);
}

#endif
