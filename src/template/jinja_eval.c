/* jinja_eval.c — the Jinja interpreter: statements, expressions, scopes,
 * calls and macros, and jinja_render.
 *
 * Scoping is Python Jinja2's: the context variables live in the root frame
 * (whose parent holds the globals: range, namespace, ...); a top-level {% set %}
 * writes the root frame; every loop iteration, macro call and {% with %} gets
 * a new frame, so assignments inside them do not leak out (namespace() objects
 * are how templates carry state out of a loop). A macro closes over the frame it
 * was defined in. {% for %}'s else block runs when no iteration reached the end
 * of the body (as Jinja2 compiles it: break/continue skip the mark).
 *
 * Limits (jinja_limits): every statement and expression evaluation is a step;
 * expression nesting plus macro calls is the depth; strings and live memory are
 * capped in jinja_value.c. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "template/jinja_internal.h"

jinja_limits jinja_default_limits(void) {
    return (jinja_limits){
        .max_string = (size_t)64 << 20,
        .max_memory = (size_t)512 << 20,
        .max_steps = 10000000,
        .max_depth = 500,
    };
}

_Noreturn void jfail(jctx *I, const char *fmt, ...) {
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    wick_fail(I->err, "line %d, column %d: %s", I->line, I->col, msg);
    longjmp(I->jb, 1);
}

static inline void step(jctx *I) {
    if (++I->steps > I->lim.max_steps)
        jfail(I, "template takes too many steps (limit %llu)", (unsigned long long)I->lim.max_steps);
}

void jstep(jctx *I, uint64_t n) {
    I->steps += n;
    step(I);
}

static inline void deeper(jctx *I) {
    if (++I->depth > I->lim.max_depth)
        jfail(I, "template recursion too deep (limit %d)", I->lim.max_depth);
}

/* ------------------------------------------------------------- arguments */

void jeval_args(jctx *I, const jargs *a, jframe *f, jargv *out) {
    out->npos = out->nkw = 0;
    out->keep = jv_none();
    if (!a) return;
    for (int i = 0; i < a->pos.n; i++) {
        if (out->npos == JINJA_MAX_ARGS) jfail(I, "too many arguments");
        out->pos[out->npos++] = jeval(I, a->pos.v[i], f);
    }
    if (a->star) {
        jv v = jeval(I, a->star, f);
        jlist *l = jv_iterate(I, v);
        jv_release(I, v);
        for (size_t i = 0; i < l->n; i++) {
            if (out->npos == JINJA_MAX_ARGS) jfail(I, "too many arguments");
            out->pos[out->npos++] = jv_retain(l->v[i]);
        }
        jobj_release(I, &l->h);
    }
    for (int i = 0; i < a->kw.n; i++) {
        if (out->nkw == JINJA_MAX_ARGS) jfail(I, "too many arguments");
        out->kwn[out->nkw] = a->kwnames[i];
        out->kw[out->nkw++] = jeval(I, a->kw.v[i], f);
    }
    if (a->dstar) {
        jv v = jeval(I, a->dstar, f);
        if (v.k != JV_DICT) jfail(I, "argument after ** must be a mapping, not %s", jv_type_name(v));
        out->keep = v; /* keeps the key strings alive */
        const jdict *d = JDICT(v);
        for (size_t i = 0; i < d->n; i++) {
            if (out->nkw == JINJA_MAX_ARGS) jfail(I, "too many arguments");
            out->kwn[out->nkw] = d->keys[i]->s;
            out->kw[out->nkw++] = jv_retain(d->vals[i]);
        }
    }
}

void jargv_release(jctx *I, jargv *a) {
    for (int i = 0; i < a->npos; i++) jv_release(I, a->pos[i]);
    for (int i = 0; i < a->nkw; i++) jv_release(I, a->kw[i]);
    jv_release(I, a->keep);
    a->npos = a->nkw = 0;
    a->keep = jv_none();
}

/* ----------------------------------------------------------------- blocks */

static int exec_block(jctx *I, const jnodes *b, jframe *f, jstr *out);

enum { ST_OK = 0, ST_BREAK = 1, ST_CONTINUE = 2 };

jv jcall_macro(jctx *I, jmacro *m, jargv *args, jv caller) {
    const jnode *d = m->def;
    const char *mname = d->name ? d->name : "caller";
    deeper(I);
    jframe *mf = jframe_new(I, m->closure);
    bool used[JINJA_MAX_ARGS] = {0};
    for (int i = 0; i < d->n_params; i++) {
        const char *pn = d->params[i].name;
        jv v = jv_undef(pn);
        bool have = false;
        if (i < args->npos) {
            v = jv_retain(args->pos[i]);
            have = true;
        }
        for (int k = 0; k < args->nkw; k++)
            if (!used[k] && strcmp(args->kwn[k], pn) == 0) {
                if (have) jfail(I, "macro '%s' got multiple values for argument '%s'", mname, pn);
                v = jv_retain(args->kw[k]);
                used[k] = true;
                have = true;
            }
        if (!have && d->params[i].def) v = jeval(I, d->params[i].def, mf);
        jframe_set(I, mf, pn, v);
    }
    if (d->flag) {
        jlist *rest = jlist_new(I, 0);
        for (int i = d->n_params; i < args->npos; i++) jlist_push(I, rest, jv_retain(args->pos[i]));
        jframe_set(I, mf, "varargs", jv_list_take(rest, true));
    } else if (args->npos > d->n_params) {
        jfail(I, "macro '%s' takes not more than %d argument(s)", mname, d->n_params);
    }
    if (d->flag2) {
        jdict *kw = jdict_new(I, 0);
        for (int k = 0; k < args->nkw; k++)
            if (!used[k]) jdict_set_c(I, kw, args->kwn[k], jv_retain(args->kw[k]));
        jframe_set(I, mf, "kwargs", jv_obj(JV_DICT, kw));
    } else {
        for (int k = 0; k < args->nkw; k++)
            if (!used[k]) jfail(I, "macro '%s' takes no keyword argument '%s'", mname, args->kwn[k]);
    }
    if (d->flag3 || caller.k != JV_UNDEF) jframe_set(I, mf, "caller", jv_retain(caller));
    jstr *out = jstr_new(I, 64);
    exec_block(I, &d->body, mf, out);
    jobj_release(I, &mf->h);
    I->depth--;
    return jv_strobj(out);
}

jv jcall_value(jctx *I, jv fn, jargv *args) {
    switch (fn.k) {
    case JV_FUNC: return jcall_builtin(I, JFUNC(fn), args);
    case JV_MACRO: return jcall_macro(I, JMACRO(fn), args, jv_undef(NULL));
    case JV_UNDEF: jfail_undefined(I, fn);
    default: jfail(I, "'%s' object is not callable", jv_type_name(fn));
    }
}

static __attribute__((noinline)) jv eval_call(jctx *I, const jnode *n, jframe *f, jv caller) {
    jargv args;
    const jnode *callee = n->a;
    jv r;
    if (callee->k == JN_GETATTR && caller.k == JV_UNDEF) {
        jv obj = jeval(I, callee->a, f);
        jeval_args(I, n->args, f, &args);
        jsetpos(I, n);
        if (!jcall_method(I, obj, callee->name, &args, &r)) {
            jv fn = jget_attr(I, obj, callee->name);
            if (fn.k == JV_UNDEF)
                jfail(I, "'%s' object has no attribute '%s'", jv_type_name(obj), callee->name);
            r = jcall_value(I, fn, &args);
            jv_release(I, fn);
        }
        jv_release(I, obj);
    } else {
        jv fn = jeval(I, callee, f);
        jeval_args(I, n->args, f, &args);
        jsetpos(I, n);
        if (caller.k != JV_UNDEF) {
            if (fn.k != JV_MACRO) jfail(I, "{%% call %%} needs a macro, got %s", jv_type_name(fn));
            r = jcall_macro(I, JMACRO(fn), &args, caller);
        } else {
            r = jcall_value(I, fn, &args);
        }
        jv_release(I, fn);
    }
    jargv_release(I, &args);
    return r;
}

/* Python slice semantics over n items. */
static void slice_bounds(jctx *I, size_t n, jv vs, jv ve, jv vstep, int64_t *start, int64_t *stop,
                         int64_t *stp) {
    int64_t L = (int64_t)n, st = 1;
    jv vals[3] = {vs, ve, vstep};
    for (int i = 0; i < 3; i++)
        if (vals[i].k != JV_NONE && vals[i].k != JV_UNDEF && vals[i].k != JV_INT && vals[i].k != JV_BOOL)
            jfail(I, "slice indices must be integers or None, not %s", jv_type_name(vals[i]));
#define IVAL(v) ((v).k == JV_BOOL ? (int64_t)(v).b : (v).i)
    if (vstep.k == JV_INT || vstep.k == JV_BOOL) st = IVAL(vstep);
    if (st == 0) jfail(I, "slice step cannot be zero");
    int64_t a, b;
    if (vs.k == JV_INT || vs.k == JV_BOOL) {
        a = IVAL(vs);
        if (a < 0) {
            a += L;
            if (a < 0) a = st < 0 ? -1 : 0;
        } else if (a >= L) {
            a = st < 0 ? L - 1 : L;
        }
    } else {
        a = st < 0 ? L - 1 : 0;
    }
    if (ve.k == JV_INT || ve.k == JV_BOOL) {
        b = IVAL(ve);
        if (b < 0) {
            b += L;
            if (b < 0) b = st < 0 ? -1 : 0;
        } else if (b >= L) {
            b = st < 0 ? L - 1 : L;
        }
    } else {
        b = st < 0 ? -1 : L;
    }
#undef IVAL
    *start = a;
    *stop = b;
    *stp = st;
}

static jv eval_slice(jctx *I, const jnode *n, jframe *f) {
    jv obj = jeval(I, n->a, f);
    jv vs = n->b ? jeval(I, n->b, f) : jv_none();
    jv ve = n->c ? jeval(I, n->c, f) : jv_none();
    jv vst = n->d ? jeval(I, n->d, f) : jv_none();
    jsetpos(I, n);
    int64_t a, b, st;
    jv r;
    if (obj.k == JV_LIST || obj.k == JV_TUPLE) {
        const jlist *l = JLIST(obj);
        slice_bounds(I, l->n, vs, ve, vst, &a, &b, &st);
        jlist *o = jlist_new(I, 0);
        for (int64_t i = a; st > 0 ? i < b : i > b; i += st) jlist_push(I, o, jv_retain(l->v[i]));
        r = jv_list_take(o, obj.k == JV_TUPLE);
    } else if (obj.k == JV_STR) {
        const jstr *s = JSTR(obj);
        size_t n_cp = jutf8_len(s->s, s->len);
        size_t *offs = jmem_alloc(I, (n_cp + 1) * sizeof *offs);
        size_t k = 0;
        for (size_t i = 0; i < s->len; k++) {
            offs[k] = i;
            jutf8_next(s->s, s->len, &i);
        }
        offs[n_cp] = s->len;
        slice_bounds(I, n_cp, vs, ve, vst, &a, &b, &st);
        jstr *o = jstr_new(I, 16);
        if (st == 1 && a < b) {
            jstr_append(I, o, s->s + offs[a], offs[b] - offs[a]);
        } else {
            for (int64_t i = a; st > 0 ? i < b : i > b; i += st)
                jstr_append(I, o, s->s + offs[i], offs[i + 1] - offs[i]);
        }
        jmem_free(I, offs, (n_cp + 1) * sizeof *offs);
        r = jv_strobj(o);
    } else { /* as Jinja2's getitem: what cannot be sliced gives Undefined */
        r = jv_undef(obj.k == JV_UNDEF ? obj.uname : NULL);
    }
    jv_release(I, obj);
    jv_release(I, vs);
    jv_release(I, ve);
    jv_release(I, vst);
    return r;
}

static bool compare(jctx *I, int op, jv a, jv b) {
    switch (op) {
    case JOP_EQ: return jv_eq(I, a, b, 0);
    case JOP_NE: return !jv_eq(I, a, b, 0);
    case JOP_LT: return jv_cmp(I, a, b, false, 0) < 0;
    case JOP_LE: return jv_cmp(I, a, b, false, 0) <= 0;
    case JOP_GT: return jv_cmp(I, a, b, false, 0) > 0;
    case JOP_GE: return jv_cmp(I, a, b, false, 0) >= 0;
    case JOP_IN: return jv_contains(I, b, a);
    case JOP_NOTIN: return !jv_contains(I, b, a);
    default: return false;
    }
}

static jv eval_unary_sign(jctx *I, const jnode *n, jv v) {
    bool neg = n->k == JN_NEG;
    switch (v.k) {
    case JV_BOOL: return jv_int(neg ? -(int64_t)v.b : (int64_t)v.b);
    case JV_INT:
        if (neg && v.i == INT64_MIN) jfail(I, "integer overflow");
        return jv_int(neg ? -v.i : v.i);
    case JV_FLOAT: return jv_float(neg ? -v.f : v.f);
    case JV_UNDEF: jfail_undefined(I, v);
    default: jfail(I, "bad operand type for unary %c: '%s'", neg ? '-' : '+', jv_type_name(v));
    }
}

jv jeval(jctx *I, const jnode *n, jframe *f) {
    deeper(I);
    step(I);
    jsetpos(I, n);
    jv r;
    switch (n->k) {
    case JN_CONST:
        r = jv_retain(n->cval);
        break;
    case JN_NAME: {
        jv *p = jframe_lookup(f, n->name);
        r = p ? jv_retain(*p) : jv_undef(n->name);
        break;
    }
    case JN_LIST:
    case JN_TUPLE: {
        jlist *l = jlist_new(I, (size_t)n->body.n);
        for (int i = 0; i < n->body.n; i++) jlist_push(I, l, jeval(I, n->body.v[i], f));
        r = jv_list_take(l, n->k == JN_TUPLE);
        break;
    }
    case JN_DICT: {
        jdict *d = jdict_new(I, (size_t)n->body.n);
        r = jv_obj(JV_DICT, d);
        for (int i = 0; i < n->body.n; i++) {
            jv k = jeval(I, n->body.v[i], f);
            if (k.k != JV_STR) {
                jsetpos(I, n->body.v[i]);
                jfail(I, "dict keys must be strings, not %s", jv_type_name(k));
            }
            jdict_set(I, d, JSTR(k), jeval(I, n->orelse.v[i], f));
            jv_release(I, k);
        }
        break;
    }
    case JN_GETATTR: {
        jv o = jeval(I, n->a, f);
        jsetpos(I, n);
        r = jget_attr(I, o, n->name);
        jv_release(I, o);
        break;
    }
    case JN_GETITEM: {
        jv o = jeval(I, n->a, f);
        jv k = jeval(I, n->b, f);
        jsetpos(I, n);
        r = jget_item(I, o, k);
        jv_release(I, o);
        jv_release(I, k);
        break;
    }
    case JN_SLICE:
        r = eval_slice(I, n, f);
        break;
    case JN_CALL:
        r = eval_call(I, n, f, jv_undef(NULL));
        break;
    case JN_FILTER: {
        jv o = jeval(I, n->a, f);
        r = japply_filter(I, n, o, f);
        jv_release(I, o);
        break;
    }
    case JN_TEST: {
        jv o = jeval(I, n->a, f);
        bool b = japply_test(I, n, o, f);
        jv_release(I, o);
        r = jv_bool(b != n->flag);
        break;
    }
    case JN_NOT: {
        jv v = jeval(I, n->a, f);
        r = jv_bool(!jv_truthy(v));
        jv_release(I, v);
        break;
    }
    case JN_NEG:
    case JN_POS: {
        jv v = jeval(I, n->a, f);
        jsetpos(I, n);
        r = eval_unary_sign(I, n, v);
        jv_release(I, v);
        break;
    }
    case JN_BINOP: {
        jv a = jeval(I, n->a, f);
        jv b = jeval(I, n->b, f);
        jsetpos(I, n);
        r = jbinop(I, n->op, a, b);
        jv_release(I, a);
        jv_release(I, b);
        break;
    }
    case JN_AND:
    case JN_OR: {
        jv a = jeval(I, n->a, f);
        if (jv_truthy(a) == (n->k == JN_OR)) {
            r = a;
        } else {
            jv_release(I, a);
            r = jeval(I, n->b, f);
        }
        break;
    }
    case JN_COMPARE: {
        jv a = jeval(I, n->a, f);
        bool ok = true;
        for (int i = 0; i < n->body.n && ok; i++) {
            jv b = jeval(I, n->body.v[i], f);
            jsetpos(I, n);
            ok = compare(I, n->ops[i], a, b);
            jv_release(I, a);
            a = b;
        }
        jv_release(I, a);
        r = jv_bool(ok);
        break;
    }
    case JN_COND: {
        jv c = jeval(I, n->b, f);
        bool t = jv_truthy(c);
        jv_release(I, c);
        r = t ? jeval(I, n->a, f) : n->c ? jeval(I, n->c, f) : jv_undef(NULL);
        break;
    }
    default:
        jfail(I, "internal error: node %d is not an expression", n->k);
    }
    I->depth--;
    return r;
}

/* ------------------------------------------------------------- statements */

static void assign(jctx *I, const jnode *target, jv take, jframe *f) {
    if (target->k == JN_NAME) {
        jframe_set(I, f, target->name, take);
        return;
    }
    if (target->k == JN_GETATTR) {
        jv *ns = jframe_lookup(f, target->a->name);
        if (!ns || ns->k != JV_NS) {
            jv_release(I, take);
            jsetpos(I, target);
            jfail(I, "cannot assign attribute on non-namespace object");
        }
        jdict_set_c(I, JDICT(*ns), target->name, take);
        return;
    }
    /* tuple of names */
    jlist *l = jv_iterate(I, take);
    size_t want = (size_t)target->body.n;
    if (l->n != want) {
        jsetpos(I, target);
        if (l->n > want) jfail(I, "too many values to unpack (expected %zu)", want);
        jfail(I, "not enough values to unpack (expected %zu, got %zu)", want, l->n);
    }
    for (size_t i = 0; i < want; i++) jframe_set(I, f, target->body.v[i]->name, jv_retain(l->v[i]));
    jobj_release(I, &l->h);
    jv_release(I, take);
}

static int exec_for(jctx *I, const jnode *n, jframe *f, jstr *out) {
    jv it = jeval(I, n->b, f);
    jsetpos(I, n->b);
    jlist *items = jv_iterate(I, it);
    jv_release(I, it);
    if (n->c) { /* {% for x in xs if cond %} */
        jlist *sel = jlist_new(I, items->n);
        for (size_t i = 0; i < items->n; i++) {
            jframe *tf = jframe_new(I, f);
            assign(I, n->a, jv_retain(items->v[i]), tf);
            jv c = jeval(I, n->c, tf);
            if (jv_truthy(c)) jlist_push(I, sel, jv_retain(items->v[i]));
            jv_release(I, c);
            jobj_release(I, &tf->h);
        }
        jobj_release(I, &items->h);
        items = sel;
    }
    bool completed = false;
    for (size_t i = 0; i < items->n; i++) {
        step(I);
        jframe *lf = jframe_new(I, f);
        assign(I, n->a, jv_retain(items->v[i]), lf);
        jframe_set(I, lf, "loop", jv_loop(I, items, i));
        int r = exec_block(I, &n->body, lf, out);
        jobj_release(I, &lf->h);
        if (r == ST_BREAK) break;
        if (r == ST_CONTINUE) continue;
        completed = true;
    }
    jobj_release(I, &items->h);
    if (!completed && n->orelse.n) return exec_block(I, &n->orelse, f, out);
    return ST_OK;
}

static jv apply_filter_list(jctx *I, const jnodes *filters, jv take, jframe *f) {
    for (int i = 0; i < filters->n; i++) {
        jv r = japply_filter(I, filters->v[i], take, f);
        jv_release(I, take);
        take = r;
    }
    return take;
}

static int exec_stmt(jctx *I, const jnode *n, jframe *f, jstr *out) {
    step(I);
    jsetpos(I, n);
    switch (n->k) {
    case JN_TEXT:
        jstr_append(I, out, JSTR(n->cval)->s, JSTR(n->cval)->len);
        return ST_OK;
    case JN_OUTPUT: {
        jv v = jeval(I, n->a, f);
        jv_write_str(I, out, v);
        jv_release(I, v);
        return ST_OK;
    }
    case JN_IF: {
        jv c = jeval(I, n->a, f);
        bool t = jv_truthy(c);
        jv_release(I, c);
        return exec_block(I, t ? &n->body : &n->orelse, f, out);
    }
    case JN_FOR:
        return exec_for(I, n, f, out);
    case JN_SET:
        assign(I, n->a, jeval(I, n->b, f), f);
        return ST_OK;
    case JN_SETBLOCK: {
        jstr *buf = jstr_new(I, 64);
        int r = exec_block(I, &n->body, f, buf);
        jv v = apply_filter_list(I, &n->filters, jv_strobj(buf), f);
        assign(I, n->a, v, f);
        return r;
    }
    case JN_FILTERBLOCK: {
        jstr *buf = jstr_new(I, 64);
        int r = exec_block(I, &n->body, f, buf);
        jv v = apply_filter_list(I, &n->filters, jv_strobj(buf), f);
        jv_write_str(I, out, v);
        jv_release(I, v);
        return r;
    }
    case JN_MACRO:
        jframe_set(I, f, n->name, jv_macro(I, n, f));
        return ST_OK;
    case JN_CALLBLOCK: {
        jv caller = jv_macro(I, n, f);
        jv v = eval_call(I, n->a, f, caller);
        jv_release(I, caller);
        jv_write_str(I, out, v);
        jv_release(I, v);
        return ST_OK;
    }
    case JN_WITH: {
        jframe *wf = jframe_new(I, f);
        for (int i = 0; i < n->body.n; i++) {
            const jnode *s = n->body.v[i];
            assign(I, s->a, jeval(I, s->b, f), wf);
        }
        int r = exec_block(I, &n->orelse, wf, out);
        jobj_release(I, &wf->h);
        return r;
    }
    case JN_BREAK: return ST_BREAK;
    case JN_CONTINUE: return ST_CONTINUE;
    case JN_NOOP: return ST_OK;
    default: {
        jv v = jeval(I, n, f); /* not reached: the parser makes only statements here */
        jv_release(I, v);
        return ST_OK;
    }
    }
}

static int exec_block(jctx *I, const jnodes *b, jframe *f, jstr *out) {
    deeper(I);
    for (int i = 0; i < b->n; i++) {
        int r = exec_stmt(I, b->v[i], f, out);
        if (r != ST_OK) {
            I->depth--;
            return r;
        }
    }
    I->depth--;
    return ST_OK;
}

/* ----------------------------------------------------------------- render */

static void render(jctx *I, const cJSON *vars) {
    I->globals = jframe_new(I, NULL);
    jbuiltins_install(I, I->globals);
    I->root = jframe_new(I, I->globals);
    if (vars) {
        if (!cJSON_IsObject(vars)) jfail(I, "template variables must be a JSON object");
        const cJSON *it;
        cJSON_ArrayForEach(it, vars) {
            if (it->string) jframe_set(I, I->root, it->string, jv_from_json(I, it, 1));
        }
    }
    jstr *out = jstr_new(I, 4096);
    exec_block(I, &I->t->body, I->root, out);
    I->result = malloc(out->len + 1);
    if (!I->result) jfail(I, "out of memory");
    memcpy(I->result, out->s, out->len + 1);
    I->result_len = out->len;
}

char *jinja_render(const jinja_template *t, const cJSON *vars, const jinja_limits *lim,
                   size_t *out_len, wick_error *err) {
    if (out_len) *out_len = 0;
    if (!t) {
        wick_fail(err, "no template");
        return NULL;
    }
    jctx *I = calloc(1, sizeof *I);
    if (!I) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    I->live.next = I->live.prev = &I->live;
    I->lim = lim ? *lim : jinja_default_limits();
    I->err = err;
    I->t = t;
    I->line = I->col = 1;
    if (setjmp(I->jb) == 0) render(I, vars);
    jctx_sweep(I);
    char *res = I->result;
    if (res && out_len) *out_len = I->result_len;
    free(I);
    return res;
}
