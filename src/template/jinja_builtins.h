/* jinja_builtins.h — shared by the files of the template builtins
 * (jinja_str.c, jinja_methods.c, jinja_ops.c, jinja_filters.c, jinja_tests.c,
 * jinja_globals.c): argument helpers, and what one of them calls in another.
 * Not a public header. */
#ifndef WICK_TEMPLATE_JINJA_BUILTINS_H
#define WICK_TEMPLATE_JINJA_BUILTINS_H

#include <string.h>

#include "template/jinja_internal.h"

/* ---- arguments of a builtin call */

static inline bool argp(const jargv *a, int i, const char *name, jv *out) {
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
static inline jv arg_or(const jargv *a, int i, const char *name, jv def) {
    jv v;
    return argp(a, i, name, &v) ? v : def;
}

static inline void max_pos(jctx *I, const jargv *a, int n, const char *what) {
    if (a->npos > n)
        jfail(I, "%s takes at most %d positional argument(s) (%d given)", what, n, a->npos);
}

static inline bool is_intlike(jv v) { return v.k == JV_INT || v.k == JV_BOOL; }
static inline int64_t ival(jv v) { return v.k == JV_BOOL ? (int64_t)v.b : v.i; }

static inline int64_t want_int(jctx *I, jv v, const char *what) {
    if (!is_intlike(v)) jfail(I, "%s must be an integer, not %s", what, jv_type_name(v));
    return ival(v);
}

static inline const jstr *want_str(jctx *I, jv v, const char *what) {
    if (v.k != JV_STR) jfail(I, "%s must be a string, not %s", what, jv_type_name(v));
    return JSTR(v);
}

static inline bool is_none(jv v) { return v.k == JV_NONE || v.k == JV_UNDEF; }

/* a tracked scratch buffer (freed by the sweep if an error unwinds) */
static inline void *scratch(jctx *I, size_t bytes, jstr **owner) {
    *owner = jstr_new(I, 0);
    (*owner)->s = jmem_realloc(I, (*owner)->s, 1, bytes + 1);
    (*owner)->cap = bytes;
    return (*owner)->s;
}

/* start of the character that ends at hi (> lo) */
static inline size_t back_char(const char *s, size_t lo, size_t hi) {
    size_t k = hi - 1;
    while (k > lo && hi - k < 4 && ((unsigned char)s[k] & 0xC0) == 0x80) k--;
    size_t j = k;
    jutf8_next(s, hi, &j);
    return j == hi ? k : hi - 1;
}

/* a number as a double (ints, bools and floats) */
static inline double fnum(jv v) { return v.k == JV_FLOAT ? v.f : (double)ival(v); }

/* ---- Python str operations (jinja_str.c) */

enum { CASE_UPPER, CASE_LOWER, CASE_SWAP, CASE_TITLE, CASE_CAPITALIZE, CASE_JTITLE };
typedef bool (*jcp_pred)(int cp);

/* str.strip / lstrip / rstrip; chars NULL = whitespace */
jv jpy_strip(jctx *I, const jstr *s, const jstr *chars, bool left, bool right);
jv jpy_case(jctx *I, const jstr *s, int mode); /* mode: CASE_* */
/* Python str.split / rsplit. sep NULL = runs of whitespace. */
jv jpy_split(jctx *I, const jstr *s, const jstr *sep, int64_t maxsplit, bool from_right);
jv jpy_splitlines(jctx *I, const jstr *s, bool keepends);
jv jpy_replace(jctx *I, const jstr *s, const jstr *old, const jstr *new_, int64_t count);
/* startswith / endswith: affix a str or a tuple/list of them */
bool jpy_affix(jctx *I, const jstr *s, jv affix, bool end, const char *what);
bool jpy_isdigit_cp(int cp);
bool jpy_isalpha_cp(int cp);
bool jpy_isnumeric_cp(int cp);
bool jpy_isalnum_cp(int cp);
bool jpy_isspace_cp(int cp);
bool jpy_all(const jstr *s, jcp_pred p); /* non-empty, and p holds for every code point */
bool jpy_case_is(const jstr *s, bool upper); /* islower / isupper */
int64_t jpy_cp_index(const jstr *s, size_t byte_off); /* code points before byte_off */

/* ---- methods and attribute access (jinja_methods.c) */

jv jdict_pairs(jctx *I, const jdict *d); /* [(key, value), ...] */
int jmethod_find(jv obj, const char *name); /* index in the method table, or -1 */
/* method m of the table on self; false if there is no method m */
bool jmethod_call(jctx *I, int m, jv self, jargv *a, jv *out);
jv jattr_path(jctx *I, jv item, jv attr); /* "a.b.0" or an int, as Jinja's sort/map */

/* ---- filters (jinja_filters.c) and tests (jinja_tests.c) by name; NULL if none */

typedef jv (*jfilter_fn)(jctx *I, jv v, jargv *a);
typedef bool (*jtest_fn)(jctx *I, jv v, jargv *a);
jfilter_fn jfilter_find(const char *name);
jtest_fn jtest_find(const char *name);

#endif
