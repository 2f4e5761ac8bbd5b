/* cfg.c — building a grammar and preparing it for the parser (cfg.h). */
#include "grammar/cfg.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"

cfg *cfg_new(void) {
    cfg *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->rx = rx_store_new();
    if (!g->rx) {
        free(g);
        return NULL;
    }
    g->start = -1;
    return g;
}

void cfg_free(cfg *g) {
    if (!g) return;
    rx_store_free(g->rx);
    free(g->rules);
    free(g->syms);
    free(g->first_rule);
    free(g->nullable);
    free(g);
}

int32_t cfg_nonterm(cfg *g) { return g->n_nonterms < INT32_MAX ? g->n_nonterms++ : -1; }

int cfg_add_rule(cfg *g, int32_t lhs, const cfg_sym *rhs, int32_t len) {
    if (!GROW_ARRAY(g->rules, g->n_rules + 1, &g->rules_cap) ||
        !GROW_ARRAY(g->syms, g->n_syms + (size_t)len, &g->syms_cap))
        return -1;
    if (len) memcpy(g->syms + g->n_syms, rhs, sizeof *rhs * (size_t)len);
    g->rules[g->n_rules++] = (cfg_rule){.lhs = lhs, .rhs = (int32_t)g->n_syms, .len = len};
    g->n_syms += (size_t)len;
    g->finished = false;
    return 0;
}

static int cmp_rule(const void *a, const void *b) {
    const cfg_rule *x = a, *y = b;
    if (x->lhs != y->lhs) return (x->lhs > y->lhs) - (x->lhs < y->lhs);
    return (x->rhs > y->rhs) - (x->rhs < y->rhs); /* stable: rules keep their order */
}

int cfg_finish(cfg *g, int32_t start, wick_error *err) {
    if (start < 0 || start >= g->n_nonterms) return wick_fail(err, "grammar: no start symbol");
    qsort(g->rules, g->n_rules, sizeof *g->rules, cmp_rule);
    free(g->first_rule);
    free(g->nullable);
    g->first_rule = calloc((size_t)g->n_nonterms + 1, sizeof *g->first_rule);
    g->nullable = calloc((size_t)g->n_nonterms, sizeof *g->nullable);
    if (!g->first_rule || !g->nullable || !rx_store_ok(g->rx))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "grammar: out of memory");
    size_t r = 0;
    for (int32_t n = 0; n <= g->n_nonterms; n++) {
        while (r < g->n_rules && g->rules[r].lhs < n) r++;
        g->first_rule[n] = (int32_t)r;
    }
    for (int32_t n = 0; n < g->n_nonterms; n++)
        if (g->first_rule[n] == g->first_rule[n + 1])
            return wick_fail(err, "grammar: symbol %d has no rule", (int)n);
    /* nullable nonterminals: a fixed point over the rules */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t i = 0; i < g->n_rules; i++) {
            const cfg_rule *ru = &g->rules[i];
            if (g->nullable[ru->lhs]) continue;
            bool all = true;
            for (int32_t k = 0; k < ru->len && all; k++) {
                const cfg_sym s = g->syms[ru->rhs + k];
                all = cfg_is_terminal(s) ? rx_nullable(g->rx, cfg_term_of(s)) : g->nullable[s];
            }
            if (all) g->nullable[ru->lhs] = changed = true;
        }
    }
    g->start = start;
    g->finished = true;
    return 0;
}
