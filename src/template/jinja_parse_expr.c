/* jinja_parse_expr.c — tokens -> expression nodes.
 *
 * The grammar and precedence are Python Jinja2's (lowest first):
 *   a if c else b  <  or  <  and  <  not  <  comparisons (==, !=, <, <=, >, >=,
 *   in, not in; chained)  <  + -  <  ~  <  * / // %  <  **  <  unary - +  <
 *   postfix (.name, [i], [a:b:c], (args))  and then | filter / is test.
 * Each node records its height (fin); too tall is a syntax error. */
#include <stdlib.h>
#include <string.h>

#include "template/jinja_parser.h"

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
jnode *jparse_tuple(parser *P, bool with_condexpr, const char *const *extra, bool explicit) {
    const jtok *start = cur(P);
    nvec items = {0};
    bool is_tuple = false;
    for (;;) {
        if (items.n) expect(P, JT_COMMA, "','");
        if (is_tuple_end(P, extra)) break;
        nvec_push(P, &items, jparse_expression(P, with_condexpr));
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
            a->star = jparse_expression(P, true);
        } else if (t->k == JT_POW) {
            advance(P);
            a->dstar = jparse_expression(P, true);
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
            nvec_push(P, &kw, jparse_expression(P, true));
        } else {
            if (a->star || a->dstar || kw.n)
                pfail(P, t, "positional argument after keyword or unpacked arguments");
            nvec_push(P, &pos, jparse_expression(P, true));
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
jnode *jparse_filter(parser *P, jnode *node, bool start_inline) {
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
        start = jparse_expression(P, true);
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
    if (cur(P)->k != JT_RBRACKET && cur(P)->k != JT_COLON) stop = jparse_expression(P, true);
    if (cur(P)->k == JT_COLON) {
        advance(P);
        if (cur(P)->k != JT_RBRACKET) step = jparse_expression(P, true);
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
        if (t->k == JT_PIPE) node = jparse_filter(P, node, false);
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
        n = jparse_tuple(P, true, NULL, true);
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
            nvec_push(P, &items, jparse_expression(P, true));
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
            nvec_push(P, &keys, jparse_expression(P, true));
            expect(P, JT_COLON, "':'");
            nvec_push(P, &vals, jparse_expression(P, true));
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

jnode *jparse_expression(parser *P, bool with_condexpr) {
    enter(P);
    jnode *e1 = parse_or(P);
    while (with_condexpr && is_name(cur(P), "if")) {
        const jtok *t = advance(P);
        jnode *n = mk(P, JN_COND, t);
        n->a = e1;
        n->b = parse_or(P);
        if (skip_name(P, "else")) n->c = jparse_expression(P, true);
        e1 = fin(P, n);
    }
    leave(P);
    return e1;
}
