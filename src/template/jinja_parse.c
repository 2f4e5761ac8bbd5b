/* jinja_parse.c — tokens -> syntax tree: the statements ({% if %}, {% for %},
 * {% set %}, {% macro %}, ...), and jinja_parse/jinja_free. Expressions are
 * parsed in jinja_parse_expr.c.
 *
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
#include <stdlib.h>
#include <string.h>

#include "template/jinja_parser.h"

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
            def = jparse_expression(P, true);
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
    n->a = jparse_tuple(P, true, NULL, false);
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
    n->b = jparse_tuple(P, false, iter_end, false);
    if (skip_name(P, "if")) n->c = jparse_expression(P, true);
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
 * chain jparse_filter builds is outermost-last). */
static jnodes parse_filter_list(parser *P, bool start_inline) {
    nvec fl = {0};
    for (jnode *f = jparse_filter(P, NULL, start_inline); f; f = f->a) nvec_push(P, &fl, f);
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
        n->b = jparse_tuple(P, true, NULL, false);
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
    jnode *call = jparse_expression(P, true);
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
        s->b = jparse_expression(P, true);
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
            n->a = jparse_tuple(P, true, NULL, false);
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
