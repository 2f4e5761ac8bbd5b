/* cfg.h — a context-free grammar whose terminals are regular expressions
 * over bytes (terms of one rx_store): the form every front end (JSON
 * Schema, GBNF, regex, choices) compiles to and the Earley parser runs.
 * Nonterminals are numbered from 0; a rule's right side is a sequence of
 * symbols, each a nonterminal or a terminal. */
#ifndef WICK_GRAMMAR_CFG_H
#define WICK_GRAMMAR_CFG_H

#include <stdbool.h>
#include <stdint.h>

#include "grammar/regex.h"

/* A symbol: a nonterminal n as n (>= 0), a terminal of term t as -(t + 1). */
typedef int32_t cfg_sym;
static inline cfg_sym cfg_terminal(rx_id t) { return -(t + 1); }
static inline bool cfg_is_terminal(cfg_sym s) { return s < 0; }
static inline rx_id cfg_term_of(cfg_sym s) { return -s - 1; }

typedef struct cfg_rule {
    int32_t lhs;
    int32_t rhs, len; /* the right side: syms[rhs .. rhs + len) */
} cfg_rule;

typedef struct cfg {
    rx_store *rx; /* owned */
    cfg_rule *rules;
    size_t n_rules, rules_cap;
    cfg_sym *syms;
    size_t n_syms, syms_cap;
    int32_t n_nonterms;
    int32_t start;
    /* after cfg_finish: rules sorted by lhs, nonterminal n's rules at
     * first_rule[n] .. first_rule[n + 1]; which nonterminals derive ε */
    int32_t *first_rule;
    bool *nullable;
    bool finished;
} cfg;

/* An empty grammar (its own rx_store); NULL when out of memory. */
cfg *cfg_new(void);
void cfg_free(cfg *g);
/* A new nonterminal's number, or -1 (out of memory). */
int32_t cfg_nonterm(cfg *g);
/* Adds lhs -> rhs[0..len); -1 when out of memory. */
int cfg_add_rule(cfg *g, int32_t lhs, const cfg_sym *rhs, int32_t len);
/* Sorts the rules and computes what the parser needs; -1 (err) when a
 * nonterminal has no rule or memory runs out. */
int cfg_finish(cfg *g, int32_t start, wick_error *err);

#endif
