/* earley_internal.h — the Earley parser's state, shared by earley.c (the
 * parser and its trie walks) and earley_plan.c (masks planned per the
 * terms a set is reading). */
#ifndef WICK_GRAMMAR_EARLEY_INTERNAL_H
#define WICK_GRAMMAR_EARLEY_INTERNAL_H

#include "grammar/earley.h"

typedef struct item {
    int32_t rule, dot, origin;
    rx_id term; /* the terminal at dot read so far, or -1 (dot at a nonterminal or the end) */
} item;

struct earley {
    const cfg *g;
    rx_store *rx; /* the store the grammar's terms live in (g's own, or a copy of it) */
    item *items;
    size_t n_items, items_cap;
    size_t *set_start; /* set k: items[set_start[k] .. next set's start or n_items) */
    size_t n_sets, sets_cap;
    rx_byteset *set_next; /* set k: the bytes some item of it can read next */
    size_t set_next_cap;
    /* set k: do its items at terminals differ in (rule, dot, origin)? 1 yes,
     * 2 no, 0 not known (nothing read from it yet), 3 not known (one byte read). When they do, the items a byte reads from it
     * are distinct with no hashing (a trie walk reads many bytes from one set) */
    uint8_t *set_distinct;
    size_t set_distinct_cap;
    /* the set being built: item index by hash, valid while stamp == epoch */
    uint32_t *slot_item, *slot_stamp;
    size_t slots; /* a power of two */
    uint32_t epoch;
    /* set k's items waiting at a nonterminal (filed when closure ends; a
     * completion looks for its lhs among these only): wait[wait_start[k] ..
     * the next set's start or n_wait) */
    uint32_t *wait;
    size_t n_wait, wait_cap;
    size_t *wait_start;
    size_t wait_start_cap;
    rx_id *set_single; /* set k: the term of its only item at a terminal, -1 (none or several), -2 not known */
    size_t set_single_cap;
    struct one_walk *walk; /* the sliced mask's walk state (allocated on first use) */
    earley_plans *plans;  /* its own mask plans by the terms being read (earley_plan.c) */
    earley_plans *shared; /* the plans of earlier parsers of the grammar, or NULL */
    /* while a plan's group is walked: the set masked (SIZE_MAX: none), and
     * whether some completion looked at or below it */
    size_t floor;
    bool below;
    bool failed;
};

/* Pushes the set a byte string would give that takes the current set's
 * items at terminals to the terms terms[0 .. k) (in the order the items lie
 * in the set; RX_NOTHING drops one) where no term is nullable before the
 * last byte: one set where the byte string would give one per byte, the
 * same items but their origins. False (nothing pushed) when no item is left. */
bool earley_push_terms(earley *e, const rx_id *terms);

/* Adds to mask the tokens of t's subtree below node (node 0: all of t)
 * whose bytes the parser reads from its current set, following a lone
 * terminal's DFA where a set has one (earley_mask_sliced's walk); the
 * parser ends where it started. */
void earley_walk_lone_under(earley *e, const token_trie *t, size_t node, uint64_t *mask);

/* Does some item of the current set read a terminal whose continuations
 * include every string of `slice` (so every token of it keeps the parse
 * live, whatever follows)? */
bool earley_set_reads_slice(earley *e, rx_id slice);

/* The sliced mask from a plan of the current set's terms, when one is kept
 * (made the second time the same terms are met): false when there is none
 * yet, and the caller walks. */
bool earley_plan_mask(earley *e, const token_slices *ts, const rx_id *terms, uint64_t *mask);
void earley_plans_free(earley *e);

#endif
