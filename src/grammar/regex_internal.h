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
    bool oom;
};

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

#endif
