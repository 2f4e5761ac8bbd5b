/* jinja_parser.h — the parser state and token helpers shared by the parser's
 * files (jinja_parse.c: statements and the entry point; jinja_parse_expr.c:
 * expressions), and the expression parsers the statements call. Errors
 * longjmp to P->jb; the arena owns every allocation. Not a public header. */
#ifndef WICK_TEMPLATE_JINJA_PARSER_H
#define WICK_TEMPLATE_JINJA_PARSER_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "template/jinja_internal.h"

typedef struct parser {
    jarena *a;
    const jtok *t;
    size_t n, i;
    wick_error *err;
    int depth, loop_depth;
    jmp_buf jb;
} parser;

static inline _Noreturn void pfail(parser *P, const jtok *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static inline _Noreturn void pfail(parser *P, const jtok *t, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wick_fail(P->err, "line %d, column %d: %s", t->line, t->col, msg);
    longjmp(P->jb, 1);
}

static inline _Noreturn void poom(parser *P) {
    wick_fail(P->err, "out of memory");
    longjmp(P->jb, 1);
}

static inline void *palloc(parser *P, size_t n) {
    void *p = jarena_alloc(P->a, n);
    if (!p) {
        wick_fail(P->err, "out of memory");
        longjmp(P->jb, 1);
    }
    return p;
}

static inline const jtok *cur(parser *P) { return &P->t[P->i]; }
static inline const jtok *peek(parser *P, size_t k) {
    return P->i + k < P->n ? &P->t[P->i + k] : &P->t[P->n - 1];
}
static inline const jtok *advance(parser *P) {
    const jtok *t = &P->t[P->i];
    if (P->i + 1 < P->n) P->i++;
    return t;
}
static inline bool is_name(const jtok *t, const char *name) {
    return t->k == JT_NAME && strcmp(t->s, name) == 0;
}
static inline bool skip_name(parser *P, const char *name) {
    if (!is_name(cur(P), name)) return false;
    advance(P);
    return true;
}

static inline const char *describe(const jtok *t, char *buf, size_t cap) {
    if (t->k == JT_NAME) snprintf(buf, cap, "'%s'", t->s);
    else if (t->k == JT_STRING) snprintf(buf, cap, "string");
    else if (t->k == JT_INT || t->k == JT_FLOAT) snprintf(buf, cap, "number");
    else snprintf(buf, cap, "%s", jinja_tok_name(t->k));
    return buf;
}

static inline const jtok *expect(parser *P, int kind, const char *what) {
    const jtok *t = cur(P);
    if (t->k != kind) {
        char b[64];
        pfail(P, t, "expected %s, got %s", what, describe(t, b, sizeof b));
    }
    return advance(P);
}

static inline const jtok *expect_name(parser *P) { return expect(P, JT_NAME, "a name"); }

static inline void enter(parser *P) {
    if (++P->depth > JINJA_MAX_PARSE_DEPTH)
        pfail(P, cur(P), "template nested too deeply (more than %d levels)", JINJA_MAX_PARSE_DEPTH);
}
static inline void leave(parser *P) { P->depth--; }

static inline jnode *mk(parser *P, int kind, const jtok *at) {
    jnode *n = palloc(P, sizeof *n);
    n->k = (uint8_t)kind;
    n->line = at->line;
    n->col = at->col;
    return n;
}

static inline int depth_of(const jnode *n) { return n ? n->depth : 0; }
static inline int max_depth_of(const jnodes *v, int d) {
    for (int i = 0; i < v->n; i++)
        if (depth_of(v->v[i]) > d) d = depth_of(v->v[i]);
    return d;
}

/* Record the height of an expression node; too tall is a syntax error, which
 * keeps evaluation recursion bounded even for long flat chains (a ~ b ~ c ...). */
static inline jnode *fin(parser *P, jnode *n) {
    int d = depth_of(n->a);
    const jnode *kids[] = {n->b, n->c, n->d};
    for (int i = 0; i < 3; i++)
        if (depth_of(kids[i]) > d) d = depth_of(kids[i]);
    d = max_depth_of(&n->body, d);
    d = max_depth_of(&n->orelse, d);
    if (n->args) {
        d = max_depth_of(&n->args->pos, d);
        d = max_depth_of(&n->args->kw, d);
        if (depth_of(n->args->star) > d) d = depth_of(n->args->star);
        if (depth_of(n->args->dstar) > d) d = depth_of(n->args->dstar);
    }
    if (d + 1 > JINJA_MAX_PARSE_DEPTH) {
        wick_fail(P->err, "line %d, column %d: expression too deeply nested (more than %d levels)",
                  n->line, n->col, JINJA_MAX_PARSE_DEPTH);
        longjmp(P->jb, 1);
    }
    n->depth = (uint16_t)(d + 1);
    return n;
}

typedef struct nvec {
    jnode **v;
    int n, cap;
} nvec;

static inline void nvec_push(parser *P, nvec *v, jnode *x) {
    if (v->n == v->cap) {
        int nc = v->cap ? v->cap * 2 : 4;
        jnode **nv = palloc(P, (size_t)nc * sizeof *nv);
        if (v->n) memcpy(nv, v->v, (size_t)v->n * sizeof *nv);
        v->v = nv;
        v->cap = nc;
    }
    v->v[v->n++] = x;
}
static inline jnodes nvec_done(nvec *v) { return (jnodes){v->v, v->n}; }

/* ---- expressions (jinja_parse_expr.c) */

jnode *jparse_expression(parser *P, bool with_condexpr);
/* a, b, c  (a tuple when there is a comma); explicit: inside parentheses */
jnode *jparse_tuple(parser *P, bool with_condexpr, const char *const *extra, bool explicit);
/* node | name(args) | name ...  (node may be NULL for filter blocks) */
jnode *jparse_filter(parser *P, jnode *node, bool start_inline);

#endif
