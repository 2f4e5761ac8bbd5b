/* earley.h — the Earley parser of a cfg, scannerless: terminals are
 * regular expressions read a byte at a time inside the items (an item
 * sitting at a terminal carries the derivative reached so far), so the
 * language is exactly the grammar's, with no lexer to choose where a
 * lexeme ends. One Earley set per byte, kept as a stack: push a byte (or
 * refuse it, leaving the state as it was), pop bytes back — what a token
 * trie walk and a speculative rollback need. */
#ifndef WICK_GRAMMAR_EARLEY_H
#define WICK_GRAMMAR_EARLEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "grammar/cfg.h"
#include "grammar/token_slices.h"
#include "grammar/token_trie.h"

typedef struct earley earley;

/* A parser at the start of g (finished; g must outlive it) whose terms
 * live in rx: g's own store (NULL), or a copy of it (rx_store_clone) so
 * that parsers of one grammar may run on several threads at once (reading
 * fills the store's DFA rows). rx must outlive the parser. */
earley *earley_new(const cfg *g, rx_store *rx, wick_error *err);
void earley_free(earley *e);

/* Reads byte c: true, or false (c cannot come next; nothing changed). */
bool earley_push(earley *e, uint8_t c);
/* Forgets the last n bytes read (at most those read). */
void earley_pop(earley *e, size_t n);
/* Bytes read. */
size_t earley_depth(const earley *e);
/* Is what was read a whole sentence of the grammar? */
bool earley_accepting(const earley *e);
/* Out of memory at some point (the parser refuses every byte after). */
bool earley_failed(const earley *e);

/* Sets in mask (cleared first) the tokens whose bytes can come next. */
void earley_mask(earley *e, const token_trie *t, uint64_t *mask);

/* The same mask over a sliced vocabulary (terms: the slices' expressions in
 * the grammar's store, token_slices_terms): a slice is taken whole when an
 * item reading a terminal allows every string of the slice to follow; from
 * a plan of the set's terms where one is kept (earley_plan.c). */
void earley_mask_sliced(earley *e, const token_slices *ts, const rx_id *terms, uint64_t *mask);

/* Mask plans (earley_plan.c): what a parser learnt about masks, kept for
 * later parsers of the grammar whose terms live in the same store lineage
 * (a copy of the parser's store, or of a store copied from it). */
typedef struct earley_plans earley_plans;
/* A set of e's plans and those it was given, to be shared (immutable,
 * counted references), or NULL (none, over budget, or out of memory). */
earley_plans *earley_plans_publish(const earley *e);
/* e reads plans p (a reference taken; NULL: none) besides its own. */
void earley_plans_use(earley *e, earley_plans *p);
void earley_plans_release(earley_plans *p);

#endif
