/* jinja_str.c — the Python str operations the builtins share: strip, case
 * mapping (upper/lower/swapcase/title/capitalize and Jinja's |title), split,
 * splitlines, replace, startswith/endswith and the is*() character classes,
 * all on UTF-8 code points with Python's semantics. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "template/jinja_builtins.h"

static bool in_chars(const jstr *chars, int cp) {
    for (size_t i = 0; i < chars->len;)
        if (jutf8_next(chars->s, chars->len, &i) == cp) return true;
    return false;
}

jv jpy_strip(jctx *I, const jstr *s, const jstr *chars, bool left, bool right) {
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

static bool jtitle_sep(int cp) {
    return cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || jpy_isspace((uint32_t)cp);
}

jv jpy_case(jctx *I, const jstr *s, int mode) {
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
jv jpy_split(jctx *I, const jstr *s, const jstr *sep, int64_t maxsplit, bool from_right) {
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

jv jpy_splitlines(jctx *I, const jstr *s, bool keepends) {
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

jv jpy_replace(jctx *I, const jstr *s, const jstr *old, const jstr *new_, int64_t count) {
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

bool jpy_affix(jctx *I, const jstr *s, jv affix, bool end, const char *what) {
    if (affix.k == JV_STR) {
        const jstr *a = JSTR(affix);
        if (a->len > s->len) return false;
        return memcmp(end ? s->s + s->len - a->len : s->s, a->s, a->len) == 0;
    }
    if (affix.k == JV_TUPLE || affix.k == JV_LIST) {
        for (size_t i = 0; i < JLIST(affix)->n; i++) {
            jv x = JLIST(affix)->v[i];
            if (x.k != JV_STR) jfail(I, "tuple for %s must only contain str, not %s", what, jv_type_name(x));
            if (jpy_affix(I, s, x, end, what)) return true;
        }
        return false;
    }
    jfail(I, "%s first arg must be str or a tuple of str, not %s", what, jv_type_name(affix));
}

bool jpy_isdigit_cp(int cp) { return utf8proc_category(cp) == UTF8PROC_CATEGORY_ND; }
bool jpy_isalpha_cp(int cp) {
    int c = utf8proc_category(cp);
    return c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO;
}
bool jpy_isnumeric_cp(int cp) {
    int c = utf8proc_category(cp);
    return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}
bool jpy_isalnum_cp(int cp) { return jpy_isalpha_cp(cp) || jpy_isnumeric_cp(cp); }
bool jpy_isspace_cp(int cp) { return jpy_isspace((uint32_t)cp); }

bool jpy_all(const jstr *s, jcp_pred p) {
    if (s->len == 0) return false;
    for (size_t i = 0; i < s->len;)
        if (!p(jutf8_next(s->s, s->len, &i))) return false;
    return true;
}

/* islower / isupper: some cased character, and every cased one is lower/upper */
bool jpy_case_is(const jstr *s, bool upper) {
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

int64_t jpy_cp_index(const jstr *s, size_t byte_off) { return (int64_t)jutf8_len(s->s, byte_off); }
