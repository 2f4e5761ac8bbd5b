/* jinja_methods.c — what `x.name`, `x[key]` and `x.name(...)` find: the
 * str / dict / list methods and attribute and item access.
 *
 * Attribute access follows Jinja2's environment.getattr: `x.name` tries the
 * Python attribute first (a dict's items/keys/values/get, a str's methods),
 * then the item; `x[key]` tries the item first, then the attribute. A missing
 * attribute is Undefined; unlike Python Jinja2, so is any attribute of an
 * Undefined (lenient, as @huggingface/jinja). */
#include <stdlib.h>
#include <string.h>

#include "template/jinja_builtins.h"

/* ------------------------------------------------------------------ methods */

typedef jv (*method_fn)(jctx *I, jv self, jargv *a);

#define SELF_S JSTR(self)

static jv m_upper(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "upper()"); return jpy_case(I, SELF_S, CASE_UPPER); }
static jv m_lower(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "lower()"); return jpy_case(I, SELF_S, CASE_LOWER); }
static jv m_title(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "title()"); return jpy_case(I, SELF_S, CASE_TITLE); }
static jv m_capitalize(jctx *I, jv self, jargv *a) {
    max_pos(I, a, 0, "capitalize()");
    return jpy_case(I, SELF_S, CASE_CAPITALIZE);
}
static jv m_swapcase(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "swapcase()"); return jpy_case(I, SELF_S, CASE_SWAP); }

static jv strip_common(jctx *I, jv self, jargv *a, bool l, bool r) {
    max_pos(I, a, 1, "strip()");
    jv c = arg_or(a, 0, "chars", jv_none());
    const jstr *chars = is_none(c) ? NULL : want_str(I, c, "strip arg");
    return jpy_strip(I, SELF_S, chars, l, r);
}
static jv m_strip(jctx *I, jv self, jargv *a) { return strip_common(I, self, a, true, true); }
static jv m_lstrip(jctx *I, jv self, jargv *a) { return strip_common(I, self, a, true, false); }
static jv m_rstrip(jctx *I, jv self, jargv *a) { return strip_common(I, self, a, false, true); }

static jv split_common(jctx *I, jv self, jargv *a, bool right) {
    max_pos(I, a, 2, "split()");
    jv sep = arg_or(a, 0, "sep", jv_none());
    jv mx = arg_or(a, 1, "maxsplit", jv_int(-1));
    return jpy_split(I, SELF_S, is_none(sep) ? NULL : want_str(I, sep, "sep"), want_int(I, mx, "maxsplit"), right);
}
static jv m_split(jctx *I, jv self, jargv *a) { return split_common(I, self, a, false); }
static jv m_rsplit(jctx *I, jv self, jargv *a) { return split_common(I, self, a, true); }
static jv m_splitlines(jctx *I, jv self, jargv *a) {
    return jpy_splitlines(I, SELF_S, jv_truthy(arg_or(a, 0, "keepends", jv_bool(false))));
}
static jv m_startswith(jctx *I, jv self, jargv *a) {
    jv p;
    if (!argp(a, 0, NULL, &p)) jfail(I, "startswith() takes at least 1 argument");
    return jv_bool(jpy_affix(I, SELF_S, p, false, "startswith"));
}
static jv m_endswith(jctx *I, jv self, jargv *a) {
    jv p;
    if (!argp(a, 0, NULL, &p)) jfail(I, "endswith() takes at least 1 argument");
    return jv_bool(jpy_affix(I, SELF_S, p, true, "endswith"));
}
static jv m_replace(jctx *I, jv self, jargv *a) {
    jv o, n;
    if (!argp(a, 0, NULL, &o) || !argp(a, 1, NULL, &n)) jfail(I, "replace() takes at least 2 arguments");
    jv c = arg_or(a, 2, "count", jv_int(-1));
    return jpy_replace(I, SELF_S, want_str(I, o, "replace() argument 1"), want_str(I, n, "replace() argument 2"),
                       is_none(c) ? -1 : want_int(I, c, "count"));
}
static jv find_common(jctx *I, jv self, jargv *a, bool right, bool count) {
    jv sub;
    if (!argp(a, 0, NULL, &sub)) jfail(I, "find() takes at least 1 argument");
    const jstr *s = SELF_S, *t = want_str(I, sub, "substring");
    if (count) {
        if (t->len == 0) return jv_int((int64_t)jutf8_len(s->s, s->len) + 1);
        int64_t k = 0;
        for (size_t st = 0;;) {
            const char *hit = memmem(s->s + st, s->len - st, t->s, t->len);
            if (!hit) break;
            k++;
            st = (size_t)(hit - s->s) + t->len;
        }
        return jv_int(k);
    }
    if (!right) {
        const char *hit = t->len ? memmem(s->s, s->len, t->s, t->len) : s->s;
        return jv_int(hit ? jpy_cp_index(s, (size_t)(hit - s->s)) : -1);
    }
    if (t->len > s->len) return jv_int(-1);
    for (size_t q = s->len - t->len + 1; q-- > 0;)
        if (memcmp(s->s + q, t->s, t->len) == 0) return jv_int(jpy_cp_index(s, q));
    return jv_int(-1);
}
static jv m_find(jctx *I, jv self, jargv *a) { return find_common(I, self, a, false, false); }
static jv m_rfind(jctx *I, jv self, jargv *a) { return find_common(I, self, a, true, false); }
static jv m_count_s(jctx *I, jv self, jargv *a) { return find_common(I, self, a, false, true); }
static jv m_join(jctx *I, jv self, jargv *a) {
    jv it;
    if (!argp(a, 0, NULL, &it)) jfail(I, "join() takes exactly one argument");
    jlist *l = jv_iterate(I, it);
    jstr *o = jstr_new(I, 64);
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].k != JV_STR)
            jfail(I, "sequence item %zu: expected str instance, %s found", i, jv_type_name(l->v[i]));
        if (i) jstr_append(I, o, SELF_S->s, SELF_S->len);
        jstr_append(I, o, JSTR(l->v[i])->s, JSTR(l->v[i])->len);
    }
    jobj_release(I, &l->h);
    return jv_strobj(o);
}
static jv m_isdigit(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_all(SELF_S, jpy_isdigit_cp)); }
static jv m_isalpha(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_all(SELF_S, jpy_isalpha_cp)); }
static jv m_isalnum(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_all(SELF_S, jpy_isalnum_cp)); }
static jv m_isnumeric(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_all(SELF_S, jpy_isnumeric_cp)); }
static jv m_isspace(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_all(SELF_S, jpy_isspace_cp)); }
static jv m_islower(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_case_is(SELF_S, false)); }
static jv m_isupper(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(jpy_case_is(SELF_S, true)); }
static jv m_removeprefix(jctx *I, jv self, jargv *a) {
    jv p;
    if (!argp(a, 0, NULL, &p)) jfail(I, "removeprefix() takes exactly one argument");
    const jstr *s = SELF_S, *x = want_str(I, p, "prefix");
    if (x->len <= s->len && memcmp(s->s, x->s, x->len) == 0) return jv_str(I, s->s + x->len, s->len - x->len);
    return jv_retain(self);
}
static jv m_removesuffix(jctx *I, jv self, jargv *a) {
    jv p;
    if (!argp(a, 0, NULL, &p)) jfail(I, "removesuffix() takes exactly one argument");
    const jstr *s = SELF_S, *x = want_str(I, p, "suffix");
    if (x->len && x->len <= s->len && memcmp(s->s + s->len - x->len, x->s, x->len) == 0)
        return jv_str(I, s->s, s->len - x->len);
    return jv_retain(self);
}

/* dict methods */
jv jdict_pairs(jctx *I, const jdict *d) {
    jlist *l = jlist_new(I, d->n);
    for (size_t i = 0; i < d->n; i++) {
        jlist *p = jlist_new(I, 2);
        jlist_push(I, p, jv_retain(jv_strobj(d->keys[i])));
        jlist_push(I, p, jv_retain(d->vals[i]));
        jlist_push(I, l, jv_list_take(p, true));
    }
    return jv_list_take(l, false);
}
static jv m_items(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "items()"); return jdict_pairs(I, JDICT(self)); }
static jv m_keys(jctx *I, jv self, jargv *a) {
    max_pos(I, a, 0, "keys()");
    return jv_list_take(jv_iterate(I, self), false);
}
static jv m_values(jctx *I, jv self, jargv *a) {
    max_pos(I, a, 0, "values()");
    const jdict *d = JDICT(self);
    jlist *l = jlist_new(I, d->n);
    for (size_t i = 0; i < d->n; i++) jlist_push(I, l, jv_retain(d->vals[i]));
    return jv_list_take(l, false);
}
static jv m_get(jctx *I, jv self, jargv *a) {
    jv k;
    if (!argp(a, 0, NULL, &k)) jfail(I, "get expected at least 1 argument, got 0");
    jv def = arg_or(a, 1, NULL, jv_none());
    if (k.k != JV_STR) return jv_retain(def);
    jv *v = jdict_get(JDICT(self), JSTR(k)->s, JSTR(k)->len);
    return jv_retain(v ? *v : def);
}

/* list methods */
static jv m_list_count(jctx *I, jv self, jargv *a) {
    jv x;
    if (!argp(a, 0, NULL, &x)) jfail(I, "count() takes exactly one argument");
    int64_t k = 0;
    for (size_t i = 0; i < JLIST(self)->n; i++) k += jv_eq(I, JLIST(self)->v[i], x, 0);
    return jv_int(k);
}
static jv m_list_index(jctx *I, jv self, jargv *a) {
    jv x;
    if (!argp(a, 0, NULL, &x)) jfail(I, "index() takes exactly one argument");
    for (size_t i = 0; i < JLIST(self)->n; i++)
        if (jv_eq(I, JLIST(self)->v[i], x, 0)) return jv_int((int64_t)i);
    jfail(I, "value is not in list");
}

typedef struct mdef {
    uint8_t recv; /* JV_STR, JV_DICT, JV_LIST (also tuples) */
    const char *name;
    method_fn fn;
} mdef;

static const mdef METHODS[] = {
    {JV_STR, "upper", m_upper},           {JV_STR, "lower", m_lower},
    {JV_STR, "title", m_title},           {JV_STR, "capitalize", m_capitalize},
    {JV_STR, "swapcase", m_swapcase},     {JV_STR, "strip", m_strip},
    {JV_STR, "lstrip", m_lstrip},         {JV_STR, "rstrip", m_rstrip},
    {JV_STR, "split", m_split},           {JV_STR, "rsplit", m_rsplit},
    {JV_STR, "splitlines", m_splitlines}, {JV_STR, "startswith", m_startswith},
    {JV_STR, "endswith", m_endswith},     {JV_STR, "replace", m_replace},
    {JV_STR, "find", m_find},             {JV_STR, "rfind", m_rfind},
    {JV_STR, "count", m_count_s},         {JV_STR, "join", m_join},
    {JV_STR, "isdigit", m_isdigit},       {JV_STR, "isalpha", m_isalpha},
    {JV_STR, "isalnum", m_isalnum},       {JV_STR, "isnumeric", m_isnumeric},
    {JV_STR, "isspace", m_isspace},       {JV_STR, "islower", m_islower},
    {JV_STR, "isupper", m_isupper},       {JV_STR, "removeprefix", m_removeprefix},
    {JV_STR, "removesuffix", m_removesuffix},
    {JV_DICT, "items", m_items},          {JV_DICT, "keys", m_keys},
    {JV_DICT, "values", m_values},        {JV_DICT, "get", m_get},
    {JV_LIST, "count", m_list_count},     {JV_LIST, "index", m_list_index},
};
#define N_METHODS (int)(sizeof METHODS / sizeof METHODS[0])

int jmethod_find(jv obj, const char *name) {
    int recv = obj.k == JV_TUPLE ? JV_LIST : obj.k;
    if (recv != JV_STR && recv != JV_DICT && recv != JV_LIST) return -1;
    for (int i = 0; i < N_METHODS; i++)
        if (METHODS[i].recv == recv && strcmp(METHODS[i].name, name) == 0) return i;
    return -1;
}

bool jcall_method(jctx *I, jv obj, const char *name, jargv *args, jv *out) {
    int m = jmethod_find(obj, name);
    if (m < 0) return false;
    *out = METHODS[m].fn(I, obj, args);
    return true;
}

/* method m of the table, called by a bound method value (jcall_builtin) */
bool jmethod_call(jctx *I, int m, jv self, jargv *a, jv *out) {
    if (m < 0 || m >= N_METHODS) return false;
    *out = METHODS[m].fn(I, self, a);
    return true;
}

/* ------------------------------------------------------- attribute access */

jv jget_attr(jctx *I, jv obj, const char *name) {
    switch (obj.k) {
    case JV_DICT: {
        int m = jmethod_find(obj, name);
        if (m >= 0) return jv_func(I, JB_METHOD_BASE + m, jv_retain(obj));
        jv *v = jdict_get(JDICT(obj), name, strlen(name));
        return v ? jv_retain(*v) : jv_undef(name);
    }
    case JV_NS: {
        jv *v = jdict_get(JDICT(obj), name, strlen(name));
        return v ? jv_retain(*v) : jv_undef(name);
    }
    case JV_STR:
    case JV_LIST:
    case JV_TUPLE: {
        int m = jmethod_find(obj, name);
        return m >= 0 ? jv_func(I, JB_METHOD_BASE + m, jv_retain(obj)) : jv_undef(name);
    }
    case JV_LOOP: {
        const jloop *l = JLOOP(obj);
        int64_t i = (int64_t)l->i, n = (int64_t)l->items->n;
        if (!strcmp(name, "index")) return jv_int(i + 1);
        if (!strcmp(name, "index0")) return jv_int(i);
        if (!strcmp(name, "revindex")) return jv_int(n - i);
        if (!strcmp(name, "revindex0")) return jv_int(n - i - 1);
        if (!strcmp(name, "first")) return jv_bool(i == 0);
        if (!strcmp(name, "last")) return jv_bool(i == n - 1);
        if (!strcmp(name, "length")) return jv_int(n);
        if (!strcmp(name, "depth")) return jv_int(1);
        if (!strcmp(name, "depth0")) return jv_int(0);
        if (!strcmp(name, "previtem")) return i > 0 ? jv_retain(l->items->v[i - 1]) : jv_undef(name);
        if (!strcmp(name, "nextitem")) return i + 1 < n ? jv_retain(l->items->v[i + 1]) : jv_undef(name);
        if (!strcmp(name, "cycle")) return jv_func(I, JB_LOOP_CYCLE, jv_int(i));
        return jv_undef(name);
    }
    default:
        return jv_undef(obj.k == JV_UNDEF && obj.uname ? obj.uname : name);
    }
}

jv jget_item(jctx *I, jv obj, jv key) {
    switch (obj.k) {
    case JV_LIST:
    case JV_TUPLE:
        if (is_intlike(key)) {
            int64_t i = ival(key), n = (int64_t)JLIST(obj)->n;
            if (i < 0) i += n;
            return i >= 0 && i < n ? jv_retain(JLIST(obj)->v[i]) : jv_undef(NULL);
        }
        break;
    case JV_STR:
        if (is_intlike(key)) {
            const jstr *s = JSTR(obj);
            int64_t i = ival(key);
            if (i < 0) i += (int64_t)jutf8_len(s->s, s->len);
            if (i < 0) return jv_undef(NULL);
            size_t p = 0;
            for (int64_t k = 0; k < i && p < s->len; k++) jutf8_next(s->s, s->len, &p);
            if (p >= s->len) return jv_undef(NULL);
            size_t st = p;
            jutf8_next(s->s, s->len, &p);
            return jv_str(I, s->s + st, p - st);
        }
        break;
    case JV_DICT:
    case JV_NS:
        if (key.k == JV_STR) {
            jv *v = jdict_get(JDICT(obj), JSTR(key)->s, JSTR(key)->len);
            if (v) return jv_retain(*v);
        }
        break;
    case JV_UNDEF:
        return jv_undef(obj.uname);
    default:
        break;
    }
    if (key.k == JV_STR) return jget_attr(I, obj, JSTR(key)->s);
    return jv_undef(NULL);
}

/* "a.b.0" or an int: Jinja's attribute getter for sort/map/... */
jv jattr_path(jctx *I, jv item, jv attr) {
    if (is_intlike(attr)) return jget_item(I, item, attr);
    const jstr *p = want_str(I, attr, "attribute");
    jv cur = jv_retain(item);
    size_t st = 0;
    for (;;) {
        const char *dot = memchr(p->s + st, '.', p->len - st);
        size_t end = dot ? (size_t)(dot - p->s) : p->len;
        bool digits = end > st;
        for (size_t i = st; i < end; i++) digits = digits && p->s[i] >= '0' && p->s[i] <= '9';
        jv key = digits ? jv_int(strtoll(p->s + st, NULL, 10)) : jv_str(I, p->s + st, end - st);
        jv next = jget_item(I, cur, key);
        jv_release(I, key);
        jv_release(I, cur);
        cur = next;
        if (!dot) return cur;
        st = end + 1;
    }
}
