/* jinja_builtins.c — what templates call: attribute and item access, str /
 * dict / list methods, filters, tests, global functions (range, dict,
 * namespace, raise_exception, strftime_now, loop.cycle), binary operators and
 * "%"-formatting — each with Python / Jinja2 semantics.
 *
 * Attribute access follows Jinja2's environment.getattr: `x.name` tries the
 * Python attribute first (a dict's items/keys/values/get, a str's methods),
 * then the item; `x[key]` tries the item first, then the attribute. A missing
 * attribute is Undefined; unlike Python Jinja2, so is any attribute of an
 * Undefined (lenient, as @huggingface/jinja). Filters and tests are looked up
 * by name when they run, so a template that names one wick lacks still renders
 * as long as that branch is not taken (as Jinja2 does inside conditionals). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <utf8proc.h>

#include "template/jinja_internal.h"

/* ---------------------------------------------------------------- helpers */

static bool argp(const jargv *a, int i, const char *name, jv *out) {
    if (i >= 0 && i < a->npos) {
        *out = a->pos[i];
        return true;
    }
    if (name)
        for (int k = 0; k < a->nkw; k++)
            if (strcmp(a->kwn[k], name) == 0) {
                *out = a->kw[k];
                return true;
            }
    return false;
}

/* borrowed */
static jv arg_or(const jargv *a, int i, const char *name, jv def) {
    jv v;
    return argp(a, i, name, &v) ? v : def;
}

static void max_pos(jctx *I, const jargv *a, int n, const char *what) {
    if (a->npos > n)
        jfail(I, "%s takes at most %d positional argument(s) (%d given)", what, n, a->npos);
}

static bool is_intlike(jv v) { return v.k == JV_INT || v.k == JV_BOOL; }
static int64_t ival(jv v) { return v.k == JV_BOOL ? (int64_t)v.b : v.i; }

static int64_t want_int(jctx *I, jv v, const char *what) {
    if (!is_intlike(v)) jfail(I, "%s must be an integer, not %s", what, jv_type_name(v));
    return ival(v);
}

static const jstr *want_str(jctx *I, jv v, const char *what) {
    if (v.k != JV_STR) jfail(I, "%s must be a string, not %s", what, jv_type_name(v));
    return JSTR(v);
}

static bool is_none(jv v) { return v.k == JV_NONE || v.k == JV_UNDEF; }

/* a tracked scratch buffer (freed by the sweep if an error unwinds) */
static void *scratch(jctx *I, size_t bytes, jstr **owner) {
    *owner = jstr_new(I, 0);
    (*owner)->s = jmem_realloc(I, (*owner)->s, 1, bytes + 1);
    (*owner)->cap = bytes;
    return (*owner)->s;
}

/* start of the character that ends at hi (> lo) */
static size_t back_char(const char *s, size_t lo, size_t hi) {
    size_t k = hi - 1;
    while (k > lo && hi - k < 4 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    size_t j = k;
    jutf8_next(s, hi, &j);
    return j == hi ? k : hi - 1;
}

/* --------------------------------------------------------- string methods */

static bool in_chars(const jstr *chars, int cp) {
    for (size_t i = 0; i < chars->len;)
        if (jutf8_next(chars->s, chars->len, &i) == cp) return true;
    return false;
}

static jv str_strip(jctx *I, const jstr *s, const jstr *chars, bool left, bool right) {
    size_t a = 0, b = s->len;
    if (left)
        while (a < b) {
            size_t j = a;
            int cp = jutf8_next(s->s, b, &j);
            if (chars ? in_chars(chars, cp) : jpy_isspace((uint32_t)cp)) a = j;
            else break;
        }
    if (right)
        while (b > a) {
            size_t k = back_char(s->s, a, b), j = k;
            int cp = jutf8_next(s->s, b, &j);
            if (chars ? in_chars(chars, cp) : jpy_isspace((uint32_t)cp)) b = k;
            else break;
        }
    if (a == 0 && b == s->len) return jv_retain(jv_strobj((jstr *)s));
    return jv_str(I, s->s + a, b - a);
}

static bool is_cased(int cp) {
    int c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LL || c == UTF8PROC_CATEGORY_LT;
}

enum { CASE_UPPER, CASE_LOWER, CASE_SWAP, CASE_TITLE, CASE_CAPITALIZE, CASE_JTITLE };

static bool jtitle_sep(int cp) {
    return cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || jpy_isspace((uint32_t)cp);
}

static jv str_case(jctx *I, const jstr *s, int mode) {
    jstr *o = jstr_new(I, s->len);
    bool prev_cased = false, first = true, at_word = true;
    for (size_t i = 0; i < s->len;) {
        int cp = jutf8_next(s->s, s->len, &i), m = cp;
        switch (mode) {
        case CASE_UPPER: m = utf8proc_toupper(cp); break;
        case CASE_LOWER: m = utf8proc_tolower(cp); break;
        case CASE_SWAP: {
            int c = utf8proc_category(cp);
            m = c == UTF8PROC_CATEGORY_LU ? utf8proc_tolower(cp)
                : c == UTF8PROC_CATEGORY_LL ? utf8proc_toupper(cp) : cp;
            break;
        }
        case CASE_TITLE: /* str.title() */
            m = prev_cased ? utf8proc_tolower(cp) : utf8proc_totitle(cp);
            prev_cased = is_cased(cp);
            break;
        case CASE_CAPITALIZE:
            m = first ? utf8proc_totitle(cp) : utf8proc_tolower(cp);
            break;
        case CASE_JTITLE: /* Jinja's |title: words split at whitespace - ( { [ < */
            if (jtitle_sep(cp)) {
                at_word = true;
            } else {
                m = at_word ? utf8proc_toupper(cp) : utf8proc_tolower(cp);
                at_word = false;
            }
            break;
        }
        first = false;
        char buf[4];
        jstr_append(I, o, buf, (size_t)jutf8_put((uint32_t)m, buf));
    }
    return jv_strobj(o);
}

/* Python str.split / rsplit. sep NULL = runs of whitespace. */
static jv str_split(jctx *I, const jstr *s, const jstr *sep, int64_t maxsplit, bool from_right) {
    jlist *l = jlist_new(I, 0);
    const char *p = s->s;
    size_t n = s->len;
    if (sep && sep->len == 0) jfail(I, "empty separator");
    if (!from_right) {
        if (sep) {
            size_t st = 0;
            for (int64_t k = 0; maxsplit < 0 || k < maxsplit; k++) {
                const char *hit = memmem(p + st, n - st, sep->s, sep->len);
                if (!hit) break;
                size_t at = (size_t)(hit - p);
                jlist_push(I, l, jv_str(I, p + st, at - st));
                st = at + sep->len;
            }
            jlist_push(I, l, jv_str(I, p + st, n - st));
        } else {
            size_t i = 0;
            for (int64_t k = 0;; k++) {
                while (i < n) { /* skip whitespace */
                    size_t j = i;
                    if (!jpy_isspace((uint32_t)jutf8_next(p, n, &j))) break;
                    i = j;
                }
                if (i >= n) break;
                if (maxsplit >= 0 && k >= maxsplit) {
                    jlist_push(I, l, jv_str(I, p + i, n - i));
                    break;
                }
                size_t st = i;
                while (i < n) {
                    size_t j = i;
                    if (jpy_isspace((uint32_t)jutf8_next(p, n, &j))) break;
                    i = j;
                }
                jlist_push(I, l, jv_str(I, p + st, i - st));
            }
        }
        return jv_list_take(l, false);
    }
    /* rsplit: collect from the right, then reverse */
    if (sep) {
        size_t end = n;
        for (int64_t k = 0; maxsplit < 0 || k < maxsplit; k++) {
            size_t at = SIZE_MAX;
            if (end >= sep->len)
                for (size_t q = end - sep->len + 1; q-- > 0;)
                    if (memcmp(p + q, sep->s, sep->len) == 0) {
                        at = q;
                        break;
                    }
            if (at == SIZE_MAX) break;
            jlist_push(I, l, jv_str(I, p + at + sep->len, end - at - sep->len));
            end = at;
        }
        jlist_push(I, l, jv_str(I, p, end));
    } else {
        size_t i = n;
        for (int64_t k = 0;; k++) {
            while (i > 0) {
                size_t b = back_char(p, 0, i), j = b;
                if (!jpy_isspace((uint32_t)jutf8_next(p, i, &j))) break;
                i = b;
            }
            if (i == 0) break;
            if (maxsplit >= 0 && k >= maxsplit) {
                jlist_push(I, l, jv_str(I, p, i));
                break;
            }
            size_t end = i;
            while (i > 0) {
                size_t b = back_char(p, 0, i), j = b;
                if (jpy_isspace((uint32_t)jutf8_next(p, i, &j))) break;
                i = b;
            }
            jlist_push(I, l, jv_str(I, p + i, end - i));
        }
    }
    for (size_t a = 0, b = l->n ? l->n - 1 : 0; a < b; a++, b--) {
        jv t = l->v[a];
        l->v[a] = l->v[b];
        l->v[b] = t;
    }
    return jv_list_take(l, false);
}

static bool is_line_break(int cp) {
    return cp == '\n' || cp == '\r' || cp == '\v' || cp == '\f' || cp == 0x1C || cp == 0x1D ||
           cp == 0x1E || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

static jv str_splitlines(jctx *I, const jstr *s, bool keepends) {
    jlist *l = jlist_new(I, 0);
    size_t i = 0, st = 0;
    while (i < s->len) {
        size_t at = i;
        int cp = jutf8_next(s->s, s->len, &i);
        if (!is_line_break(cp)) continue;
        if (cp == '\r' && i < s->len && s->s[i] == '\n') i++;
        jlist_push(I, l, jv_str(I, s->s + st, (keepends ? i : at) - st));
        st = i;
    }
    if (st < s->len) jlist_push(I, l, jv_str(I, s->s + st, s->len - st));
    return jv_list_take(l, false);
}

static jv str_replace(jctx *I, const jstr *s, const jstr *old, const jstr *new_, int64_t count) {
    jstr *o = jstr_new(I, s->len);
    if (old->len == 0) {
        size_t i = 0;
        int64_t k = 0;
        while (count < 0 || k < count) {
            jstr_append(I, o, new_->s, new_->len);
            k++;
            if (i >= s->len) break;
            size_t st = i;
            jutf8_next(s->s, s->len, &i);
            jstr_append(I, o, s->s + st, i - st);
        }
        jstr_append(I, o, s->s + i, s->len - i);
        return jv_strobj(o);
    }
    size_t st = 0;
    for (int64_t k = 0; count < 0 || k < count; k++) {
        const char *hit = memmem(s->s + st, s->len - st, old->s, old->len);
        if (!hit) break;
        size_t at = (size_t)(hit - s->s);
        jstr_append(I, o, s->s + st, at - st);
        jstr_append(I, o, new_->s, new_->len);
        st = at + old->len;
    }
    jstr_append(I, o, s->s + st, s->len - st);
    return jv_strobj(o);
}

static bool str_affix(jctx *I, const jstr *s, jv affix, bool end, const char *what) {
    if (affix.k == JV_STR) {
        const jstr *a = JSTR(affix);
        if (a->len > s->len) return false;
        return memcmp(end ? s->s + s->len - a->len : s->s, a->s, a->len) == 0;
    }
    if (affix.k == JV_TUPLE || affix.k == JV_LIST) {
        for (size_t i = 0; i < JLIST(affix)->n; i++) {
            jv x = JLIST(affix)->v[i];
            if (x.k != JV_STR) jfail(I, "tuple for %s must only contain str, not %s", what, jv_type_name(x));
            if (str_affix(I, s, x, end, what)) return true;
        }
        return false;
    }
    jfail(I, "%s first arg must be str or a tuple of str, not %s", what, jv_type_name(affix));
}

typedef bool (*cp_pred)(int cp);
static bool p_digit(int cp) { return utf8proc_category(cp) == UTF8PROC_CATEGORY_ND; }
static bool p_alpha(int cp) {
    int c = utf8proc_category(cp);
    return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}
static bool p_numeric(int cp) {
    int c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}
static bool p_alnum(int cp) { return p_alpha(cp) || p_numeric(cp); }
static bool p_space(int cp) { return jpy_isspace((uint32_t)cp); }

static bool str_all(const jstr *s, cp_pred p) {
    if (s->len == 0) return false;
    for (size_t i = 0; i < s->len;)
        if (!p(jutf8_next(s->s, s->len, &i))) return false;
    return true;
}

/* islower / isupper: some cased character, and every cased one is lower/upper */
static bool str_case_is(const jstr *s, bool upper) {
    bool cased = false;
    for (size_t i = 0; i < s->len;) {
        int cp = jutf8_next(s->s, s->len, &i), c = utf8proc_category(cp);
        if (c == UTF8PROC_CATEGORY_LU || c == UTF8PROC_CATEGORY_LT) {
            if (!upper) return false;
            cased = true;
        } else if (c == UTF8PROC_CATEGORY_LL) {
            if (upper) return false;
            cased = true;
        }
    }
    return cased;
}

static int64_t cp_index(const jstr *s, size_t byte_off) { return (int64_t)jutf8_len(s->s, byte_off); }

typedef jv (*method_fn)(jctx *I, jv self, jargv *a);

#define SELF_S JSTR(self)

static jv m_upper(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "upper()"); return str_case(I, SELF_S, CASE_UPPER); }
static jv m_lower(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "lower()"); return str_case(I, SELF_S, CASE_LOWER); }
static jv m_title(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "title()"); return str_case(I, SELF_S, CASE_TITLE); }
static jv m_capitalize(jctx *I, jv self, jargv *a) {
    max_pos(I, a, 0, "capitalize()");
    return str_case(I, SELF_S, CASE_CAPITALIZE);
}
static jv m_swapcase(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "swapcase()"); return str_case(I, SELF_S, CASE_SWAP); }

static jv strip_common(jctx *I, jv self, jargv *a, bool l, bool r) {
    max_pos(I, a, 1, "strip()");
    jv c = arg_or(a, 0, "chars", jv_none());
    const jstr *chars = is_none(c) ? NULL : want_str(I, c, "strip arg");
    return str_strip(I, SELF_S, chars, l, r);
}
static jv m_strip(jctx *I, jv self, jargv *a) { return strip_common(I, self, a, true, true); }
static jv m_lstrip(jctx *I, jv self, jargv *a) { return strip_common(I, self, a, true, false); }
static jv m_rstrip(jctx *I, jv self, jargv *a) { return strip_common(I, self, a, false, true); }

static jv split_common(jctx *I, jv self, jargv *a, bool right) {
    max_pos(I, a, 2, "split()");
    jv sep = arg_or(a, 0, "sep", jv_none());
    jv mx = arg_or(a, 1, "maxsplit", jv_int(-1));
    return str_split(I, SELF_S, is_none(sep) ? NULL : want_str(I, sep, "sep"), want_int(I, mx, "maxsplit"), right);
}
static jv m_split(jctx *I, jv self, jargv *a) { return split_common(I, self, a, false); }
static jv m_rsplit(jctx *I, jv self, jargv *a) { return split_common(I, self, a, true); }
static jv m_splitlines(jctx *I, jv self, jargv *a) {
    return str_splitlines(I, SELF_S, jv_truthy(arg_or(a, 0, "keepends", jv_bool(false))));
}
static jv m_startswith(jctx *I, jv self, jargv *a) {
    jv p;
    if (!argp(a, 0, NULL, &p)) jfail(I, "startswith() takes at least 1 argument");
    return jv_bool(str_affix(I, SELF_S, p, false, "startswith"));
}
static jv m_endswith(jctx *I, jv self, jargv *a) {
    jv p;
    if (!argp(a, 0, NULL, &p)) jfail(I, "endswith() takes at least 1 argument");
    return jv_bool(str_affix(I, SELF_S, p, true, "endswith"));
}
static jv m_replace(jctx *I, jv self, jargv *a) {
    jv o, n;
    if (!argp(a, 0, NULL, &o) || !argp(a, 1, NULL, &n)) jfail(I, "replace() takes at least 2 arguments");
    jv c = arg_or(a, 2, "count", jv_int(-1));
    return str_replace(I, SELF_S, want_str(I, o, "replace() argument 1"), want_str(I, n, "replace() argument 2"),
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
        return jv_int(hit ? cp_index(s, (size_t)(hit - s->s)) : -1);
    }
    if (t->len > s->len) return jv_int(-1);
    for (size_t q = s->len - t->len + 1; q-- > 0;)
        if (memcmp(s->s + q, t->s, t->len) == 0) return jv_int(cp_index(s, q));
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
static jv m_isdigit(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_all(SELF_S, p_digit)); }
static jv m_isalpha(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_all(SELF_S, p_alpha)); }
static jv m_isalnum(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_all(SELF_S, p_alnum)); }
static jv m_isnumeric(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_all(SELF_S, p_numeric)); }
static jv m_isspace(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_all(SELF_S, p_space)); }
static jv m_islower(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_case_is(SELF_S, false)); }
static jv m_isupper(jctx *I, jv self, jargv *a) { (void)I; (void)a; return jv_bool(str_case_is(SELF_S, true)); }
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
static jv dict_pairs(jctx *I, const jdict *d) {
    jlist *l = jlist_new(I, d->n);
    for (size_t i = 0; i < d->n; i++) {
        jlist *p = jlist_new(I, 2);
        jlist_push(I, p, jv_retain(jv_strobj(d->keys[i])));
        jlist_push(I, p, jv_retain(d->vals[i]));
        jlist_push(I, l, jv_list_take(p, true));
    }
    return jv_list_take(l, false);
}
static jv m_items(jctx *I, jv self, jargv *a) { max_pos(I, a, 0, "items()"); return dict_pairs(I, JDICT(self)); }
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

static int find_method(jv obj, const char *name) {
    int recv = obj.k == JV_TUPLE ? JV_LIST : obj.k;
    if (recv != JV_STR && recv != JV_DICT && recv != JV_LIST) return -1;
    for (int i = 0; i < N_METHODS; i++)
        if (METHODS[i].recv == recv && strcmp(METHODS[i].name, name) == 0) return i;
    return -1;
}

bool jcall_method(jctx *I, jv obj, const char *name, jargv *args, jv *out) {
    int m = find_method(obj, name);
    if (m < 0) return false;
    *out = METHODS[m].fn(I, obj, args);
    return true;
}

/* ------------------------------------------------------- attribute access */

jv jget_attr(jctx *I, jv obj, const char *name) {
    switch (obj.k) {
    case JV_DICT: {
        int m = find_method(obj, name);
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
        int m = find_method(obj, name);
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
static jv attr_path(jctx *I, jv item, jv attr) {
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

/* ---------------------------------------------------------------- operators */

static jv repeat(jctx *I, jv seq, int64_t times) {
    if (times < 0) times = 0;
    if (seq.k == JV_STR) {
        const jstr *s = JSTR(seq);
        if (s->len && (uint64_t)times > I->lim.max_string / s->len)
            jfail(I, "string longer than the limit of %zu bytes", I->lim.max_string);
        jstr *o = jstr_new(I, s->len * (size_t)times);
        for (int64_t i = 0; i < times; i++) jstr_append(I, o, s->s, s->len);
        return jv_strobj(o);
    }
    const jlist *l = JLIST(seq);
    if (l->n && (uint64_t)times > (I->lim.max_memory / sizeof(jv)) / l->n) jfail(I, "list too long");
    jlist *o = jlist_new(I, l->n * (size_t)times);
    for (int64_t i = 0; i < times; i++) {
        jstep(I, l->n + 1);
        for (size_t k = 0; k < l->n; k++) jlist_push(I, o, jv_retain(l->v[k]));
    }
    return jv_list_take(o, seq.k == JV_TUPLE);
}

static const char *OP_SYM[] = {"+", "-", "*", "/", "//", "%", "**", "~"};

static _Noreturn void bad_operands(jctx *I, int op, jv a, jv b) {
    if (a.k == JV_UNDEF) jfail_undefined(I, a);
    if (b.k == JV_UNDEF) jfail_undefined(I, b);
    jfail(I, "unsupported operand type(s) for %s: '%s' and '%s'", OP_SYM[op], jv_type_name(a),
          jv_type_name(b));
}

static double fnum(jv v) { return v.k == JV_FLOAT ? v.f : (double)ival(v); }

static jv int_pow(jctx *I, int64_t base, int64_t e) {
    int64_t r = 1;
    while (e > 0) {
        if (e & 1)
            if (__builtin_mul_overflow(r, base, &r)) jfail(I, "integer overflow");
        e >>= 1;
        if (e && __builtin_mul_overflow(base, base, &base)) jfail(I, "integer overflow");
    }
    return jv_int(r);
}

jv jbinop(jctx *I, int op, jv a, jv b) {
    if (op == JOP_CONCAT) {
        jstr *o = jstr_new(I, 32);
        jv_write_str(I, o, a);
        jv_write_str(I, o, b);
        return jv_strobj(o);
    }
    bool an = a.k == JV_INT || a.k == JV_BOOL || a.k == JV_FLOAT;
    bool bn = b.k == JV_INT || b.k == JV_BOOL || b.k == JV_FLOAT;
    if (an && bn) {
        bool fl = a.k == JV_FLOAT || b.k == JV_FLOAT;
        int64_t x = fl ? 0 : ival(a), y = fl ? 0 : ival(b), r;
        double p = fnum(a), q = fnum(b);
        switch (op) {
        case JOP_ADD:
            if (fl) return jv_float(p + q);
            if (__builtin_add_overflow(x, y, &r)) jfail(I, "integer overflow");
            return jv_int(r);
        case JOP_SUB:
            if (fl) return jv_float(p - q);
            if (__builtin_sub_overflow(x, y, &r)) jfail(I, "integer overflow");
            return jv_int(r);
        case JOP_MUL:
            if (fl) return jv_float(p * q);
            if (__builtin_mul_overflow(x, y, &r)) jfail(I, "integer overflow");
            return jv_int(r);
        case JOP_DIV:
            if (q == 0) jfail(I, "division by zero");
            return jv_float(p / q);
        case JOP_FLOORDIV:
        case JOP_MOD:
            if (q == 0) jfail(I, op == JOP_MOD ? "modulo by zero" : "integer division or modulo by zero");
            if (!fl) {
                if (x == INT64_MIN && y == -1) {
                    if (op == JOP_MOD) return jv_int(0);
                    jfail(I, "integer overflow");
                }
                int64_t d = x / y, m = x % y;
                if (m != 0 && ((m < 0) != (y < 0))) {
                    d--;
                    m += y;
                }
                return jv_int(op == JOP_MOD ? m : d);
            } else {
                double m = fmod(p, q);
                double d = (p - m) / q;
                if (m != 0 && ((q < 0) != (m < 0))) {
                    m += q;
                    d -= 1.0;
                }
                if (op == JOP_MOD) return jv_float(m == 0 ? copysign(0.0, q) : m);
                double fd = floor(d);
                if (d - fd > 0.5) fd += 1.0;
                return jv_float(d == 0 ? copysign(0.0, p / q) : fd);
            }
        case JOP_POW:
            if (!fl && y >= 0) return int_pow(I, x, y);
            if (p == 0 && q < 0) jfail(I, "0.0 cannot be raised to a negative power");
            if (p < 0 && q != floor(q)) jfail(I, "negative number cannot be raised to a fractional power");
            return jv_float(pow(p, q));
        default: break;
        }
    }
    switch (op) {
    case JOP_ADD:
        if (a.k == JV_STR && b.k == JV_STR) {
            jstr *o = jstr_new(I, JSTR(a)->len + JSTR(b)->len);
            jstr_append(I, o, JSTR(a)->s, JSTR(a)->len);
            jstr_append(I, o, JSTR(b)->s, JSTR(b)->len);
            return jv_strobj(o);
        }
        if ((a.k == JV_LIST || a.k == JV_TUPLE) && a.k == b.k) {
            jlist *o = jlist_new(I, JLIST(a)->n + JLIST(b)->n);
            jstep(I, JLIST(a)->n + JLIST(b)->n);
            for (size_t i = 0; i < JLIST(a)->n; i++) jlist_push(I, o, jv_retain(JLIST(a)->v[i]));
            for (size_t i = 0; i < JLIST(b)->n; i++) jlist_push(I, o, jv_retain(JLIST(b)->v[i]));
            return jv_list_take(o, a.k == JV_TUPLE);
        }
        break;
    case JOP_MUL:
        if ((a.k == JV_STR || a.k == JV_LIST || a.k == JV_TUPLE) && is_intlike(b)) return repeat(I, a, ival(b));
        if ((b.k == JV_STR || b.k == JV_LIST || b.k == JV_TUPLE) && is_intlike(a)) return repeat(I, b, ival(a));
        break;
    case JOP_MOD:
        if (a.k == JV_STR) return jstr_mod_format(I, a, b);
        break;
    default: break;
    }
    bad_operands(I, op, a, b);
}

/* ---- "%" formatting ---- */

jv jstr_mod_format(jctx *I, jv fmtv, jv args) {
    const jstr *fmt = JSTR(fmtv);
    jv one[1] = {args};
    const jv *list = one;
    size_t nargs = 1, used = 0;
    const jdict *map = NULL;
    if (args.k == JV_TUPLE) {
        list = JLIST(args)->v;
        nargs = JLIST(args)->n;
    } else if (args.k == JV_DICT) {
        map = JDICT(args);
    }
    jstr *o = jstr_new(I, fmt->len + 16);
    size_t i = 0;
    while (i < fmt->len) {
        const char *pc = memchr(fmt->s + i, '%', fmt->len - i);
        size_t at = pc ? (size_t)(pc - fmt->s) : fmt->len;
        jstr_append(I, o, fmt->s + i, at - i);
        if (!pc) break;
        i = at + 1;
        if (i >= fmt->len) jfail(I, "incomplete format");
        jv v;
        bool have_key = false;
        if (fmt->s[i] == '(') {
            const char *close = memchr(fmt->s + i, ')', fmt->len - i);
            if (!close) jfail(I, "incomplete format key");
            if (!map) jfail(I, "format requires a mapping");
            size_t ks = i + 1, ke = (size_t)(close - fmt->s);
            jv *p = jdict_get(map, fmt->s + ks, ke - ks);
            if (!p) jfail(I, "format key '%.*s' not found", (int)(ke - ks), fmt->s + ks);
            v = *p;
            have_key = true;
            i = ke + 1;
        }
        char flags[8] = "";
        size_t nf = 0;
        while (i < fmt->len && strchr("-+ 0#", fmt->s[i]) && nf < 6) flags[nf++] = fmt->s[i++];
        flags[nf] = 0;
        int width = -1, prec = -1;
        if (i < fmt->len && fmt->s[i] == '*') jfail(I, "'*' width is not supported in format strings");
        while (i < fmt->len && fmt->s[i] >= '0' && fmt->s[i] <= '9') {
            width = (width < 0 ? 0 : width) * 10 + (fmt->s[i++] - '0');
            if (width > 100000) jfail(I, "format width too large");
        }
        if (i < fmt->len && fmt->s[i] == '.') {
            i++;
            prec = 0;
            while (i < fmt->len && fmt->s[i] >= '0' && fmt->s[i] <= '9') {
                prec = prec * 10 + (fmt->s[i++] - '0');
                if (prec > 1000) jfail(I, "format precision too large");
            }
        }
        if (i >= fmt->len) jfail(I, "incomplete format");
        char conv = fmt->s[i++];
        if (conv == '%') {
            jstr_puts(I, o, "%");
            continue;
        }
        if (!have_key) {
            if (map && nargs == 1 && list == one) v = args;
            else if (used < nargs) v = list[used++];
            else jfail(I, "not enough arguments for format string");
        }
        char spec[32], buf[1200];
        jstr *tmp = NULL;
        switch (conv) {
        case 's':
        case 'r': {
            tmp = jstr_new(I, 16);
            if (conv == 's') jv_write_str(I, tmp, v);
            else jv_write_repr(I, tmp, v, 0);
            size_t len = tmp->len;
            if (prec >= 0) { /* truncate to prec characters */
                size_t p = 0;
                for (int k = 0; k < prec && p < tmp->len; k++) jutf8_next(tmp->s, tmp->len, &p);
                len = p;
            }
            size_t cps = jutf8_len(tmp->s, len);
            bool left = strchr(flags, '-') != NULL;
            if (!left)
                for (int k = (int)cps; k < width; k++) jstr_puts(I, o, " ");
            jstr_append(I, o, tmp->s, len);
            if (left)
                for (int k = (int)cps; k < width; k++) jstr_puts(I, o, " ");
            jv_release(I, jv_strobj(tmp));
            continue;
        }
        case 'd':
        case 'i':
        case 'u':
        case 'x':
        case 'X':
        case 'o': {
            int64_t x;
            if (is_intlike(v)) x = ival(v);
            else if (v.k == JV_FLOAT && conv != 'x' && conv != 'X' && conv != 'o') {
                if (!isfinite(v.f) || fabs(v.f) >= 9.2e18) jfail(I, "cannot convert float to integer");
                x = (int64_t)v.f;
            } else {
                jfail(I, "%%%c format: a real number is required, not %s", conv, jv_type_name(v));
            }
            char c = conv == 'i' || conv == 'u' ? 'd' : conv;
            if (prec >= 0) snprintf(spec, sizeof spec, "%%%s%d.%d%s%c", flags, width < 0 ? 0 : width, prec, "ll", c);
            else snprintf(spec, sizeof spec, "%%%s%d%s%c", flags, width < 0 ? 0 : width, "ll", c);
            if (c == 'd') snprintf(buf, sizeof buf, spec, (long long)x);
            else if (x < 0) {
                snprintf(spec, sizeof spec, "-%%%s%s%c", flags, "ll", c);
                snprintf(buf, sizeof buf, spec, (unsigned long long)(-(x + 1)) + 1ULL);
            } else snprintf(buf, sizeof buf, spec, (unsigned long long)x);
            break;
        }
        case 'f':
        case 'F':
        case 'e':
        case 'E':
        case 'g':
        case 'G': {
            if (!(is_intlike(v) || v.k == JV_FLOAT))
                jfail(I, "must be real number, not %s", jv_type_name(v));
            snprintf(spec, sizeof spec, "%%%s%d.%d%c", flags, width < 0 ? 0 : width, prec < 0 ? 6 : prec, conv);
            snprintf(buf, sizeof buf, spec, fnum(v));
            break;
        }
        case 'c': {
            uint32_t cp;
            if (is_intlike(v)) cp = (uint32_t)ival(v);
            else if (v.k == JV_STR && jutf8_len(JSTR(v)->s, JSTR(v)->len) == 1) {
                size_t p = 0;
                cp = (uint32_t)jutf8_next(JSTR(v)->s, JSTR(v)->len, &p);
            } else jfail(I, "%%c requires int or char");
            if (cp > 0x10FFFF) jfail(I, "%%c arg not in range(0x110000)");
            buf[jutf8_put(cp, buf)] = 0;
            break;
        }
        default:
            jfail(I, "unsupported format character '%c'", conv);
        }
        jstr_puts(I, o, buf);
    }
    /* Python checks this only for tuples and single non-sequence values */
    if (!map && args.k != JV_LIST && args.k != JV_UNDEF && used < nargs)
        jfail(I, "not all arguments converted during string formatting");
    return jv_strobj(o);
}

/* ------------------------------------------------------------------ filters */

typedef jv (*filter_fn)(jctx *I, jv v, jargv *a);

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
        int m = find_method(v, name->s);
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
    jv r = str_case(I, JSTR(s), mode);
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
            keys[i] = attr_path(I, items->v[i], attribute);
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
    jv pairs = dict_pairs(I, JDICT(v));
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
    jv lines = str_splitlines(I, s, false);
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
    return dict_pairs(I, JDICT(v));
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
            jv x = attr_path(I, l->v[i], attr);
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
    jv r = str_replace(I, JSTR(s), JSTR(os), JSTR(ns), is_none(c) ? -1 : want_int(I, c, "count"));
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
        jv x = is_none(attr) ? jv_retain(l->v[i]) : attr_path(I, l->v[i], attr);
        jv r = jbinop(I, JOP_ADD, acc, x);
        jv_release(I, x);
        jv_release(I, acc);
        acc = r;
    }
    jobj_release(I, &l->h);
    return acc;
}

static jv ci_key(jctx *I, jv x, bool ci) { /* lower-cased strings for case-insensitive compare */
    return ci && x.k == JV_STR ? str_case(I, JSTR(x), CASE_LOWER) : jv_retain(x);
}

static jv f_unique(jctx *I, jv v, jargv *a) {
    bool cs = jv_truthy(arg_or(a, 0, "case_sensitive", jv_bool(false)));
    jv attr = arg_or(a, 1, "attribute", jv_none());
    jlist *l = jv_iterate(I, v), *out = jlist_new(I, 0), *seen = jlist_new(I, 0);
    for (size_t i = 0; i < l->n; i++) {
        jv k0 = is_none(attr) ? jv_retain(l->v[i]) : attr_path(I, l->v[i], attr);
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
        jv k0 = is_none(attr) ? jv_retain(l->v[i]) : attr_path(I, l->v[i], attr);
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
    jv r = str_strip(I, JSTR(s), is_none(c) ? NULL : want_str(I, c, "chars"), true, true);
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
        bool w = cp == '_' || p_alnum(cp);
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
    filter_fn fn;
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

static filter_fn find_filter(const char *name) {
    for (size_t i = 0; i < sizeof FILTERS / sizeof FILTERS[0]; i++)
        if (!strcmp(FILTERS[i].name, name)) return FILTERS[i].fn;
    return NULL;
}


jv japply_filter(jctx *I, const jnode *fnode, jv operand, jframe *f) {
    jargv args;
    jeval_args(I, fnode->args, f, &args);
    jsetpos(I, fnode);
    filter_fn fn = find_filter(fnode->name);
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
            jv x = attr_path(I, l->v[i], attr);
            if (x.k == JV_UNDEF && has_def) x = jv_retain(def);
            jlist_push(I, out, x);
        }
    } else {
        jv name;
        if (!argp(a, 0, NULL, &name)) jfail(I, "map needs a filter name or attribute=");
        filter_fn fn = find_filter(want_str(I, name, "filter name")->s);
        if (!fn) jfail(I, "no filter named '%s'", JSTR(name)->s);
        jargv rest;
        shift_args(a, 1, &rest);
        for (size_t i = 0; i < l->n; i++) jlist_push(I, out, fn(I, l->v[i], &rest));
    }
    jobj_release(I, &l->h);
    return jv_list_take(out, false);
}

/* ------------------------------------------------------------------- tests */

typedef bool (*test_fn)(jctx *I, jv v, jargv *a);

static jv need_arg(jctx *I, const jargv *a, const char *test) {
    jv x;
    if (!argp(a, 0, NULL, &x)) jfail(I, "test '%s' needs an argument", test);
    return x;
}

static bool t_boolean(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_BOOL; }
static bool t_callable(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_FUNC || v.k == JV_MACRO; }
static bool t_defined(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k != JV_UNDEF; }
static bool t_undefined(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_UNDEF; }
static bool t_none(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_NONE; }
static bool t_false(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_BOOL && !v.b; }
static bool t_true(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_BOOL && v.b; }
static bool t_integer(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_INT; }
static bool t_float(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_FLOAT; }
static bool t_number(jctx *I, jv v, jargv *a) {
    (void)I; (void)a;
    return v.k == JV_INT || v.k == JV_FLOAT || v.k == JV_BOOL;
}
static bool t_string(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_STR; }
static bool t_mapping(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_DICT; }
static bool t_iterable(jctx *I, jv v, jargv *a) {
    (void)I; (void)a;
    return v.k == JV_STR || v.k == JV_LIST || v.k == JV_TUPLE || v.k == JV_DICT || v.k == JV_UNDEF;
}
static bool t_escaped(jctx *I, jv v, jargv *a) { (void)I; (void)v; (void)a; return false; }
/* value % 2 == want, with Python's % */
static bool mod2_is(jctx *I, jv v, int want) {
    jv r = jbinop(I, JOP_MOD, v, jv_int(2));
    return r.k == JV_FLOAT ? r.f == (double)want : r.i == want;
}
static bool t_odd(jctx *I, jv v, jargv *a) { (void)a; return mod2_is(I, v, 1); }
static bool t_even(jctx *I, jv v, jargv *a) { (void)a; return mod2_is(I, v, 0); }
static bool t_divisibleby(jctx *I, jv v, jargv *a) {
    jv r = jbinop(I, JOP_MOD, v, need_arg(I, a, "divisibleby"));
    bool z = !jv_truthy(r);
    return z;
}
static bool t_eq(jctx *I, jv v, jargv *a) { return jv_eq(I, v, need_arg(I, a, "=="), 0); }
static bool t_ne(jctx *I, jv v, jargv *a) { return !jv_eq(I, v, need_arg(I, a, "!="), 0); }
static bool t_lt(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, "<"), false, 0) < 0; }
static bool t_le(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, "<="), false, 0) <= 0; }
static bool t_gt(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, ">"), false, 0) > 0; }
static bool t_ge(jctx *I, jv v, jargv *a) { return jv_cmp(I, v, need_arg(I, a, ">="), false, 0) >= 0; }
static bool t_in(jctx *I, jv v, jargv *a) { return jv_contains(I, need_arg(I, a, "in"), v); }
static bool t_sameas(jctx *I, jv v, jargv *a) {
    jv o = need_arg(I, a, "sameas");
    if (JV_IS_OBJ(v) || JV_IS_OBJ(o)) return v.k == o.k && v.o == o.o;
    return v.k == o.k && jv_eq(I, v, o, 0);
}
static bool t_lower(jctx *I, jv v, jargv *a) {
    (void)a;
    jv s = jv_to_str(I, v);
    bool r = str_case_is(JSTR(s), false);
    jv_release(I, s);
    return r;
}
static bool t_upper(jctx *I, jv v, jargv *a) {
    (void)a;
    jv s = jv_to_str(I, v);
    bool r = str_case_is(JSTR(s), true);
    jv_release(I, s);
    return r;
}
static bool t_filter(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_STR && find_filter(JSTR(v)->s); }
static bool t_test(jctx *I, jv v, jargv *a);

static const struct {
    const char *name;
    test_fn fn;
} TESTS[] = {
    {"boolean", t_boolean}, {"callable", t_callable}, {"defined", t_defined},
    {"undefined", t_undefined}, {"none", t_none}, {"false", t_false}, {"true", t_true},
    {"integer", t_integer}, {"float", t_float}, {"number", t_number}, {"string", t_string},
    {"mapping", t_mapping}, {"iterable", t_iterable}, {"sequence", t_iterable},
    {"escaped", t_escaped}, {"odd", t_odd}, {"even", t_even}, {"divisibleby", t_divisibleby},
    {"eq", t_eq}, {"equalto", t_eq}, {"==", t_eq}, {"ne", t_ne}, {"!=", t_ne},
    {"lt", t_lt}, {"lessthan", t_lt}, {"<", t_lt}, {"le", t_le}, {"<=", t_le},
    {"gt", t_gt}, {"greaterthan", t_gt}, {">", t_gt}, {"ge", t_ge}, {">=", t_ge},
    {"in", t_in}, {"sameas", t_sameas}, {"lower", t_lower}, {"upper", t_upper},
    {"filter", t_filter}, {"test", t_test},
};

static test_fn find_test(const char *name) {
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++)
        if (!strcmp(TESTS[i].name, name)) return TESTS[i].fn;
    return NULL;
}

static bool t_test(jctx *I, jv v, jargv *a) { (void)I; (void)a; return v.k == JV_STR && find_test(JSTR(v)->s); }


/* tests that take an argument */
static bool test_has_arg(test_fn fn) {
    return fn == t_divisibleby || fn == t_eq || fn == t_ne || fn == t_lt || fn == t_le || fn == t_gt ||
           fn == t_ge || fn == t_in || fn == t_sameas;
}

bool japply_test(jctx *I, const jnode *tnode, jv operand, jframe *f) {
    jargv args;
    jeval_args(I, tnode->args, f, &args);
    jsetpos(I, tnode);
    test_fn fn = find_test(tnode->name);
    if (!fn) jfail(I, "no test named '%s'", tnode->name);
    if (args.npos + args.nkw > (test_has_arg(fn) ? 1 : 0))
        jfail(I, "test '%s' takes %s", tnode->name, test_has_arg(fn) ? "one argument" : "no arguments");
    bool r = fn(I, operand, &args);
    jargv_release(I, &args);
    return r;
}

bool jtest_by_name(jctx *I, const char *name, jv operand, const jv *args, int nargs) {
    test_fn fn = find_test(name);
    if (!fn) jfail(I, "no test named '%s'", name);
    jargv a = {.npos = 0};
    for (int i = 0; i < nargs && i < JINJA_MAX_ARGS; i++) a.pos[a.npos++] = args[i];
    return fn(I, operand, &a);
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
    test_fn fn = NULL;
    if (has_test) {
        fn = find_test(want_str(I, tname, "test name")->s);
        if (!fn) jfail(I, "no test named '%s'", JSTR(tname)->s);
    }
    jargv rest;
    shift_args(a, base + 1, &rest);
    jlist *l = jv_iterate(I, v), *out = jlist_new(I, 0);
    for (size_t i = 0; i < l->n; i++) {
        jv x = attr_mode ? attr_path(I, l->v[i], attr) : jv_retain(l->v[i]);
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
    if (fn->id >= JB_METHOD_BASE && fn->id < JB_METHOD_BASE + N_METHODS)
        return METHODS[fn->id - JB_METHOD_BASE].fn(I, fn->self, a);
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
