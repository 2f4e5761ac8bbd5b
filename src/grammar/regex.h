/* regex.h — regular expressions over bytes as hash-consed terms, matched by
 * derivatives (Brzozowski): the derivative of an expression R by a byte c
 * is the expression of the strings s with c·s in R's language, so the
 * expressions are the states of a DFA built lazily, one transition at a
 * time, with no NFA and no subset construction. Terms are simplified as
 * they are built (alternatives flattened, sorted and deduplicated, byte
 * sets merged, ∅ and ε absorbed), which keeps the DFA small, and ∅ is the
 * only expression with an empty language, so a dead state is known at once.
 *
 * A store holds the terms of any number of expressions (a grammar's lexemes
 * share one); ids are stable for the store's life. Not thread-safe: one
 * store per grammar compile or per matcher. */
#ifndef WICK_GRAMMAR_REGEX_H
#define WICK_GRAMMAR_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wick.h"

typedef int32_t rx_id;

enum {
    RX_NOTHING = 0, /* ∅: matches nothing (the dead state) */
    RX_EPSILON = 1, /* ε: matches the empty string only */
};

#define RX_INF INT32_MAX /* an unbounded repeat's maximum */

/* A set of bytes, one bit each. */
typedef struct rx_byteset {
    uint64_t w[4];
} rx_byteset;

static inline void rx_byteset_add_range(rx_byteset *s, unsigned lo, unsigned hi) {
    for (unsigned c = lo; c <= hi && c < 256; c++) s->w[c >> 6] |= 1ull << (c & 63);
}
static inline bool rx_byteset_has(const rx_byteset *s, unsigned c) { return (s->w[c >> 6] >> (c & 63)) & 1; }

typedef struct rx_store rx_store;

rx_store *rx_store_new(void);
void rx_store_free(rx_store *s);
/* A copy of s (its terms under the same ids, its DFA rows and memos as
 * filled so far), or NULL when out of memory. */
rx_store *rx_store_clone(const rx_store *s);
/* DFA rows filled so far (a row: 256 transitions of 4 bytes). */
size_t rx_store_rows(const rx_store *s);
/* Terms the store holds (a bound callers may check against a budget). */
size_t rx_store_size(const rx_store *s);
/* False once an allocation failed: every constructor then returns RX_NOTHING
 * and the caller must give up on the store. */
bool rx_store_ok(const rx_store *s);

/* Constructors (simplifying). */
rx_id rx_bytes(rx_store *s, const rx_byteset *set);
rx_id rx_byte_range(rx_store *s, unsigned lo, unsigned hi);
rx_id rx_literal(rx_store *s, const void *bytes, size_t n);
rx_id rx_concat(rx_store *s, rx_id a, rx_id b);
rx_id rx_or(rx_store *s, rx_id a, rx_id b);
rx_id rx_repeat(rx_store *s, rx_id a, int32_t min, int32_t max);
/* The alternatives list[0..n) as one term (list is reordered): what n - 1
 * calls of rx_or give, with one sort instead of n. */
rx_id rx_or_list(rx_store *s, rx_id *list, size_t n);
/* Any UTF-8 encoding of a code point in [lo, hi] (surrogates excluded). */
rx_id rx_codepoints(rx_store *s, uint32_t lo, uint32_t hi);

bool rx_nullable(const rx_store *s, rx_id r);
/* The bytes that can start a continuation of r (those with a derivative
 * other than ∅), computed once per term; NULL when out of memory. */
const rx_byteset *rx_first_bytes(rx_store *s, rx_id r);
/* The derivative of r by byte c (memoized). */
rx_id rx_deriv(rx_store *s, rx_id r, uint8_t c);
/* Does r match the whole of bytes[0..n)? (walks derivatives) */
bool rx_matches(rx_store *s, rx_id r, const void *bytes, size_t n);

/* Is every string of small's language in big's? 1 yes; 0 no, or not decided
 * within the budget of state pairs explored (memoized). */
bool rx_contains(rx_store *s, rx_id big, rx_id small);
/* Is every string of small's language a prefix of a string of big's (every
 * one leads big to a live state)? 1 yes; 0 no or not decided (memoized). */
bool rx_contains_prefixes(rx_store *s, rx_id big, rx_id small);

/* Compile pattern (an ECMAScript/PCRE-style regular expression: literals,
 * ., classes with ranges and \d \w \s, escapes \xHH \uHHHH \u{H..}, groups
 * (capturing and (?:), alternation, * + ? {m} {m,} {m,n} and their lazy
 * forms, ^ at the start and $ at the end) into an expression matching the
 * whole string. Backreferences, lookaround and other constructs with no
 * regular meaning are an error naming them (err, with the position): -1. */
rx_id rx_parse(rx_store *s, const char *pattern, size_t len, wick_error *err);

/* rx_parse's strings that hold no quote, backslash or control character
 * (those a JSON string spells unescaped): every character of the pattern
 * (literal, class, .) is taken less those, so the language is exactly the
 * pattern's intersected with such strings. */
rx_id rx_parse_plain_json(rx_store *s, const char *pattern, size_t len, wick_error *err);

#endif
