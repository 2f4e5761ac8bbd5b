/* jinja_ops.c — the binary operators (+ - * / // % ** ~) and "%"-formatting
 * of strings, with Python's semantics. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "template/jinja_builtins.h"

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
        /* llama.cpp's renderer adds an undefined or none value to a string
         * as "" (FireFunction v2's template adds an unset `functions`):
         * templates written against it render here too */
        if ((a.k == JV_STR && (b.k == JV_UNDEF || b.k == JV_NONE)) ||
            (b.k == JV_STR && (a.k == JV_UNDEF || a.k == JV_NONE)))
            return a.k == JV_STR ? jv_retain(a) : jv_retain(b);
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
