/* jinja_filters.c — the filters (`x|name(args)`), looked up by name when they
 * run, so a template that names one wick lacks still renders as long as that
 * branch is not taken (as Jinja2 does inside conditionals). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/jinja_builtins.h"

/* ------------------------------------------------------------------ filters */

static jv f_abs(jctx *I, jv v, jargv *a) {
    (void)a;
    if (v.k == JV_FLOAT) return jv_float(fabs(v.f));
    if (is_intlike(v)) {
        int64_t x = ival(v);
        if (x == INT64_MIN) jfail(I, "integer overflow");
        return jv_int(x < 0 ? -x : x);
    }
    if (v.k == JV_UNDEF) jfail_undefined(I, v);
    jfail(I, "bad operand type for abs(): '%s'", jv_type_name(v));
}

static jv f_attr(jctx *I, jv v, jargv *a) {
    jv n;
    if (!argp(a, 0, "name", &n)) jfail(I, "attr() needs a name");
    const jstr *name = want_str(I, n, "attribute name");
    if (v.k == JV_DICT) { /* getattr on a dict finds methods only */
        int m = jmethod_find(v, name->s);
        return m >= 0 ? jv_func(I, JB_METHOD_BASE + m, jv_retain(v)) : jv_undef(name->s);
    }
    return jget_attr(I, v, name->s);
}

static jv f_batch(jctx *I, jv v, jargv *a) {
    int64_t n = want_int(I, arg_or(a, 0, "linecount", jv_int(0)), "linecount");
    if (n <= 0) jfail(I, "batch size must be positive");
    jv fill;
    bool has_fill = argp(a, 1, "fill_with", &fill) && fill.k != JV_NONE;
    jlist *items = jv_iterate(I, v), *out = jlist_new(I, 0), *cur = NULL;
    for (size_t i = 0; i < items->n; i++) {
        if (!cur) cur = jlist_new(I, (size_t)n);
        jlist_push(I, cur, jv_retain(items->v[i]));
        if ((int64_t)cur->n == n) {
            jlist_push(I, out, jv_list_take(cur, false));
            cur = NULL;
        }
    }
    if (cur) {
        while (has_fill && (int64_t)cur->n < n) jlist_push(I, cur, jv_retain(fill));
        jlist_push(I, out, jv_list_take(cur, false));
    }
    jobj_release(I, &items->h);
    return jv_list_take(out, false);
}

static jv with_str(jctx *I, jv v, int mode) {
    jv s = jv_to_str(I, v);
    jv r = jpy_case(I, JSTR(s), mode);
    jv_release(I, s);
    return r;
}
static jv f_capitalize(jctx *I, jv v, jargv *a) { (void)a; return with_str(I, v, CASE_CAPITALIZE); }
static jv f_lower(jctx *I, jv v, jargv *a) { (void)a; return with_str(I, v, CASE_LOWER); }
static jv f_upper(jctx *I, jv v, jargv *a) { (void)a; return with_str(I, v, CASE_UPPER); }
static jv f_title(jctx *I, jv v, jargv *a) { (void)a; return with_str(I, v, CASE_JTITLE); }

static jv f_default(jctx *I, jv v, jargv *a) {
    jv def;
    bool has = argp(a, 0, "default_value", &def);
    bool boolean = jv_truthy(arg_or(a, 1, "boolean", jv_bool(false)));
    if (v.k == JV_UNDEF || (boolean && !jv_truthy(v))) return has ? jv_retain(def) : jv_cstr(I, "");
    return jv_retain(v);
}

/* stable merge sort of vals by keys */
typedef struct sort_ctx {
    jctx *I;
    bool ci, reverse;
} sort_ctx;

static int sort_cmp(sort_ctx *c, jv a, jv b) {
    jstep(c->I, 1);
    int r = jv_cmp(c->I, a, b, c->ci, 0);
    return c->reverse ? -r : r;
}

static void merge_sort(sort_ctx *c, jv *keys, jv *vals, jv *tk, jv *tv, size_t n) {
    if (n < 2) return;
    size_t h = n / 2;
    merge_sort(c, keys, vals, tk, tv, h);
    merge_sort(c, keys + h, vals + h, tk, tv, n - h);
    size_t i = 0, j = h, o = 0;
    while (i < h && j < n) {
        if (sort_cmp(c, keys[j], keys[i]) < 0) {
            tk[o] = keys[j];
            tv[o++] = vals[j++];
        } else {
            tk[o] = keys[i];
            tv[o++] = vals[i++];
        }
    }
    while (i < h) {
        tk[o] = keys[i];
        tv[o++] = vals[i++];
    }
    while (j < n) {
        tk[o] = keys[j];
        tv[o++] = vals[j++];
    }
    memcpy(keys, tk, n * sizeof *keys);
    memcpy(vals, tv, n * sizeof *vals);
}

/* Sort items (borrowed) by key_of(item) -> new list */
static jv sorted(jctx *I, const jlist *items, jv attribute, bool ci, bool reverse, bool keys_are_pairs,
                 int pair_index) {
    size_t n = items->n;
    jstr *own;
    jv *buf = scratch(I, 4 * n * sizeof(jv) + 1, &own);
    jv *keys = buf, *vals = buf + n, *tk = buf + 2 * n, *tv = buf + 3 * n;
    jlist *hold = jlist_new(I, n); /* keeps computed keys alive */
    for (size_t i = 0; i < n; i++) {
        vals[i] = items->v[i];
        if (keys_are_pairs) keys[i] = JLIST(items->v[i])->v[pair_index];
        else if (!is_none(attribute)) {
            keys[i] = jattr_path(I, items->v[i], attribute);
            jlist_push(I, hold, keys[i]);
        } else keys[i] = items->v[i];
    }
    sort_ctx c = {I, ci, reverse};
    merge_sort(&c, keys, vals, tk, tv, n);
    jlist *out = jlist_new(I, n);
    for (size_t i = 0; i < n; i++) jlist_push(I, out, jv_retain(vals[i]));
    jobj_release(I, &hold->h);
    jobj_release(I, &own->h);
    return jv_list_take(out, false);
}

static jv f_sort(jctx *I, jv v, jargv *a) {
    bool reverse = jv_truthy(arg_or(a, 0, "reverse", jv_bool(false)));
    bool cs = jv_truthy(arg_or(a, 1, "case_sensitive", jv_bool(false)));
    jv attr = arg_or(a, 2, "attribute", jv_none());
    jlist *items = jv_iterate(I, v);
    jv r = sorted(I, items, attr, !cs, reverse, false, 0);
    jobj_release(I, &items->h);
    return r;
}

static jv f_dictsort(jctx *I, jv v, jargv *a) {
    if (v.k != JV_DICT) jfail(I, "dictsort needs a mapping, got %s", jv_type_name(v));
    bool cs = jv_truthy(arg_or(a, 0, "case_sensitive", jv_bool(false)));
    jv by = arg_or(a, 1, "by", jv_none());
    int idx = 0;
    if (!is_none(by)) {
        const jstr *b = want_str(I, by, "by");
        if (!strcmp(b->s, "value")) idx = 1;
        else if (strcmp(b->s, "key")) jfail(I, "You can only sort by either 'key' or 'value'");
    }
    bool reverse = jv_truthy(arg_or(a, 2, "reverse", jv_bool(false)));
    jv pairs = jdict_pairs(I, JDICT(v));
    jv r = sorted(I, JLIST(pairs), jv_none(), !cs, reverse, true, idx);
    jv_release(I, pairs);
    return r;
}

static jv f_escape(jctx *I, jv v, jargv *a) {
    (void)a;
    jv s = jv_to_str(I, v);
    jstr *o = jstr_new(I, JSTR(s)->len);
    for (size_t i = 0; i < JSTR(s)->len; i++) {
        char c = JSTR(s)->s[i];
        switch (c) {
        case '&': jstr_puts(I, o, "&amp;"); break;
        case '<': jstr_puts(I, o, "&lt;"); break;
        case '>': jstr_puts(I, o, "&gt;"); break;
        case '"': jstr_puts(I, o, "&#34;"); break;
        case '\'': jstr_puts(I, o, "&#39;"); break;
        default: jstr_append(I, o, &c, 1);
        }
    }
    jv_release(I, s);
    return jv_strobj(o);
}

static jv f_first(jctx *I, jv v, jargv *a) {
    (void)a;
    jlist *l = jv_iterate(I, v);
    jv r = l->n ? jv_retain(l->v[0]) : jv_undef(NULL);
    jobj_release(I, &l->h);
    return r;
}

static jv f_last(jctx *I, jv v, jargv *a) {
    (void)a;
    jlist *l = jv_iterate(I, v);
    jv r = l->n ? jv_retain(l->v[l->n - 1]) : jv_undef(NULL);
    jobj_release(I, &l->h);
    return r;
}

/* Python float(str) / int(str): surrounding whitespace, '_' between digits */
static bool parse_number(const jstr *s, bool want_int, int base, double *d, int64_t *i) {
    size_t a = 0, b = s->len;
    while (a < b && jpy_isspace((unsigned char)s->s[a])) a++;
    while (b > a && jpy_isspace((unsigned char)s->s[b - 1])) b--;
    if (a == b || b - a > 400) return false;
    char buf[512];
    size_t n = 0;
    for (size_t k = a; k < b; k++) {
        char c = s->s[k];
        if (c == '_') {
            if (k == a || k + 1 == b || s->s[k + 1] == '_') return false;
            continue;
        }
        buf[n++] = c;
    }
    buf[n] = 0;
    char *end;
    if (want_int) {
        errno = 0;
        long long v = strtoll(buf, &end, base);
        if (*end || end == buf || errno) return false;
        *i = v;
        return true;
    }
    *d = strtod(buf, &end);
    if (*end || end == buf) return false;
    for (size_t k = 0; k < n; k++) /* no hex floats, no "infinity"-like words but inf/nan */
        if (buf[k] == 'x' || buf[k] == 'X') return false;
    return true;
}

static jv f_float(jctx *I, jv v, jargv *a) {
    (void)I;
    jv def = arg_or(a, 0, "default", jv_float(0.0));
    if (v.k == JV_FLOAT) return jv_retain(v);
    if (is_intlike(v)) return jv_float((double)ival(v));
    if (v.k == JV_STR) {
        double d;
        if (parse_number(JSTR(v), false, 10, &d, NULL)) return jv_float(d);
    }
    return jv_retain(def);
}

static jv f_int(jctx *I, jv v, jargv *a) {
    jv def = arg_or(a, 0, "default", jv_int(0));
    int base = (int)want_int(I, arg_or(a, 1, "base", jv_int(10)), "base");
    if (is_intlike(v)) return jv_int(ival(v));
    if (v.k == JV_FLOAT) {
        if (!isfinite(v.f) || fabs(v.f) >= 9.2e18) return jv_retain(def);
        return jv_int((int64_t)v.f);
    }
    if (v.k == JV_STR) {
        int64_t i;
        double d;
        if (base >= 2 && base <= 36 && parse_number(JSTR(v), true, base, NULL, &i)) return jv_int(i);
        if (parse_number(JSTR(v), false, 10, &d, NULL) && isfinite(d) && fabs(d) < 9.2e18)
            return jv_int((int64_t)d);
    }
    return jv_retain(def);
}

static jv f_format(jctx *I, jv v, jargv *a) {
    jv fmt = jv_to_str(I, v);
    jv args;
    if (a->nkw) {
        jdict *d = jdict_new(I, (size_t)a->nkw);
        for (int k = 0; k < a->nkw; k++) jdict_set_c(I, d, a->kwn[k], jv_retain(a->kw[k]));
        args = jv_obj(JV_DICT, d);
    } else {
        jlist *l = jlist_new(I, (size_t)a->npos);
        for (int k = 0; k < a->npos; k++) jlist_push(I, l, jv_retain(a->pos[k]));
        args = jv_list_take(l, true);
    }
    jv r = jstr_mod_format(I, fmt, args);
    jv_release(I, args);
    jv_release(I, fmt);
    return r;
}

static jv f_indent(jctx *I, jv v, jargv *a) {
    if (v.k != JV_STR) jfail(I, "indent needs a string, not %s", jv_type_name(v));
    jv w = arg_or(a, 0, "width", jv_int(4));
    bool first = jv_truthy(arg_or(a, 1, "first", jv_bool(false)));
    bool blank = jv_truthy(arg_or(a, 2, "blank", jv_bool(false)));
    jstr *ind = jstr_new(I, 8);
    if (w.k == JV_STR) jstr_append(I, ind, JSTR(w)->s, JSTR(w)->len);
    else
        for (int64_t k = want_int(I, w, "width"); k > 0; k--) jstr_puts(I, ind, " ");
    jstr *s = jstr_new(I, 64);
    jv_write_str(I, s, v);
    jstr_puts(I, s, "\n"); /* Jinja's quirk before splitlines() */
    jv lines = jpy_splitlines(I, s, false);
    jstr *o = jstr_new(I, s->len + 64);
    const jlist *l = JLIST(lines);
    for (size_t i = 0; i < l->n; i++) {
        const jstr *line = JSTR(l->v[i]);
        if (i) jstr_puts(I, o, "\n");
        if (i && (blank || line->len)) jstr_append(I, o, ind->s, ind->len);
        jstr_append(I, o, line->s, line->len);
    }
    if (first) {
        jstr *o2 = jstr_new(I, o->len + ind->len);
        jstr_append(I, o2, ind->s, ind->len);
        jstr_append(I, o2, o->s, o->len);
        jv_release(I, jv_strobj(o));
        o = o2;
    }
    jv_release(I, lines);
    jv_release(I, jv_strobj(s));
    jv_release(I, jv_strobj(ind));
    return jv_strobj(o);
}

static jv f_items(jctx *I, jv v, jargv *a) {
    (void)a;
    if (v.k == JV_UNDEF) return jv_list_take(jlist_new(I, 0), false);
    if (v.k != JV_DICT) jfail(I, "Can only get item pairs from a mapping, not %s", jv_type_name(v));
    return jdict_pairs(I, JDICT(v));
}

static jv f_join(jctx *I, jv v, jargv *a) {
    jv sep = arg_or(a, 0, "d", jv_none());
    jv attr = arg_or(a, 1, "attribute", jv_none());
    jlist *l = jv_iterate(I, v);
    jstr *o = jstr_new(I, 64);
    for (size_t i = 0; i < l->n; i++) {
        if (i && !is_none(sep)) jv_write_str(I, o, sep);
        if (is_none(attr)) {
            jv_write_str(I, o, l->v[i]);
        } else {
            jv x = jattr_path(I, l->v[i], attr);
            jv_write_str(I, o, x);
            jv_release(I, x);
        }
    }
    jobj_release(I, &l->h);
    return jv_strobj(o);
}

static jv f_length(jctx *I, jv v, jargv *a) {
    (void)a;
    switch (v.k) {
    case JV_UNDEF: return jv_int(0);
    case JV_STR: return jv_int((int64_t)jutf8_len(JSTR(v)->s, JSTR(v)->len));
    case JV_LIST:
    case JV_TUPLE: return jv_int((int64_t)JLIST(v)->n);
    case JV_DICT: return jv_int((int64_t)JDICT(v)->n);
    default: jfail(I, "object of type '%s' has no len()", jv_type_name(v));
    }
}

static jv f_list(jctx *I, jv v, jargv *a) {
    (void)a;
    jlist *l = jv_iterate(I, v);
    if (v.k == JV_LIST) return jv_list_take(l, false); /* same list (immutable) */
    jlist *o = jlist_new(I, l->n);
    for (size_t i = 0; i < l->n; i++) jlist_push(I, o, jv_retain(l->v[i]));
    jobj_release(I, &l->h);
    return jv_list_take(o, false);
}

static jv f_pprint(jctx *I, jv v, jargv *a) {
    (void)a;
    jstr *o = jstr_new(I, 32);
    jv_write_repr(I, o, v, 0);
    return jv_strobj(o);
}

static jv f_replace(jctx *I, jv v, jargv *a) {
    jv o, n;
    if (!argp(a, 0, "old", &o) || !argp(a, 1, "new", &n)) jfail(I, "replace needs old and new");
    jv c = arg_or(a, 2, "count", jv_none());
    jv s = jv_to_str(I, v), os = jv_to_str(I, o), ns = jv_to_str(I, n);
    jv r = jpy_replace(I, JSTR(s), JSTR(os), JSTR(ns), is_none(c) ? -1 : want_int(I, c, "count"));
    jv_release(I, s);
    jv_release(I, os);
    jv_release(I, ns);
    return r;
}

static jv f_reverse(jctx *I, jv v, jargv *a) {
    (void)a;
    if (v.k == JV_STR) {
        const jstr *s = JSTR(v);
        jstr *o = jstr_new(I, s->len);
        for (size_t e = s->len; e > 0;) {
            size_t b = back_char(s->s, 0, e);
            jstr_append(I, o, s->s + b, e - b);
            e = b;
        }
        return jv_strobj(o);
    }
    jlist *l = jv_iterate(I, v), *o = jlist_new(I, l->n);
    for (size_t i = l->n; i-- > 0;) jlist_push(I, o, jv_retain(l->v[i]));
    jobj_release(I, &l->h);
    return jv_list_take(o, false);
}

static jv f_round(jctx *I, jv v, jargv *a) {
    int64_t prec = want_int(I, arg_or(a, 0, "precision", jv_int(0)), "precision");
    jv m = arg_or(a, 1, "method", jv_none());
    const char *method = is_none(m) ? "common" : want_str(I, m, "method")->s;
    if (strcmp(method, "common") && strcmp(method, "ceil") && strcmp(method, "floor"))
        jfail(I, "method must be 'common', 'ceil' or 'floor'");
    if (is_intlike(v) && !strcmp(method, "common") && prec >= 0) return jv_int(ival(v));
    if (!(is_intlike(v) || v.k == JV_FLOAT)) jfail(I, "round() needs a number, not %s", jv_type_name(v));
    double x = fnum(v);
    if (prec > 300) prec = 300;
    if (prec < -300) prec = -300;
    if (!strcmp(method, "common")) {
        if (prec == 0) return jv_float(nearbyint(x));
        if (prec > 0) {
            char buf[400];
            snprintf(buf, sizeof buf, "%.*f", (int)prec, x);
            return jv_float(strtod(buf, NULL));
        }
        double p = pow(10.0, (double)-prec);
        return jv_float(nearbyint(x / p) * p);
    }
    double p = pow(10.0, (double)prec);
    return jv_float((!strcmp(method, "ceil") ? ceil(x * p) : floor(x * p)) / p);
}

static jv f_safe(jctx *I, jv v, jargv *a) { (void)I; (void)a; return jv_retain(v); }
static jv f_string(jctx *I, jv v, jargv *a) { (void)a; return jv_to_str(I, v); }

static jv f_sum(jctx *I, jv v, jargv *a) {
    jv attr = arg_or(a, 0, "attribute", jv_none());
    jv acc = jv_retain(arg_or(a, 1, "start", jv_int(0)));
    jlist *l = jv_iterate(I, v);
    for (size_t i = 0; i < l->n; i++) {
        jv x = is_none(attr) ? jv_retain(l->v[i]) : jattr_path(I, l->v[i], attr);
        jv r = jbinop(I, JOP_ADD, acc, x);
        jv_release(I, x);
        jv_release(I, acc);
        acc = r;
    }
    jobj_release(I, &l->h);
    return acc;
}

static jv ci_key(jctx *I, jv x, bool ci) { /* lower-cased strings for case-insensitive compare */
    return ci && x.k == JV_STR ? jpy_case(I, JSTR(x), CASE_LOWER) : jv_retain(x);
}

static jv f_unique(jctx *I, jv v, jargv *a) {
    bool cs = jv_truthy(arg_or(a, 0, "case_sensitive", jv_bool(false)));
    jv attr = arg_or(a, 1, "attribute", jv_none());
    jlist *l = jv_iterate(I, v), *out = jlist_new(I, 0), *seen = jlist_new(I, 0);
    for (size_t i = 0; i < l->n; i++) {
        jv k0 = is_none(attr) ? jv_retain(l->v[i]) : jattr_path(I, l->v[i], attr);
        jv k = ci_key(I, k0, !cs);
        jv_release(I, k0);
        bool dup = false;
        jstep(I, seen->n);
        for (size_t j = 0; j < seen->n && !dup; j++) dup = jv_eq(I, seen->v[j], k, 0);
        if (dup) {
            jv_release(I, k);
        } else {
            jlist_push(I, seen, k);
            jlist_push(I, out, jv_retain(l->v[i]));
        }
    }
    jobj_release(I, &seen->h);
    jobj_release(I, &l->h);
    return jv_list_take(out, false);
}

static jv minmax(jctx *I, jv v, jargv *a, bool want_max) {
    bool cs = jv_truthy(arg_or(a, 0, "case_sensitive", jv_bool(false)));
    jv attr = arg_or(a, 1, "attribute", jv_none());
    jlist *l = jv_iterate(I, v);
    jv best = jv_undef(NULL), best_key = jv_none();
    for (size_t i = 0; i < l->n; i++) {
        jv k0 = is_none(attr) ? jv_retain(l->v[i]) : jattr_path(I, l->v[i], attr);
        jv k = ci_key(I, k0, !cs);
        jv_release(I, k0);
        int c = best.k == JV_UNDEF ? 1 : jv_cmp(I, k, best_key, false, 0);
        if (best.k == JV_UNDEF || (want_max ? c > 0 : c < 0)) {
            jv_release(I, best);
            jv_release(I, best_key);
            best = jv_retain(l->v[i]);
            best_key = k;
        } else {
            jv_release(I, k);
        }
    }
    jv_release(I, best_key);
    jobj_release(I, &l->h);
    return best;
}
static jv f_max(jctx *I, jv v, jargv *a) { return minmax(I, v, a, true); }
static jv f_min(jctx *I, jv v, jargv *a) { return minmax(I, v, a, false); }

static jv f_tojson(jctx *I, jv v, jargv *a) {
    /* transformers' tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False) */
    bool ascii = jv_truthy(arg_or(a, 0, "ensure_ascii", jv_bool(false)));
    jv indent = arg_or(a, 1, "indent", jv_none());
    jv seps = arg_or(a, 2, "separators", jv_none());
    bool sort_keys = jv_truthy(arg_or(a, 3, "sort_keys", jv_bool(false)));
    jjson_opts o = {.indent = NULL, .item_sep = ", ", .key_sep = ": ", .sort_keys = sort_keys,
                    .ensure_ascii = ascii};
    jstr *ind = NULL;
    if (!is_none(indent)) {
        ind = jstr_new(I, 8);
        if (indent.k == JV_STR) jstr_append(I, ind, JSTR(indent)->s, JSTR(indent)->len);
        else {
            int64_t n = want_int(I, indent, "indent");
            if (n > 1000) jfail(I, "indent too large");
            for (int64_t k = 0; k < n; k++) jstr_puts(I, ind, " ");
        }
        o.indent = ind->s;
        o.item_sep = ",";
    }
    if (!is_none(seps)) {
        if ((seps.k != JV_LIST && seps.k != JV_TUPLE) || JLIST(seps)->n != 2 ||
            JLIST(seps)->v[0].k != JV_STR || JLIST(seps)->v[1].k != JV_STR)
            jfail(I, "separators must be a pair of strings");
        o.item_sep = JSTR(JLIST(seps)->v[0])->s;
        o.key_sep = JSTR(JLIST(seps)->v[1])->s;
    }
    jstr *out = jstr_new(I, 64);
    jv_write_json(I, out, v, &o, 0);
    if (ind) jv_release(I, jv_strobj(ind));
    return jv_strobj(out);
}

static jv f_trim(jctx *I, jv v, jargv *a) {
    jv c = arg_or(a, 0, "chars", jv_none());
    jv s = jv_to_str(I, v);
    jv r = jpy_strip(I, JSTR(s), is_none(c) ? NULL : want_str(I, c, "chars"), true, true);
    jv_release(I, s);
    return r;
}

static jv f_wordcount(jctx *I, jv v, jargv *a) {
    (void)a;
    jv s = jv_to_str(I, v);
    int64_t n = 0;
    bool in_word = false;
    for (size_t i = 0; i < JSTR(s)->len;) {
        int cp = jutf8_next(JSTR(s)->s, JSTR(s)->len, &i);
        bool w = cp == '_' || jpy_isalnum_cp(cp);
        if (w && !in_word) n++;
        in_word = w;
    }
    jv_release(I, s);
    return jv_int(n);
}

static jv f_map(jctx *I, jv v, jargv *a);
static jv f_select(jctx *I, jv v, jargv *a);
static jv f_reject(jctx *I, jv v, jargv *a);
static jv f_selectattr(jctx *I, jv v, jargv *a);
static jv f_rejectattr(jctx *I, jv v, jargv *a);

static const struct {
    const char *name;
    jfilter_fn fn;
} FILTERS[] = {
    {"abs", f_abs},           {"attr", f_attr},         {"batch", f_batch},
    {"capitalize", f_capitalize}, {"count", f_length},  {"d", f_default},
    {"default", f_default},   {"dictsort", f_dictsort}, {"e", f_escape},
    {"escape", f_escape},     {"first", f_first},       {"float", f_float},
    {"forceescape", f_escape}, {"format", f_format},    {"indent", f_indent},
    {"int", f_int},           {"items", f_items},       {"join", f_join},
    {"last", f_last},         {"length", f_length},     {"list", f_list},
    {"lower", f_lower},       {"map", f_map},           {"max", f_max},
    {"min", f_min},           {"pprint", f_pprint},     {"reject", f_reject},
    {"rejectattr", f_rejectattr}, {"replace", f_replace}, {"reverse", f_reverse},
    {"round", f_round},       {"safe", f_safe},         {"select", f_select},
    {"selectattr", f_selectattr}, {"sort", f_sort},     {"string", f_string},
    {"sum", f_sum},           {"title", f_title},       {"tojson", f_tojson},
    {"trim", f_trim},         {"unique", f_unique},     {"upper", f_upper},
    {"wordcount", f_wordcount},
};

jfilter_fn jfilter_find(const char *name) {
    for (size_t i = 0; i < sizeof FILTERS / sizeof FILTERS[0]; i++)
        if (!strcmp(FILTERS[i].name, name)) return FILTERS[i].fn;
    return NULL;
}


jv japply_filter(jctx *I, const jnode *fnode, jv operand, jframe *f) {
    jargv args;
    jeval_args(I, fnode->args, f, &args);
    jsetpos(I, fnode);
    jfilter_fn fn = jfilter_find(fnode->name);
    if (!fn) jfail(I, "no filter named '%s'", fnode->name);
    jv r = fn(I, operand, &args);
    jargv_release(I, &args);
    return r;
}

/* args[from..] of a as a new (borrowing) argument list */
static void shift_args(const jargv *a, int from, jargv *out) {
    out->npos = 0;
    for (int i = from; i < a->npos; i++) out->pos[out->npos++] = a->pos[i];
    out->nkw = a->nkw;
    for (int k = 0; k < a->nkw; k++) {
        out->kwn[k] = a->kwn[k];
        out->kw[k] = a->kw[k];
    }
    out->keep = jv_none();
}

static jv f_map(jctx *I, jv v, jargv *a) {
    jlist *l = jv_iterate(I, v), *out = jlist_new(I, l->n);
    jv attr;
    if (argp(a, -1, "attribute", &attr)) {
        jv def;
        bool has_def = argp(a, -1, "default", &def);
        for (size_t i = 0; i < l->n; i++) {
            jv x = jattr_path(I, l->v[i], attr);
            if (x.k == JV_UNDEF && has_def) x = jv_retain(def);
            jlist_push(I, out, x);
        }
    } else {
        jv name;
        if (!argp(a, 0, NULL, &name)) jfail(I, "map needs a filter name or attribute=");
        jfilter_fn fn = jfilter_find(want_str(I, name, "filter name")->s);
        if (!fn) jfail(I, "no filter named '%s'", JSTR(name)->s);
        jargv rest;
        shift_args(a, 1, &rest);
        for (size_t i = 0; i < l->n; i++) jlist_push(I, out, fn(I, l->v[i], &rest));
    }
    jobj_release(I, &l->h);
    return jv_list_take(out, false);
}

/* select/reject(test, *args), selectattr/rejectattr(attr, test, *args) */
static jv select_common(jctx *I, jv v, jargv *a, bool attr_mode, bool keep) {
    int base = 0;
    jv attr = jv_none();
    if (attr_mode) {
        if (!argp(a, 0, NULL, &attr)) jfail(I, "selectattr/rejectattr need an attribute");
        base = 1;
    }
    jv tname;
    bool has_test = argp(a, base, NULL, &tname);
    jtest_fn fn = NULL;
    if (has_test) {
        fn = jtest_find(want_str(I, tname, "test name")->s);
        if (!fn) jfail(I, "no test named '%s'", JSTR(tname)->s);
    }
    jargv rest;
    shift_args(a, base + 1, &rest);
    jlist *l = jv_iterate(I, v), *out = jlist_new(I, 0);
    for (size_t i = 0; i < l->n; i++) {
        jv x = attr_mode ? jattr_path(I, l->v[i], attr) : jv_retain(l->v[i]);
        bool r = fn ? fn(I, x, &rest) : jv_truthy(x);
        jv_release(I, x);
        if (r == keep) jlist_push(I, out, jv_retain(l->v[i]));
    }
    jobj_release(I, &l->h);
    return jv_list_take(out, false);
}
static jv f_select(jctx *I, jv v, jargv *a) { return select_common(I, v, a, false, true); }
static jv f_reject(jctx *I, jv v, jargv *a) { return select_common(I, v, a, false, false); }
static jv f_selectattr(jctx *I, jv v, jargv *a) { return select_common(I, v, a, true, true); }
static jv f_rejectattr(jctx *I, jv v, jargv *a) { return select_common(I, v, a, true, false); }
