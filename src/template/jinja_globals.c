/* jinja_globals.c — the global functions templates call (range, dict,
 * namespace, raise_exception, strftime_now), loop.cycle, and the dispatch of
 * every builtin function value, bound methods included. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "template/jinja_builtins.h"

/* ------------------------------------------------------- global functions */

static jv g_range(jctx *I, jargv *a) {
    if (a->npos < 1 || a->npos > 3) jfail(I, "range expected 1 to 3 arguments, got %d", a->npos);
    int64_t start = 0, stop, st = 1;
    if (a->npos == 1) {
        stop = want_int(I, a->pos[0], "range() argument");
    } else {
        start = want_int(I, a->pos[0], "range() argument");
        stop = want_int(I, a->pos[1], "range() argument");
        if (a->npos == 3) st = want_int(I, a->pos[2], "range() argument");
    }
    if (st == 0) jfail(I, "range() arg 3 must not be zero");
    double count = st > 0 ? ceil(((double)stop - (double)start) / (double)st)
                          : ceil(((double)start - (double)stop) / (double)-st);
    if (count < 0) count = 0;
    if (count > JINJA_MAX_RANGE)
        jfail(I, "Range too big. The sandbox blocks ranges larger than MAX_RANGE (%d).", JINJA_MAX_RANGE);
    jlist *l = jlist_new(I, (size_t)count);
    for (int64_t i = 0, x = start; i < (int64_t)count; i++, x += st) jlist_push(I, l, jv_int(x));
    return jv_list_take(l, false);
}

/* dict(mapping or pairs, **kw) into d */
static void fill_dict(jctx *I, jdict *d, jargv *a, const char *what) {
    if (a->npos > 1) jfail(I, "%s expected at most 1 positional argument, got %d", what, a->npos);
    if (a->npos == 1) {
        jv src = a->pos[0];
        if (src.k == JV_DICT || src.k == JV_NS) {
            for (size_t i = 0; i < JDICT(src)->n; i++)
                jdict_set(I, d, JDICT(src)->keys[i], jv_retain(JDICT(src)->vals[i]));
        } else {
            jlist *l = jv_iterate(I, src);
            for (size_t i = 0; i < l->n; i++) {
                jlist *p = jv_iterate(I, l->v[i]);
                if (p->n != 2 || p->v[0].k != JV_STR)
                    jfail(I, "%s: each item must be a (string key, value) pair", what);
                jdict_set(I, d, JSTR(p->v[0]), jv_retain(p->v[1]));
                jobj_release(I, &p->h);
            }
            jobj_release(I, &l->h);
        }
    }
    for (int k = 0; k < a->nkw; k++) jdict_set_c(I, d, a->kwn[k], jv_retain(a->kw[k]));
}

static jv g_strftime(jctx *I, jargv *a) {
    jv f;
    if (!argp(a, 0, "format", &f)) jfail(I, "strftime_now needs a format");
    const jstr *fmt = want_str(I, f, "format");
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    char buf[512];
    size_t n = fmt->len ? strftime(buf, sizeof buf, fmt->s, &tm) : 0;
    if (fmt->len && n == 0) jfail(I, "strftime_now: format too long or invalid");
    return jv_str(I, buf, n);
}

jv jcall_builtin(jctx *I, jfunc *fn, jargv *a) {
    jv r;
    if (fn->id >= JB_METHOD_BASE && jmethod_call(I, fn->id - JB_METHOD_BASE, fn->self, a, &r)) return r;
    switch (fn->id) {
    case JB_LOOP_CYCLE: {
        if (a->npos == 0) jfail(I, "no items for cycling given");
        return jv_retain(a->pos[fn->self.i % a->npos]);
    }
    case JB_RANGE: return g_range(I, a);
    case JB_DICT: {
        jdict *d = jdict_new(I, 0);
        jv r = jv_obj(JV_DICT, d);
        fill_dict(I, d, a, "dict");
        return r;
    }
    case JB_NAMESPACE: {
        jdict *d = jdict_new(I, 0);
        jv r = jv_obj(JV_NS, d);
        fill_dict(I, d, a, "namespace");
        return r;
    }
    case JB_RAISE: {
        jv m;
        if (!argp(a, 0, "message", &m)) jfail(I, "raise_exception() called without a message");
        jv s = jv_to_str(I, m);
        jfail(I, "%s", JSTR(s)->s);
    }
    case JB_STRFTIME: return g_strftime(I, a);
    default: jfail(I, "internal error: unknown builtin %d", fn->id);
    }
}

void jbuiltins_install(jctx *I, jframe *g) {
    jframe_set(I, g, "range", jv_func(I, JB_RANGE, jv_undef(NULL)));
    jframe_set(I, g, "dict", jv_func(I, JB_DICT, jv_undef(NULL)));
    jframe_set(I, g, "namespace", jv_func(I, JB_NAMESPACE, jv_undef(NULL)));
    jframe_set(I, g, "raise_exception", jv_func(I, JB_RAISE, jv_undef(NULL)));
    jframe_set(I, g, "strftime_now", jv_func(I, JB_STRFTIME, jv_undef(NULL)));
}
