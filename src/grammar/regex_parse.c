/* regex_parse.c — the pattern syntax (ECMAScript / PCRE style, the regular
 * subset) read into byte expressions (regex.h). Characters are Unicode code
 * points written in UTF-8; a class is a set of code point ranges, turned
 * into the alternatives of their UTF-8 encodings. Constructs without a
 * regular meaning (backreferences, lookaround, word boundaries) and flags
 * are errors that name the construct and its position. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "grammar/regex_internal.h"

#define MAX_COUNT 100000 /* the largest {m,n} bound accepted */
#define MAX_DEPTH 200    /* group nesting */

typedef struct cp_range {
    uint32_t lo, hi;
} cp_range;

/* A set of code points being built: ranges in any order until normalised. */
typedef struct cp_set {
    cp_range *r;
    size_t n, cap;
} cp_set;

typedef struct parser {
    rx_store *s;
    const char *p, *end, *start;
    wick_error *err;
    bool failed;
    bool plain_json; /* leave out quotes, backslashes and control characters */
    int depth;
} parser;

/* The code points lo..hi as an expression, less those plain_json leaves out. */
static rx_id cps(parser *ps, uint32_t lo, uint32_t hi) {
    if (!ps->plain_json) return rx_codepoints(ps->s, lo, hi);
    static const uint32_t out[][2] = {{0, 0x1f}, {'"', '"'}, {'\\', '\\'}};
    rx_id r = RX_NOTHING;
    uint32_t at = lo;
    for (size_t i = 0; i < sizeof out / sizeof *out && at <= hi; i++) {
        if (out[i][1] < at) continue;
        if (out[i][0] > at) r = rx_or(ps->s, r, rx_codepoints(ps->s, at, out[i][0] - 1 < hi ? out[i][0] - 1 : hi));
        at = out[i][1] + 1;
    }
    if (at <= hi) r = rx_or(ps->s, r, rx_codepoints(ps->s, at, hi));
    return r;
}

static rx_id fail(parser *ps, const char *what) {
    if (!ps->failed)
        wick_fail(ps->err, "regular expression: %s at offset %td", what, ps->p - ps->start);
    ps->failed = true;
    return RX_NOTHING;
}

static void set_add(parser *ps, cp_set *c, uint32_t lo, uint32_t hi) {
    if (!GROW_ARRAY(c->r, c->n + 1, &c->cap)) {
        fail(ps, "out of memory");
        return;
    }
    c->r[c->n++] = (cp_range){lo, hi};
}

static int cmp_range(const void *a, const void *b) {
    const cp_range *x = a, *y = b;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Sorted, merged ranges. */
static void set_normalise(cp_set *c) {
    if (!c->n) return;
    qsort(c->r, c->n, sizeof *c->r, cmp_range);
    size_t w = 0;
    for (size_t i = 1; i < c->n; i++) {
        if (c->r[i].lo <= c->r[w].hi + 1) {
            if (c->r[i].hi > c->r[w].hi) c->r[w].hi = c->r[i].hi;
        } else {
            c->r[++w] = c->r[i];
        }
    }
    c->n = w + 1;
}

static void set_negate(parser *ps, cp_set *c) {
    set_normalise(c);
    cp_set out = {0};
    uint32_t next = 0;
    for (size_t i = 0; i < c->n; i++) {
        if (c->r[i].lo > next) set_add(ps, &out, next, c->r[i].lo - 1);
        next = c->r[i].hi + 1;
    }
    if (next <= 0x10FFFF) set_add(ps, &out, next, 0x10FFFF);
    free(c->r);
    *c = out;
}

static rx_id set_expr(parser *ps, cp_set *c) {
    set_normalise(c);
    rx_id r = RX_NOTHING;
    for (size_t i = 0; i < c->n; i++) r = rx_or(ps->s, r, cps(ps, c->r[i].lo, c->r[i].hi));
    free(c->r);
    c->r = NULL;
    c->n = c->cap = 0;
    return r;
}

/* The next UTF-8 character of the pattern. */
static uint32_t next_char(parser *ps) {
    const uint8_t *u = (const uint8_t *)ps->p;
    const size_t left = (size_t)(ps->end - ps->p);
    const int n = u[0] < 0x80 ? 1 : u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
    if (!n || (size_t)n > left) {
        fail(ps, "invalid UTF-8 in the pattern");
        ps->p = ps->end;
        return 0;
    }
    uint32_t c = n == 1 ? u[0] : u[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80) {
            fail(ps, "invalid UTF-8 in the pattern");
            ps->p = ps->end;
            return 0;
        }
        c = c << 6 | (u[i] & 63);
    }
    ps->p += n;
    return c;
}

static int hex_digit(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static uint32_t read_hex(parser *ps, int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; i++) {
        const int d = ps->p < ps->end ? hex_digit(*ps->p) : -1;
        if (d < 0) {
            fail(ps, "expected a hexadecimal digit");
            return 0;
        }
        v = v * 16 + (uint32_t)d;
        ps->p++;
    }
    return v;
}

static void add_space(parser *ps, cp_set *c) {
    static const uint32_t r[][2] = {{9, 13}, {32, 32}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                                    {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
                                    {0xFEFF, 0xFEFF}};
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) set_add(ps, c, r[i][0], r[i][1]);
}

static void add_word(parser *ps, cp_set *c) {
    set_add(ps, c, '0', '9');
    set_add(ps, c, 'A', 'Z');
    set_add(ps, c, '_', '_');
    set_add(ps, c, 'a', 'z');
}

/* A class escape (\d \w \s and their negations) into c; false when `e` is not one. */
static bool class_escape(parser *ps, char e, cp_set *c) {
    cp_set t = {0};
    switch (e | 0x20) {
    case 'd': set_add(ps, &t, '0', '9'); break;
    case 'w': add_word(ps, &t); break;
    case 's': add_space(ps, &t); break;
    default: return false;
    }
    if (e >= 'A' && e <= 'Z') set_negate(ps, &t);
    for (size_t i = 0; i < t.n; i++) set_add(ps, c, t.r[i].lo, t.r[i].hi);
    free(t.r);
    return true;
}

/* The code point of a character escape after the backslash (ps->p at the
 * letter); in_class: inside [...], where \b is a backspace. */
static uint32_t char_escape(parser *ps, bool in_class) {
    const char e = *ps->p++;
    switch (e) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case 'f': return '\f';
    case 'v': return '\v';
    case '0': return 0;
    case 'x': return read_hex(ps, 2);
    case 'u':
        if (ps->p < ps->end && *ps->p == '{') {
            ps->p++;
            uint32_t v = 0;
            int n = 0;
            while (ps->p < ps->end && hex_digit(*ps->p) >= 0 && n < 6) v = v * 16 + (uint32_t)hex_digit(*ps->p++), n++;
            if (!n || ps->p >= ps->end || *ps->p != '}' || v > 0x10FFFF) return fail(ps, "bad \\u{...} escape"), 0;
            ps->p++;
            return v;
        }
        return read_hex(ps, 4);
    case 'b':
        if (in_class) return 8;
        return fail(ps, "word boundaries (\\b) are not supported"), 0;
    case 'B': return fail(ps, "word boundaries (\\B) are not supported"), 0;
    case 'p': case 'P': return fail(ps, "Unicode property classes (\\p) are not supported"), 0;
    case 'k': return fail(ps, "backreferences are not supported"), 0;
    case 'A': case 'z': case 'Z': case 'G': return fail(ps, "anchors other than ^ and $ are not supported"), 0;
    default:
        if (e >= '1' && e <= '9') return fail(ps, "backreferences are not supported"), 0;
        if ((e >= 'a' && e <= 'z') || (e >= 'A' && e <= 'Z')) return fail(ps, "unknown escape"), 0;
        ps->p--;
        return next_char(ps); /* an escaped punctuation character is itself */
    }
}

static rx_id parse_class(parser *ps) {
    cp_set c = {0};
    bool negate = false;
    if (ps->p < ps->end && *ps->p == '^') negate = true, ps->p++;
    bool first = true;
    while (!ps->failed) {
        if (ps->p >= ps->end) {
            fail(ps, "unterminated character class");
            break;
        }
        if (*ps->p == ']' && !first) {
            ps->p++;
            break;
        }
        first = false;
        uint32_t lo;
        if (*ps->p == '\\') {
            ps->p++;
            if (ps->p >= ps->end) {
                fail(ps, "pattern ends in a backslash");
                break;
            }
            if (class_escape(ps, *ps->p, &c)) {
                ps->p++;
                continue;
            }
            lo = char_escape(ps, true);
        } else if (*ps->p == '[' && ps->p + 1 < ps->end && ps->p[1] == ':') {
            fail(ps, "POSIX classes ([:name:]) are not supported");
            break;
        } else {
            lo = next_char(ps);
        }
        uint32_t hi = lo;
        if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] != ']') {
            ps->p++;
            if (*ps->p == '\\') {
                ps->p++;
                if (ps->p >= ps->end || class_escape(ps, *ps->p, &(cp_set){0})) {
                    fail(ps, "a class escape cannot end a range");
                    break;
                }
                hi = char_escape(ps, true);
            } else {
                hi = next_char(ps);
            }
            if (hi < lo) {
                fail(ps, "range out of order in a character class");
                break;
            }
        }
        set_add(ps, &c, lo, hi);
    }
    if (ps->failed) {
        free(c.r);
        return RX_NOTHING;
    }
    if (negate) set_negate(ps, &c);
    return set_expr(ps, &c);
}

static rx_id parse_alt(parser *ps);

/* {m}, {m,}, {m,n} (ps->p after the brace); false (nothing read) when it is not a count. */
static bool parse_count(parser *ps, int32_t *min, int32_t *max) {
    const char *q = ps->p;
    long a = 0, b;
    int da = 0;
    while (q < ps->end && *q >= '0' && *q <= '9' && da < 9) a = a * 10 + (*q++ - '0'), da++;
    if (!da) return false;
    if (q < ps->end && *q == '}') {
        b = a;
    } else if (q < ps->end && *q == ',') {
        q++;
        int db = 0;
        b = 0;
        while (q < ps->end && *q >= '0' && *q <= '9' && db < 9) b = b * 10 + (*q++ - '0'), db++;
        if (!db) b = -1;
        if (q >= ps->end || *q != '}') return false;
    } else {
        return false;
    }
    ps->p = q + 1;
    if (a > MAX_COUNT || b > MAX_COUNT) return fail(ps, "repeat count too large"), true;
    if (b >= 0 && b < a) return fail(ps, "repeat counts out of order"), true;
    *min = (int32_t)a;
    *max = b < 0 ? RX_INF : (int32_t)b;
    return true;
}

static rx_id parse_atom(parser *ps) {
    const char c = *ps->p;
    if (c == '(') {
        ps->p++;
        if (ps->p < ps->end && *ps->p == '?') {
            ps->p++;
            if (ps->p < ps->end && *ps->p == ':') ps->p++;
            else if (ps->p < ps->end && (*ps->p == '<' || *ps->p == 'P') &&
                     !(ps->p + 1 < ps->end && (ps->p[1] == '=' || ps->p[1] == '!'))) { /* named group */
                const char *close = memchr(ps->p, '>', (size_t)(ps->end - ps->p));
                if (!close) return fail(ps, "unterminated group name");
                ps->p = close + 1;
            } else if (ps->p < ps->end && (*ps->p == '=' || *ps->p == '!' || *ps->p == '<'))
                return fail(ps, "lookaround is not supported");
            else
                return fail(ps, "inline flags and other (?...) groups are not supported");
        }
        if (++ps->depth > MAX_DEPTH) return fail(ps, "groups nested too deeply");
        const rx_id r = parse_alt(ps);
        ps->depth--;
        if (ps->p >= ps->end || *ps->p != ')') return fail(ps, "missing )");
        ps->p++;
        return r;
    }
    if (c == '[') {
        ps->p++;
        return parse_class(ps);
    }
    if (c == '.') {
        ps->p++;
        cp_set d = {0};
        set_add(ps, &d, '\n', '\n');
        set_add(ps, &d, '\r', '\r');
        set_add(ps, &d, 0x2028, 0x2029);
        set_negate(ps, &d);
        return set_expr(ps, &d);
    }
    if (c == '\\') {
        ps->p++;
        if (ps->p >= ps->end) return fail(ps, "pattern ends in a backslash");
        cp_set d = {0};
        if (class_escape(ps, *ps->p, &d)) {
            ps->p++;
            return set_expr(ps, &d);
        }
        const uint32_t cp = char_escape(ps, false);
        return cps(ps, cp, cp);
    }
    if (c == '^') {
        if (ps->p != ps->start) return fail(ps, "^ is supported only at the start");
        ps->p++;
        return RX_EPSILON;
    }
    if (c == '$') {
        if (ps->p + 1 != ps->end) return fail(ps, "$ is supported only at the end");
        ps->p++;
        return RX_EPSILON;
    }
    if (c == '*' || c == '+' || c == '?') return fail(ps, "nothing to repeat");
    const uint32_t cp = next_char(ps);
    return cps(ps, cp, cp);
}

static bool at_quantifier(const parser *ps) {
    if (ps->p >= ps->end) return false;
    const char c = *ps->p;
    return c == '*' || c == '+' || c == '?' || (c == '{' && ps->p + 1 < ps->end && ps->p[1] >= '0' && ps->p[1] <= '9');
}

/* An atom and at most one quantifier (ECMAScript: a quantifier cannot follow one). */
static rx_id parse_repeat(parser *ps) {
    const rx_id r = parse_atom(ps);
    if (ps->failed || ps->p >= ps->end) return r;
    int32_t min, max;
    const char c = *ps->p;
    if (c == '*') min = 0, max = RX_INF, ps->p++;
    else if (c == '+') min = 1, max = RX_INF, ps->p++;
    else if (c == '?') min = 0, max = 1, ps->p++;
    else if (c != '{') return r;
    else {
        ps->p++;
        if (!parse_count(ps, &min, &max)) {
            ps->p--; /* a brace that opens no count is a literal, as in ECMAScript's Annex B */
            return r;
        }
        if (ps->failed) return RX_NOTHING;
    }
    if (ps->p < ps->end && *ps->p == '?') ps->p++; /* lazy: the same language */
    else if (ps->p < ps->end && *ps->p == '+') return fail(ps, "possessive quantifiers are not supported");
    if (at_quantifier(ps)) return fail(ps, "nothing to repeat (a quantifier after a quantifier)");
    return rx_repeat(ps->s, r, min, max);
}

/* Items joined from the right: concatenation terms are right-nested. */
static rx_id parse_concat(parser *ps) {
    rx_id *items = NULL, r = RX_EPSILON;
    size_t n = 0, cap = 0;
    while (!ps->failed && ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
        const rx_id x = parse_repeat(ps);
        if (!GROW_ARRAY(items, n + 1, &cap)) {
            fail(ps, "out of memory");
            break;
        }
        items[n++] = x;
    }
    while (n > 0) r = rx_concat(ps->s, items[--n], r);
    free(items);
    return r;
}

static rx_id parse_alt(parser *ps) {
    rx_id r = parse_concat(ps);
    while (!ps->failed && ps->p < ps->end && *ps->p == '|') {
        ps->p++;
        r = rx_or(ps->s, r, parse_concat(ps));
    }
    return r;
}

static rx_id parse(rx_store *s, const char *pattern, size_t len, bool plain_json, wick_error *err) {
    parser ps = {.s = s, .p = pattern, .end = pattern + len, .start = pattern, .err = err, .plain_json = plain_json};
    rx_id r = parse_alt(&ps);
    if (!ps.failed && ps.p < ps.end) fail(&ps, "unmatched )");
    if (!ps.failed && !rx_store_ok(s)) fail(&ps, "out of memory");
    return ps.failed ? -1 : r;
}

rx_id rx_parse(rx_store *s, const char *pattern, size_t len, wick_error *err) { return parse(s, pattern, len, false, err); }

rx_id rx_parse_plain_json(rx_store *s, const char *pattern, size_t len, wick_error *err) {
    return parse(s, pattern, len, true, err);
}
