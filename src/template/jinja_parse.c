/* jinja_parse.c — tokens -> syntax tree, the template arena, and
 * jinja_parse/jinja_free.
 *
 * The grammar and precedence are Python Jinja2's (lowest first):
 *   a if c else b  <  or  <  and  <  not  <  comparisons (==, !=, <, <=, >, >=,
 *   in, not in; chained)  <  + -  <  ~  <  * / // %  <  **  <  unary - +  <
 *   postfix (.name, [i], [a:b:c], (args))  and then | filter / is test.
 * Node fields by kind (struct jnode):
 *   TEXT cval | OUTPUT a | IF a=cond body orelse | FOR a=target b=iter c=filter
 *   body orelse | SET a=target b=value | SETBLOCK a=target filters body |
 *   MACRO name params body flag=varargs flag2=kwargs flag3=caller |
 *   CALLBLOCK a=CALL params body (+flags) | FILTERBLOCK filters body |
 *   WITH body=SET nodes orelse=statements | CONST cval | NAME name |
 *   LIST/TUPLE body | DICT body=keys orelse=values | GETATTR a name |
 *   GETITEM a b | SLICE a b c d (start stop step, NULL = omitted) | CALL a args |
 *   FILTER a name args (a NULL in filter chains of blocks) | TEST a name args flag=not |
 *   NOT/NEG/POS a | BINOP op a b | AND/OR a b | COMPARE a, then ops[i] body.v[i] |
 *   COND a=value-if-true b=cond c=else (NULL = undefined).
 * Nesting deeper than JINJA_MAX_PARSE_DEPTH is a syntax error, so evaluation
 * recursion stays bounded. Errors longjmp out; the arena owns every allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "template/jinja_internal.h"

/* ------------------------------------------------------------------ arena */

struct jarena_chunk {
    jarena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *jarena_alloc(jarena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    jarena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *jarena_strndup(jarena *a, const char *s, size_t n) {
    char *p = jarena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

void jarena_free(jarena *a) {
    while (a->head) {
        jarena_chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
}

jv jinja_static_str(jarena *a, const char *s, size_t n) {
    jstr *o = jarena_alloc(a, sizeof *o);
    if (!o) return jv_none();
    o->h.fixed = 1;
    o->h.rc = 1;
    o->h.type = JO_STR;
    o->s = jarena_strndup(a, s, n);
    if (!o->s) return jv_none();
    o->len = o->cap = n;
    return jv_strobj(o);
}

/* ----------------------------------------------------------------- parser */

typedef struct parser {
    jarena *a;
    const jtok *t;
    size_t n, i;
    wick_error *err;
    int depth, loop_depth;
    jmp_buf jb;
} parser;

static _Noreturn void pfail(parser *P, const jtok *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static _Noreturn void pfail(parser *P, const jtok *t, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wick_fail(P->err, "line %d, column %d: %s", t->line, t->col, msg);
    longjmp(P->jb, 1);
}

static _Noreturn void poom(parser *P) {
    wick_fail_code(P->err, WICK_E_NO_MEMORY, "out of memory");
    longjmp(P->jb, 1);
}

static void *palloc(parser *P, size_t n) {
    void *p = jarena_alloc(P->a, n);
    if (!p) {
        wick_fail_code(P->err, WICK_E_NO_MEMORY, "out of memory");
        longjmp(P->jb, 1);
    }
    return p;
}

static const jtok *cur(parser *P) { return &P->t[P->i]; }
static const jtok *peek(parser *P, size_t k) {
    return P->i + k < P->n ? &P->t[P->i + k] : &P->t[P->n - 1];
}
static const jtok *advance(parser *P) {
    const jtok *t = &P->t[P->i];
    if (P->i + 1 < P->n) P->i++;
    return t;
}
static bool is_name(const jtok *t, const char *name) {
    return t->k == JT_NAME && strcmp(t->s, name) == 0;
}
static bool skip_name(parser *P, const char *name) {
    if (!is_name(cur(P), name)) return false;
    advance(P);
    return true;
}

static const char *describe(const jtok *t, char *buf, size_t cap) {
    if (t->k == JT_NAME) snprintf(buf, cap, "'%s'", t->s);
    else if (t->k == JT_STRING) snprintf(buf, cap, "string");
    else if (t->k == JT_INT || t->k == JT_FLOAT) snprintf(buf, cap, "number");
    else snprintf(buf, cap, "%s", jinja_tok_name(t->k));
    return buf;
}

static const jtok *expect(parser *P, int kind, const char *what) {
    const jtok *t = cur(P);
    if (t->k != kind) {
        char b[64];
        pfail(P, t, "expected %s, got %s", what, describe(t, b, sizeof b));
    }
    return advance(P);
}

static const jtok *expect_name(parser *P) { return expect(P, JT_NAME, "a name"); }

static void enter(parser *P) {
    if (++P->depth > JINJA_MAX_PARSE_DEPTH)
        pfail(P, cur(P), "template nested too deeply (more than %d levels)", JINJA_MAX_PARSE_DEPTH);
}
static void leave(parser *P) { P->depth--; }

static jnode *mk(parser *P, int kind, const jtok *at) {
    jnode *n = palloc(P, sizeof *n);
    n->k = (uint8_t)kind;
    n->line = at->line;
    n->col = at->col;
    return n;
}

static int depth_of(const jnode *n) { return n ? n->depth : 0; }
static int max_depth_of(const jnodes *v, int d) {
    for (int i = 0; i < v->n; i++)
        if (depth_of(v->v[i]) > d) d = depth_of(v->v[i]);
    return d;
}

/* Record the height of an expression node; too tall is a syntax error, which
 * keeps evaluation recursion bounded even for long flat chains (a ~ b ~ c ...). */
static jnode *fin(parser *P, jnode *n) {
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

static void nvec_push(parser *P, nvec *v, jnode *x) {
    if (v->n == v->cap) {
        int nc = v->cap ? v->cap * 2 : 4;
        jnode **nv = palloc(P, (size_t)nc * sizeof *nv);
        if (v->n) memcpy(nv, v->v, (size_t)v->n * sizeof *nv);
        v->v = nv;
        v->cap = nc;
    }
    v->v[v->n++] = x;
}
static jnodes nvec_done(nvec *v) { return (jnodes){v->v, v->n}; }

static jnode *parse_expression(parser *P, bool with_condexpr);
static jnode *parse_or(parser *P);
static jnode *parse_unary(parser *P, bool with_filter);
static jnode *parse_primary(parser *P);
static jnode *parse_postfix(parser *P, jnode *node);

/* ---- expressions ---- */

static bool is_tuple_end(parser *P, const char *const *extra) {
    const jtok *t = cur(P);
    if (t->k == JT_VAR_END || t->k == JT_BLOCK_END || t->k == JT_RPAREN || t->k == JT_EOF)
        return true;
    for (; extra && *extra; extra++)
        if (is_name(t, *extra)) return true;
    return false;
}

/* a, b, c  (a tuple when there is a comma); explicit: inside parentheses */
static jnode *parse_tuple(parser *P, bool with_condexpr, const char *const *extra, bool explicit) {
    const jtok *start = cur(P);
    nvec items = {0};
    bool is_tuple = false;
    for (;;) {
        if (items.n) expect(P, JT_COMMA, "','");
        if (is_tuple_end(P, extra)) break;
        nvec_push(P, &items, parse_expression(P, with_condexpr));
        if (cur(P)->k == JT_COMMA) is_tuple = true;
        else break;
    }
    if (!is_tuple) {
        if (items.n) return items.v[0];
        if (!explicit) {
            char b[64];
            pfail(P, cur(P), "expected an expression, got %s", describe(cur(P), b, sizeof b));
        }
    }
    jnode *n = mk(P, JN_TUPLE, start);
    n->body = nvec_done(&items);
    return fin(P, n);
}

static jargs *parse_call_args(parser *P) {
    expect(P, JT_LPAREN, "'('");
    jargs *a = palloc(P, sizeof *a);
    nvec pos = {0}, kw = {0};
    const char **names = NULL;
    int ncap = 0;
    bool first = true;
    while (cur(P)->k != JT_RPAREN) {
        if (!first) {
            expect(P, JT_COMMA, "','");
            if (cur(P)->k == JT_RPAREN) break;
        }
        first = false;
        const jtok *t = cur(P);
        if (t->k == JT_MUL) {
            advance(P);
            a->star = parse_expression(P, true);
        } else if (t->k == JT_POW) {
            advance(P);
            a->dstar = parse_expression(P, true);
        } else if (t->k == JT_NAME && peek(P, 1)->k == JT_ASSIGN) {
            advance(P);
            advance(P);
            if (kw.n == ncap) {
                int nc = ncap ? ncap * 2 : 4;
                const char **nn = palloc(P, (size_t)nc * sizeof *nn);
                if (kw.n) memcpy(nn, names, (size_t)kw.n * sizeof *nn);
                names = nn;
                ncap = nc;
            }
            names[kw.n] = t->s;
            nvec_push(P, &kw, parse_expression(P, true));
        } else {
            if (a->star || a->dstar || kw.n)
                pfail(P, t, "positional argument after keyword or unpacked arguments");
            nvec_push(P, &pos, parse_expression(P, true));
        }
    }
    expect(P, JT_RPAREN, "')'");
    a->pos = nvec_done(&pos);
    a->kw = nvec_done(&kw);
    a->kwnames = names;
    return a;
}

static const char *parse_dotted_name(parser *P) {
    const jtok *t = expect_name(P);
    const char *name = t->s;
    while (cur(P)->k == JT_DOT && peek(P, 1)->k == JT_NAME) {
        advance(P);
        const jtok *u = advance(P);
        size_t l1 = strlen(name), l2 = strlen(u->s);
        char *s = palloc(P, l1 + l2 + 2);
        memcpy(s, name, l1);
        s[l1] = '.';
        memcpy(s + l1 + 1, u->s, l2 + 1);
        name = s;
    }
    return name;
}

/* node | name(args) | name ...  (node may be NULL for filter blocks) */
static jnode *parse_filter(parser *P, jnode *node, bool start_inline) {
    while (cur(P)->k == JT_PIPE || start_inline) {
        if (!start_inline) advance(P);
        start_inline = false;
        const jtok *t = cur(P);
        jnode *f = mk(P, JN_FILTER, t);
        f->name = parse_dotted_name(P);
        if (cur(P)->k == JT_LPAREN) {
            f->args = parse_call_args(P);
            f->flag2 = true;
        }
        f->a = node;
        node = fin(P, f);
    }
    return node;
}

static jnode *parse_test(parser *P, jnode *node) {
    const jtok *is = advance(P); /* 'is' */
    bool negated = skip_name(P, "not");
    jnode *t = mk(P, JN_TEST, is);
    t->name = parse_dotted_name(P);
    t->flag = negated;
    t->a = node;
    const jtok *c = cur(P);
    if (c->k == JT_LPAREN) {
        t->args = parse_call_args(P);
        t->flag2 = true;
    } else if ((c->k == JT_NAME || c->k == JT_STRING || c->k == JT_INT || c->k == JT_FLOAT ||
                c->k == JT_LPAREN || c->k == JT_LBRACKET || c->k == JT_LBRACE) &&
               !is_name(c, "else") && !is_name(c, "or") && !is_name(c, "and")) {
        if (is_name(c, "is")) pfail(P, c, "you cannot chain multiple tests with 'is'");
        jnode *arg = parse_postfix(P, parse_primary(P));
        jargs *a = palloc(P, sizeof *a);
        jnode **v = palloc(P, sizeof *v);
        v[0] = arg;
        a->pos = (jnodes){v, 1};
        t->args = a;
        t->flag2 = true;
    }
    return fin(P, t);
}

static jnode *parse_subscript(parser *P, jnode *node) {
    const jtok *t = advance(P);
    if (t->k == JT_DOT) {
        const jtok *u = cur(P);
        if (u->k == JT_NAME) {
            advance(P);
            jnode *g = mk(P, JN_GETATTR, t);
            g->a = node;
            g->name = u->s;
            return fin(P, g);
        }
        if (u->k == JT_INT) {
            advance(P);
            jnode *k = mk(P, JN_CONST, u);
            k->cval = jv_int(u->i);
            jnode *g = mk(P, JN_GETITEM, t);
            g->a = node;
            g->b = fin(P, k);
            return fin(P, g);
        }
        char b[64];
        pfail(P, u, "expected a name or number after '.', got %s", describe(u, b, sizeof b));
    }
    /* '[' */
    jnode *start = NULL, *stop = NULL, *step = NULL;
    if (cur(P)->k != JT_COLON) {
        start = parse_expression(P, true);
        if (cur(P)->k != JT_COLON) {
            if (cur(P)->k == JT_COMMA) pfail(P, cur(P), "tuple subscripts are not supported");
            expect(P, JT_RBRACKET, "']'");
            jnode *g = mk(P, JN_GETITEM, t);
            g->a = node;
            g->b = start;
            return fin(P, g);
        }
    }
    advance(P); /* ':' */
    if (cur(P)->k != JT_RBRACKET && cur(P)->k != JT_COLON) stop = parse_expression(P, true);
    if (cur(P)->k == JT_COLON) {
        advance(P);
        if (cur(P)->k != JT_RBRACKET) step = parse_expression(P, true);
    }
    expect(P, JT_RBRACKET, "']'");
    jnode *s = mk(P, JN_SLICE, t);
    s->a = node;
    s->b = start;
    s->c = stop;
    s->d = step;
    return fin(P, s);
}

static jnode *parse_call(parser *P, jnode *node) {
    jnode *c = mk(P, JN_CALL, cur(P));
    c->line = node->line; /* errors of a call point at its callee */
    c->col = node->col;
    c->a = node;
    c->args = parse_call_args(P);
    return fin(P, c);
}

static jnode *parse_postfix(parser *P, jnode *node) {
    for (;;) {
        int k = cur(P)->k;
        if (k == JT_DOT || k == JT_LBRACKET) node = parse_subscript(P, node);
        else if (k == JT_LPAREN) node = parse_call(P, node);
        else return node;
    }
}

static jnode *parse_filter_expr(parser *P, jnode *node) {
    for (;;) {
        const jtok *t = cur(P);
        if (t->k == JT_PIPE) node = parse_filter(P, node, false);
        else if (is_name(t, "is")) node = parse_test(P, node);
        else if (t->k == JT_LPAREN) node = parse_call(P, node);
        else return node;
    }
}

static jnode *parse_primary(parser *P) {
    const jtok *t = cur(P);
    jnode *n;
    switch (t->k) {
    case JT_NAME:
        advance(P);
        n = mk(P, JN_CONST, t);
        if (!strcmp(t->s, "true") || !strcmp(t->s, "True")) n->cval = jv_bool(true);
        else if (!strcmp(t->s, "false") || !strcmp(t->s, "False")) n->cval = jv_bool(false);
        else if (!strcmp(t->s, "none") || !strcmp(t->s, "None")) n->cval = jv_none();
        else {
            n->k = JN_NAME;
            n->name = t->s;
        }
        return fin(P, n);
    case JT_STRING: {
        advance(P);
        size_t len = t->n;
        const jtok *u = cur(P);
        size_t k = 0;
        while (peek(P, k)->k == JT_STRING) len += peek(P, k++)->n;
        char *buf = palloc(P, len + 1);
        memcpy(buf, t->s, t->n);
        size_t o = t->n;
        for (; k > 0; k--) {
            u = advance(P);
            memcpy(buf + o, u->s, u->n);
            o += u->n;
        }
        n = mk(P, JN_CONST, t);
        n->cval = jinja_static_str(P->a, buf, len);
        if (n->cval.k != JV_STR) poom(P);
        return fin(P, n);
    }
    case JT_INT:
        advance(P);
        n = mk(P, JN_CONST, t);
        n->cval = jv_int(t->i);
        return fin(P, n);
    case JT_FLOAT:
        advance(P);
        n = mk(P, JN_CONST, t);
        n->cval = jv_float(t->f);
        return fin(P, n);
    case JT_LPAREN:
        advance(P);
        enter(P);
        n = parse_tuple(P, true, NULL, true);
        leave(P);
        expect(P, JT_RPAREN, "')'");
        return n;
    case JT_LBRACKET: {
        advance(P);
        enter(P);
        nvec items = {0};
        while (cur(P)->k != JT_RBRACKET) {
            if (items.n) expect(P, JT_COMMA, "','");
            if (cur(P)->k == JT_RBRACKET) break;
            nvec_push(P, &items, parse_expression(P, true));
        }
        leave(P);
        expect(P, JT_RBRACKET, "']'");
        n = mk(P, JN_LIST, t);
        n->body = nvec_done(&items);
        return fin(P, n);
    }
    case JT_LBRACE: {
        advance(P);
        enter(P);
        nvec keys = {0}, vals = {0};
        while (cur(P)->k != JT_RBRACE) {
            if (keys.n) expect(P, JT_COMMA, "','");
            if (cur(P)->k == JT_RBRACE) break;
            nvec_push(P, &keys, parse_expression(P, true));
            expect(P, JT_COLON, "':'");
            nvec_push(P, &vals, parse_expression(P, true));
        }
        leave(P);
        expect(P, JT_RBRACE, "'}'");
        n = mk(P, JN_DICT, t);
        n->body = nvec_done(&keys);
        n->orelse = nvec_done(&vals);
        return fin(P, n);
    }
    default: {
        char b[64];
        pfail(P, t, "unexpected %s", describe(t, b, sizeof b));
    }
    }
}

static jnode *parse_unary(parser *P, bool with_filter) {
    const jtok *t = cur(P);
    jnode *node;
    enter(P);
    if (t->k == JT_SUB || t->k == JT_ADD) {
        advance(P);
        node = mk(P, t->k == JT_SUB ? JN_NEG : JN_POS, t);
        node->a = parse_unary(P, false);
        fin(P, node);
    } else {
        node = parse_primary(P);
    }
    node = parse_postfix(P, node);
    if (with_filter) node = parse_filter_expr(P, node);
    leave(P);
    return node;
}

static jnode *binop(parser *P, int op, const jtok *at, jnode *a, jnode *b) {
    jnode *n = mk(P, JN_BINOP, at);
    n->op = (uint8_t)op;
    n->a = a;
    n->b = b;
    return fin(P, n);
}

static jnode *parse_pow(parser *P) {
    jnode *left = parse_unary(P, true);
    while (cur(P)->k == JT_POW) {
        const jtok *t = advance(P);
        left = binop(P, JOP_POW, t, left, parse_unary(P, true));
    }
    return left;
}

static jnode *parse_math2(parser *P) {
    jnode *left = parse_pow(P);
    for (;;) {
        int k = cur(P)->k, op;
        if (k == JT_MUL) op = JOP_MUL;
        else if (k == JT_DIV) op = JOP_DIV;
        else if (k == JT_FLOORDIV) op = JOP_FLOORDIV;
        else if (k == JT_MOD) op = JOP_MOD;
        else return left;
        const jtok *t = advance(P);
        left = binop(P, op, t, left, parse_pow(P));
    }
}

static jnode *parse_concat(parser *P) {
    jnode *left = parse_math2(P);
    while (cur(P)->k == JT_TILDE) {
        const jtok *t = advance(P);
        left = binop(P, JOP_CONCAT, t, left, parse_math2(P));
    }
    return left;
}

static jnode *parse_math1(parser *P) {
    jnode *left = parse_concat(P);
    for (;;) {
        int k = cur(P)->k;
        if (k != JT_ADD && k != JT_SUB) return left;
        const jtok *t = advance(P);
        left = binop(P, k == JT_ADD ? JOP_ADD : JOP_SUB, t, left, parse_concat(P));
    }
}

static jnode *parse_compare(parser *P) {
    const jtok *start = cur(P);
    jnode *expr = parse_math1(P);
    nvec rest = {0};
    uint8_t ops[64];
    for (;;) {
        const jtok *t = cur(P);
        int op;
        switch (t->k) {
        case JT_EQ: op = JOP_EQ; break;
        case JT_NE: op = JOP_NE; break;
        case JT_LT: op = JOP_LT; break;
        case JT_LE: op = JOP_LE; break;
        case JT_GT: op = JOP_GT; break;
        case JT_GE: op = JOP_GE; break;
        default:
            if (is_name(t, "in")) op = JOP_IN;
            else if (is_name(t, "not") && is_name(peek(P, 1), "in")) op = JOP_NOTIN;
            else goto done;
        }
        advance(P);
        if (op == JOP_NOTIN) advance(P);
        if (rest.n >= (int)sizeof ops) pfail(P, t, "too many chained comparisons");
        ops[rest.n] = (uint8_t)op;
        nvec_push(P, &rest, parse_math1(P));
    }
done:
    if (!rest.n) return expr;
    jnode *n = mk(P, JN_COMPARE, start);
    n->a = expr;
    n->body = nvec_done(&rest);
    n->ops = palloc(P, (size_t)rest.n);
    memcpy(n->ops, ops, (size_t)rest.n);
    return fin(P, n);
}

static jnode *parse_not(parser *P) {
    if (is_name(cur(P), "not")) {
        const jtok *t = advance(P);
        enter(P);
        jnode *n = mk(P, JN_NOT, t);
        n->a = parse_not(P);
        leave(P);
        return fin(P, n);
    }
    return parse_compare(P);
}

static jnode *parse_and(parser *P) {
    jnode *left = parse_not(P);
    while (is_name(cur(P), "and")) {
        const jtok *t = advance(P);
        jnode *n = mk(P, JN_AND, t);
        n->a = left;
        n->b = parse_not(P);
        left = fin(P, n);
    }
    return left;
}

static jnode *parse_or(parser *P) {
    jnode *left = parse_and(P);
    while (is_name(cur(P), "or")) {
        const jtok *t = advance(P);
        jnode *n = mk(P, JN_OR, t);
        n->a = left;
        n->b = parse_and(P);
        left = fin(P, n);
    }
    return left;
}

static jnode *parse_expression(parser *P, bool with_condexpr) {
    enter(P);
    jnode *e1 = parse_or(P);
    while (with_condexpr && is_name(cur(P), "if")) {
        const jtok *t = advance(P);
        jnode *n = mk(P, JN_COND, t);
        n->a = e1;
        n->b = parse_or(P);
        if (skip_name(P, "else")) n->c = parse_expression(P, true);
        e1 = fin(P, n);
    }
    leave(P);
    return e1;
}

/* ---- statements ---- */

static jnodes parse_body(parser *P, const char *const *ends, const jtok *opener,
                         const char *opener_name);

static void end_of_statement(parser *P) { expect(P, JT_BLOCK_END, "'%}'"); }

/* name | (targets) */
static jnode *parse_target_list(parser *P, bool paren);
static jnode *parse_target_item(parser *P) {
    if (cur(P)->k == JT_LPAREN) {
        advance(P);
        enter(P);
        jnode *t = parse_target_list(P, true);
        leave(P);
        expect(P, JT_RPAREN, "')'");
        return t;
    }
    const jtok *u = expect_name(P);
    jnode *n = mk(P, JN_NAME, u);
    n->name = u->s;
    return n;
}

/* a | a, b, ... (a tuple when there is a comma) */
static jnode *parse_target_list(parser *P, bool paren) {
    const jtok *start = cur(P);
    nvec items = {0};
    nvec_push(P, &items, parse_target_item(P));
    bool is_tuple = false;
    while (cur(P)->k == JT_COMMA) {
        advance(P);
        is_tuple = true;
        const jtok *t = cur(P);
        if (t->k == JT_BLOCK_END || t->k == JT_ASSIGN || t->k == JT_RPAREN || is_name(t, "in"))
            break;
        nvec_push(P, &items, parse_target_item(P));
    }
    (void)paren;
    if (!is_tuple) return items.v[0];
    for (int i = 0; i < items.n; i++)
        if (items.v[i]->k != JN_NAME) pfail(P, start, "nested tuple targets are not supported");
    jnode *n = mk(P, JN_TUPLE, start);
    n->body = nvec_done(&items);
    return n;
}

/* name | name.attr (with_ns) | a, b | (a, b) */
static jnode *parse_assign_target(parser *P, bool with_ns, bool with_tuple) {
    const jtok *t = cur(P);
    if (with_ns && t->k == JT_NAME && peek(P, 1)->k == JT_DOT && peek(P, 2)->k == JT_NAME) {
        advance(P);
        advance(P);
        const jtok *attr = advance(P);
        jnode *obj = mk(P, JN_NAME, t);
        obj->name = t->s;
        jnode *g = mk(P, JN_GETATTR, attr);
        g->a = obj;
        g->name = attr->s;
        return g;
    }
    if (with_tuple) return parse_target_list(P, false);
    const jtok *u = expect_name(P);
    jnode *n = mk(P, JN_NAME, u);
    n->name = u->s;
    return n;
}

static void scan_special_names(jnode *n, jnode *macro, int depth) {
    if (!n || depth > 4 * JINJA_MAX_PARSE_DEPTH) return;
    if (n->k == JN_NAME) {
        if (!strcmp(n->name, "varargs")) macro->flag = true;
        else if (!strcmp(n->name, "kwargs")) macro->flag2 = true;
        else if (!strcmp(n->name, "caller")) macro->flag3 = true;
    }
    jnode *kids[] = {n->a, n->b, n->c, n->d};
    for (int i = 0; i < 4; i++) scan_special_names(kids[i], macro, depth + 1);
    for (int i = 0; i < n->body.n; i++) scan_special_names(n->body.v[i], macro, depth + 1);
    for (int i = 0; i < n->orelse.n; i++) scan_special_names(n->orelse.v[i], macro, depth + 1);
    for (int i = 0; i < n->filters.n; i++) scan_special_names(n->filters.v[i], macro, depth + 1);
    if (n->args) {
        for (int i = 0; i < n->args->pos.n; i++) scan_special_names(n->args->pos.v[i], macro, depth + 1);
        for (int i = 0; i < n->args->kw.n; i++) scan_special_names(n->args->kw.v[i], macro, depth + 1);
        scan_special_names(n->args->star, macro, depth + 1);
        scan_special_names(n->args->dstar, macro, depth + 1);
    }
    for (int i = 0; i < n->n_params; i++) scan_special_names(n->params[i].def, macro, depth + 1);
}

static void parse_params(parser *P, jnode *m) {
    expect(P, JT_LPAREN, "'('");
    int cap = 0;
    while (cur(P)->k != JT_RPAREN) {
        if (m->n_params) expect(P, JT_COMMA, "','");
        if (cur(P)->k == JT_RPAREN) break;
        const jtok *t = expect_name(P);
        for (int i = 0; i < m->n_params; i++)
            if (!strcmp(m->params[i].name, t->s)) pfail(P, t, "duplicate parameter '%s'", t->s);
        jnode *def = NULL;
        if (cur(P)->k == JT_ASSIGN) {
            advance(P);
            def = parse_expression(P, true);
        } else if (m->n_params && m->params[m->n_params - 1].def) {
            pfail(P, t, "parameter without a default follows a parameter with a default");
        }
        if (m->n_params == cap) {
            int nc = cap ? cap * 2 : 4;
            jparam *np = palloc(P, (size_t)nc * sizeof *np);
            if (m->n_params) memcpy(np, m->params, (size_t)m->n_params * sizeof *np);
            m->params = np;
            cap = nc;
        }
        m->params[m->n_params++] = (jparam){t->s, def};
    }
    expect(P, JT_RPAREN, "')'");
}

static jnode *parse_statement(parser *P);

static jnode *parse_if(parser *P, const jtok *at) {
    jnode *n = mk(P, JN_IF, at);
    n->a = parse_tuple(P, true, NULL, false);
    end_of_statement(P);
    static const char *const ends[] = {"elif", "else", "endif", NULL};
    n->body = parse_body(P, ends, at, "if");
    const jtok *t = advance(P); /* the end name */
    if (!strcmp(t->s, "elif")) {
        jnode *e = parse_if(P, t);
        jnode **v = palloc(P, sizeof *v);
        v[0] = e;
        n->orelse = (jnodes){v, 1};
        return n; /* the nested if consumed endif */
    }
    if (!strcmp(t->s, "else")) {
        end_of_statement(P);
        static const char *const ends2[] = {"endif", NULL};
        n->orelse = parse_body(P, ends2, at, "if");
        advance(P);
    }
    end_of_statement(P);
    return n;
}

static jnode *parse_for(parser *P, const jtok *at) {
    jnode *n = mk(P, JN_FOR, at);
    n->a = parse_assign_target(P, false, true);
    if (!skip_name(P, "in")) {
        char b[64];
        pfail(P, cur(P), "expected 'in', got %s", describe(cur(P), b, sizeof b));
    }
    static const char *const iter_end[] = {"recursive", NULL};
    n->b = parse_tuple(P, false, iter_end, false);
    if (skip_name(P, "if")) n->c = parse_expression(P, true);
    if (is_name(cur(P), "recursive")) pfail(P, cur(P), "recursive loops are not supported");
    end_of_statement(P);
    static const char *const ends[] = {"endfor", "else", NULL};
    P->loop_depth++;
    n->body = parse_body(P, ends, at, "for");
    P->loop_depth--;
    const jtok *t = advance(P);
    if (!strcmp(t->s, "else")) {
        end_of_statement(P);
        static const char *const ends2[] = {"endfor", NULL};
        n->orelse = parse_body(P, ends2, at, "for");
        advance(P);
    }
    end_of_statement(P);
    return n;
}

/* The filters of a {% set %} or {% filter %} block, innermost first (the
 * chain parse_filter builds is outermost-last). */
static jnodes parse_filter_list(parser *P, bool start_inline) {
    nvec fl = {0};
    for (jnode *f = parse_filter(P, NULL, start_inline); f; f = f->a) nvec_push(P, &fl, f);
    for (int i = 0; i < fl.n / 2; i++) {
        jnode *x = fl.v[i];
        fl.v[i] = fl.v[fl.n - 1 - i];
        fl.v[fl.n - 1 - i] = x;
    }
    return nvec_done(&fl);
}

/* The body of a macro or call block (what = "macro" | "call", ended by
 * "end" + what): outside any loop of the caller, with the special names
 * (varargs, kwargs, caller) it uses noted on n. */
static void parse_callable_body(parser *P, jnode *n, const jtok *at, const char *what) {
    end_of_statement(P);
    const char *const ends[] = {strcmp(what, "macro") == 0 ? "endmacro" : "endcall", NULL};
    int saved = P->loop_depth;
    P->loop_depth = 0;
    n->body = parse_body(P, ends, at, what);
    P->loop_depth = saved;
    advance(P);
    end_of_statement(P);
    for (int i = 0; i < n->body.n; i++) scan_special_names(n->body.v[i], n, 0);
}

static jnode *parse_set(parser *P, const jtok *at) {
    jnode *target = parse_assign_target(P, true, true);
    if (cur(P)->k == JT_ASSIGN) {
        advance(P);
        jnode *n = mk(P, JN_SET, at);
        n->a = target;
        n->b = parse_tuple(P, true, NULL, false);
        end_of_statement(P);
        return n;
    }
    jnode *n = mk(P, JN_SETBLOCK, at);
    n->a = target;
    if (target->k != JN_NAME && target->k != JN_GETATTR)
        pfail(P, at, "a block set assigns to one name");
    n->filters = parse_filter_list(P, false);
    end_of_statement(P);
    static const char *const ends[] = {"endset", NULL};
    n->body = parse_body(P, ends, at, "set");
    advance(P);
    end_of_statement(P);
    return n;
}

static jnode *parse_macro(parser *P, const jtok *at) {
    jnode *n = mk(P, JN_MACRO, at);
    n->name = expect_name(P)->s;
    parse_params(P, n);
    parse_callable_body(P, n, at, "macro");
    return n;
}

static jnode *parse_call_block(parser *P, const jtok *at) {
    jnode *n = mk(P, JN_CALLBLOCK, at);
    if (cur(P)->k == JT_LPAREN) parse_params(P, n);
    jnode *call = parse_expression(P, true);
    if (call->k != JN_CALL) pfail(P, at, "expected a call after 'call'");
    n->a = call;
    parse_callable_body(P, n, at, "call");
    return n;
}

static jnode *parse_filter_block(parser *P, const jtok *at) {
    jnode *n = mk(P, JN_FILTERBLOCK, at);
    n->filters = parse_filter_list(P, true);
    end_of_statement(P);
    static const char *const ends[] = {"endfilter", NULL};
    n->body = parse_body(P, ends, at, "filter");
    advance(P);
    end_of_statement(P);
    return n;
}

static jnode *parse_with(parser *P, const jtok *at) {
    jnode *n = mk(P, JN_WITH, at);
    nvec sets = {0};
    while (cur(P)->k != JT_BLOCK_END) {
        if (sets.n) expect(P, JT_COMMA, "','");
        const jtok *t = cur(P);
        jnode *s = mk(P, JN_SET, t);
        s->a = parse_assign_target(P, false, false);
        expect(P, JT_ASSIGN, "'='");
        s->b = parse_expression(P, true);
        nvec_push(P, &sets, s);
    }
    end_of_statement(P);
    n->body = nvec_done(&sets);
    static const char *const ends[] = {"endwith", NULL};
    n->orelse = parse_body(P, ends, at, "with");
    advance(P);
    end_of_statement(P);
    return n;
}

/* At a name after '{%'. */
static jnode *parse_statement(parser *P) {
    const jtok *t = cur(P);
    if (t->k != JT_NAME) {
        char b[64];
        pfail(P, t, "expected a tag name after '{%%', got %s", describe(t, b, sizeof b));
    }
    advance(P);
    const char *s = t->s;
    jnode *n;
    enter(P);
    if (!strcmp(s, "if")) n = parse_if(P, t);
    else if (!strcmp(s, "for")) n = parse_for(P, t);
    else if (!strcmp(s, "set")) n = parse_set(P, t);
    else if (!strcmp(s, "macro")) n = parse_macro(P, t);
    else if (!strcmp(s, "call")) n = parse_call_block(P, t);
    else if (!strcmp(s, "filter")) n = parse_filter_block(P, t);
    else if (!strcmp(s, "with")) n = parse_with(P, t);
    else if (!strcmp(s, "break") || !strcmp(s, "continue")) {
        if (P->loop_depth == 0) pfail(P, t, "'%s' outside of a loop", s);
        n = mk(P, s[0] == 'b' ? JN_BREAK : JN_CONTINUE, t);
        end_of_statement(P);
    } else if (!strcmp(s, "generation") || !strcmp(s, "endgeneration")) {
        n = mk(P, JN_NOOP, t);
        end_of_statement(P);
    } else {
        pfail(P, t, "unknown or unexpected tag '%s'", s);
    }
    leave(P);
    return n;
}

/* Statements until '{% <one of ends> ...'; leaves the parser at that name.
 * ends NULL = until the end of the template. */
static jnodes parse_body(parser *P, const char *const *ends, const jtok *opener,
                         const char *opener_name) {
    nvec body = {0};
    for (;;) {
        const jtok *t = cur(P);
        if (t->k == JT_EOF) {
            if (!ends) break;
            char want[128] = "";
            for (const char *const *e = ends; *e; e++) {
                size_t l = strlen(want);
                snprintf(want + l, sizeof want - l, "%s'%s'", l ? " or " : "", *e);
            }
            pfail(P, opener, "unexpected end of template: '{%% %s %%}' is not closed (expected %s)",
                  opener_name, want);
        }
        if (t->k == JT_TEXT) {
            advance(P);
            jnode *n = mk(P, JN_TEXT, t);
            n->cval = jinja_static_str(P->a, t->s, t->n);
            if (n->cval.k != JV_STR) poom(P);
            nvec_push(P, &body, n);
        } else if (t->k == JT_VAR_BEGIN) {
            advance(P);
            jnode *n = mk(P, JN_OUTPUT, t);
            n->a = parse_tuple(P, true, NULL, false);
            expect(P, JT_VAR_END, "'}}'");
            nvec_push(P, &body, n);
        } else if (t->k == JT_BLOCK_BEGIN) {
            const jtok *name = peek(P, 1);
            if (ends && name->k == JT_NAME)
                for (const char *const *e = ends; *e; e++)
                    if (!strcmp(name->s, *e)) {
                        advance(P);
                        return nvec_done(&body);
                    }
            advance(P);
            nvec_push(P, &body, parse_statement(P));
        } else {
            char b[64];
            pfail(P, t, "unexpected %s", describe(t, b, sizeof b));
        }
    }
    return nvec_done(&body);
}

static int parse_all(parser *P, jnodes *body) {
    if (setjmp(P->jb)) return -1;
    *body = parse_body(P, NULL, NULL, NULL);
    return 0;
}

jinja_template *jinja_parse(const char *src, size_t len, wick_error *err) {
    jinja_template *t = calloc(1, sizeof *t);
    if (!t) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    jtok *toks = NULL;
    size_t n = 0;
    if (jinja_lex(&t->arena, src ? src : "", src ? len : 0, &toks, &n, err)) {
        jinja_free(t);
        return NULL;
    }
    parser P = {.a = &t->arena, .t = toks, .n = n, .err = err};
    int rc = parse_all(&P, &t->body);
    free(toks);
    if (rc) {
        jinja_free(t);
        return NULL;
    }
    return t;
}

void jinja_free(jinja_template *t) {
    if (!t) return;
    jarena_free(&t->arena);
    free(t);
}
