/* gbnf.c — llama.cpp's grammar format (GBNF) compiled to a cfg: rules
 * `name ::= alternatives`, sequences of "literals", [classes], `.`, rule
 * names and (groups), each with * + ? {m} {m,} {m,n}; # comments. The start
 * rule is `root`. Terminals next to each other are joined into one regex
 * terminal, and a repeated terminal stays one terminal (x{m,n} as a regex),
 * so the parser sees few, long terminals. */
#include "grammar/gbnf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"

#define MAX_REPEAT 10000
#define MAX_NESTING 100

typedef struct item {
    bool terminal;
    cfg_sym sym; /* a nonterminal, or (terminal) unused */
    rx_id term;  /* terminal */
} item;

typedef struct gparser {
    cfg *g;
    const char *p, *end, *start;
    char **names; /* nonterminal n's rule name, NULL for helper symbols */
    bool *defined;
    size_t names_cap, defined_cap;
    int depth;
    wick_error *err;
    bool failed;
} gparser;

static int fail(gparser *ps, const char *what) {
    if (!ps->failed) {
        int line = 1;
        for (const char *q = ps->start; q < ps->p && q < ps->end; q++) line += *q == '\n';
        wick_fail(ps->err, "grammar: %s (line %d)", what, line);
    }
    ps->failed = true;
    return -1;
}

static int32_t new_symbol(gparser *ps, const char *name, size_t len) {
    const int32_t n = cfg_nonterm(ps->g);
    if (n < 0 || !GROW_ARRAY(ps->names, (size_t)n + 1, &ps->names_cap) ||
        !GROW_ARRAY(ps->defined, (size_t)n + 1, &ps->defined_cap))
        return fail(ps, "out of memory");
    ps->names[n] = name ? strndup(name, len) : NULL;
    ps->defined[n] = false;
    if (name && !ps->names[n]) return fail(ps, "out of memory");
    return n;
}

static int32_t symbol_named(gparser *ps, const char *name, size_t len) {
    for (int32_t i = 0; i < ps->g->n_nonterms; i++)
        if (ps->names[i] && strlen(ps->names[i]) == len && memcmp(ps->names[i], name, len) == 0) return i;
    return new_symbol(ps, name, len);
}

/* Skips spaces and comments; newlines too when nested (inside a group or after | or ::=). */
static void skip_space(gparser *ps, bool newlines) {
    while (ps->p < ps->end) {
        const char c = *ps->p;
        if (c == '#') {
            while (ps->p < ps->end && *ps->p != '\n') ps->p++;
        } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
            ps->p++;
        } else if (c == '\\' && ps->p + 1 < ps->end && ps->p[1] == '\n') { /* a line continued */
            ps->p += 2;
        } else {
            break;
        }
    }
}

static bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static int hexval(char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* One character of a literal or class: an escape or a UTF-8 character. */
static uint32_t read_char(gparser *ps) {
    if (ps->p >= ps->end) return fail(ps, "unexpected end"), 0;
    const uint8_t *u = (const uint8_t *)ps->p;
    if (u[0] == '\\') {
        if (ps->p + 1 >= ps->end) return fail(ps, "a backslash at the end"), 0;
        const char e = ps->p[1];
        ps->p += 2;
        int digits = 0;
        switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '\\': case '"': case '[': case ']': case '-': case '^': return (uint32_t)e;
        case 'x': digits = 2; break;
        case 'u': digits = 4; break;
        case 'U': digits = 8; break;
        default: return fail(ps, "unknown escape"), 0;
        }
        uint32_t v = 0;
        for (int i = 0; i < digits; i++) {
            const int h = ps->p < ps->end ? hexval(*ps->p) : -1;
            if (h < 0) return fail(ps, "expected a hexadecimal digit"), 0;
            v = v * 16 + (uint32_t)h;
            ps->p++;
        }
        if (v > 0x10FFFF) return fail(ps, "code point out of range"), 0;
        return v;
    }
    const int n = u[0] < 0x80 ? 1 : u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
    if (!n || ps->p + n > ps->end) return fail(ps, "invalid UTF-8"), 0;
    uint32_t c = n == 1 ? u[0] : u[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((u[i] & 0xC0) != 0x80) return fail(ps, "invalid UTF-8"), 0;
        c = c << 6 | (u[i] & 63);
    }
    ps->p += n;
    return c;
}

static rx_id read_literal(gparser *ps) {
    rx_id r = RX_EPSILON;
    rx_store *rx = ps->g->rx;
    while (!ps->failed) {
        if (ps->p >= ps->end) return fail(ps, "unterminated string");
        if (*ps->p == '"') {
            ps->p++;
            return r;
        }
        const uint32_t c = read_char(ps);
        r = rx_concat(rx, r, rx_codepoints(rx, c, c));
    }
    return RX_NOTHING;
}

static int cmp_range(const void *a, const void *b) {
    const uint32_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* A [class] (ps->p after '['): ranges of code points, ^ negating. */
static rx_id read_class(gparser *ps) {
    rx_store *rx = ps->g->rx;
    bool negate = false;
    if (ps->p < ps->end && *ps->p == '^') negate = true, ps->p++;
    uint32_t (*r)[2] = NULL;
    size_t n = 0, cap = 0;
    while (!ps->failed) {
        if (ps->p >= ps->end) {
            fail(ps, "unterminated character class");
            break;
        }
        if (*ps->p == ']') {
            ps->p++;
            break;
        }
        const uint32_t lo = read_char(ps);
        uint32_t hi = lo;
        if (ps->p + 1 < ps->end && *ps->p == '-' && ps->p[1] != ']') {
            ps->p++;
            hi = read_char(ps);
            if (hi < lo) fail(ps, "range out of order in a character class");
        }
        if (!GROW_ARRAY(r, n + 1, &cap)) {
            fail(ps, "out of memory");
            break;
        }
        r[n][0] = lo, r[n][1] = hi, n++;
    }
    rx_id out = RX_NOTHING;
    if (!ps->failed && !negate) {
        for (size_t i = 0; i < n; i++) out = rx_or(rx, out, rx_codepoints(rx, r[i][0], r[i][1]));
    } else if (!ps->failed) { /* the complement: the gaps between the sorted ranges */
        qsort(r, n, sizeof *r, cmp_range);
        uint32_t next = 0;
        for (size_t i = 0; i < n; i++) {
            if (r[i][0] > next) out = rx_or(rx, out, rx_codepoints(rx, next, r[i][0] - 1));
            if (r[i][1] + 1 > next) next = r[i][1] + 1;
        }
        if (next <= 0x10FFFF) out = rx_or(rx, out, rx_codepoints(rx, next, 0x10FFFF));
    }
    free(r);
    return out;
}

static int32_t parse_alternates(gparser *ps, int32_t lhs);

/* A helper nonterminal for `body*` style repeats of a nonterminal x:
 * min copies of x, then up to (max - min) more (or any number). */
static cfg_sym repeat_symbol(gparser *ps, cfg_sym x, int32_t min, int32_t max) {
    cfg *g = ps->g;
    const int32_t any = new_symbol(ps, NULL, 0); /* any = ε | any x */
    if (any < 0) return -1;
    if (max == RX_INF) {
        if (cfg_add_rule(g, any, NULL, 0) < 0 || cfg_add_rule(g, any, (cfg_sym[]){any, x}, 2) < 0)
            return fail(ps, "out of memory");
    } else { /* up to k = max - min more, nested: opt_k = ε | x opt_{k-1} */
        int32_t prev = -1;
        for (int32_t k = 0; k < max - min; k++) {
            const int32_t o = k + 1 == max - min ? any : new_symbol(ps, NULL, 0);
            if (o < 0 || cfg_add_rule(g, o, NULL, 0) < 0) return fail(ps, "out of memory");
            if (prev < 0 ? cfg_add_rule(g, o, (cfg_sym[]){x}, 1) : cfg_add_rule(g, o, (cfg_sym[]){x, prev}, 2)) return fail(ps, "out of memory");
            prev = o;
        }
        if (max == min && cfg_add_rule(g, any, NULL, 0) < 0) return fail(ps, "out of memory");
    }
    const int32_t all = new_symbol(ps, NULL, 0); /* x^min any */
    if (all < 0) return -1;
    cfg_sym *rhs = malloc(sizeof *rhs * ((size_t)min + 1));
    if (!rhs) return fail(ps, "out of memory");
    for (int32_t i = 0; i < min; i++) rhs[i] = x;
    rhs[min] = any;
    const int rc = cfg_add_rule(g, all, rhs, min + 1);
    free(rhs);
    return rc < 0 ? fail(ps, "out of memory") : all;
}

/* One sequence into rule lhs: items, postfix repeats, adjacent terminals joined. */
static int parse_sequence(gparser *ps, int32_t lhs, bool nested) {
    item *it = NULL;
    size_t n = 0, cap = 0;
    rx_store *rx = ps->g->rx;
    while (!ps->failed && ps->p < ps->end) {
        const char c = *ps->p;
        item x = {0};
        if (c == '"') {
            ps->p++;
            x = (item){.terminal = true, .term = read_literal(ps)};
        } else if (c == '[') {
            ps->p++;
            x = (item){.terminal = true, .term = read_class(ps)};
        } else if (c == '.') {
            ps->p++;
            x = (item){.terminal = true, .term = rx_codepoints(rx, 0, 0x10FFFF)};
        } else if (c == '(') {
            ps->p++;
            if (++ps->depth > MAX_NESTING) return fail(ps, "groups nested too deeply");
            const int32_t grp = new_symbol(ps, NULL, 0);
            skip_space(ps, true);
            if (grp < 0 || parse_alternates(ps, grp) < 0) break;
            ps->depth--;
            if (ps->p >= ps->end || *ps->p != ')') {
                fail(ps, "missing )");
                break;
            }
            ps->p++;
            x = (item){.sym = grp};
        } else if (is_name_char(c)) {
            const char *s = ps->p;
            while (ps->p < ps->end && is_name_char(*ps->p)) ps->p++;
            const char *after = ps->p;
            skip_space(ps, true);
            if (ps->p + 2 < ps->end && memcmp(ps->p, "::=", 3) == 0) { /* the next rule starts */
                ps->p = s;
                break;
            }
            ps->p = after;
            const int32_t sym = symbol_named(ps, s, (size_t)(after - s));
            if (sym < 0) break;
            x = (item){.sym = sym};
        } else {
            break;
        }
        if (ps->failed) break;
        /* postfix repeats */
        skip_space(ps, nested);
        while (!ps->failed && ps->p < ps->end && (*ps->p == '*' || *ps->p == '+' || *ps->p == '?' || *ps->p == '{')) {
            int32_t min = 0, max = RX_INF;
            const char q = *ps->p++;
            if (q == '+') min = 1;
            else if (q == '?') max = 1;
            else if (q == '{') {
                long a = 0, b = -1;
                skip_space(ps, nested);
                while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9' && a <= MAX_REPEAT) a = a * 10 + (*ps->p++ - '0');
                skip_space(ps, nested);
                if (ps->p < ps->end && *ps->p == ',') {
                    ps->p++;
                    skip_space(ps, nested);
                    if (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
                        b = 0;
                        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9' && b <= MAX_REPEAT) b = b * 10 + (*ps->p++ - '0');
                    }
                } else {
                    b = a;
                }
                skip_space(ps, nested);
                if (ps->p >= ps->end || *ps->p != '}') {
                    fail(ps, "expected } after a repeat count");
                    break;
                }
                ps->p++;
                if (a > MAX_REPEAT || b > MAX_REPEAT) {
                    fail(ps, "repeat count too large");
                    break;
                }
                if (b >= 0 && b < a) {
                    fail(ps, "repeat counts out of order");
                    break;
                }
                min = (int32_t)a, max = b < 0 ? RX_INF : (int32_t)b;
            }
            if (x.terminal) {
                x.term = rx_repeat(rx, x.term, min, max);
            } else {
                const cfg_sym r = repeat_symbol(ps, x.sym, min, max);
                if (r < 0) break;
                x.sym = r;
            }
            skip_space(ps, nested);
        }
        if (ps->failed) break;
        if (n && x.terminal && it[n - 1].terminal) { /* join with the terminal before */
            it[n - 1].term = rx_concat(rx, it[n - 1].term, x.term);
            continue;
        }
        if (!GROW_ARRAY(it, n + 1, &cap)) {
            fail(ps, "out of memory");
            break;
        }
        it[n++] = x;
    }
    int rc = -1;
    if (!ps->failed) {
        cfg_sym *rhs = malloc(sizeof *rhs * (n ? n : 1));
        size_t k = 0;
        for (size_t i = 0; rhs && i < n; i++) {
            if (it[i].terminal && it[i].term == RX_EPSILON) continue; /* "" */
            rhs[k++] = it[i].terminal ? cfg_terminal(it[i].term) : it[i].sym;
        }
        rc = rhs && cfg_add_rule(ps->g, lhs, rhs, (int32_t)k) == 0 ? 0 : fail(ps, "out of memory");
        free(rhs);
    }
    free(it);
    return rc;
}

static int32_t parse_alternates(gparser *ps, int32_t lhs) {
    const bool nested = ps->depth > 0;
    if (parse_sequence(ps, lhs, nested) < 0) return -1;
    for (;;) {
        const char *here = ps->p;
        skip_space(ps, true); /* a | starting the next line continues the rule */
        if (ps->failed || ps->p >= ps->end || *ps->p != '|') {
            ps->p = here;
            break;
        }
        ps->p++;
        skip_space(ps, true);
        if (parse_sequence(ps, lhs, nested) < 0) return -1;
    }
    return ps->failed ? -1 : 0;
}

int gbnf_compile(cfg *g, const char *text, size_t len, wick_error *err) {
    gparser ps = {.g = g, .p = text, .end = text + len, .start = text, .err = err};
    int rc = -1;
    for (;;) {
        skip_space(&ps, true);
        if (ps.p >= ps.end) break;
        const char *s = ps.p;
        while (ps.p < ps.end && is_name_char(*ps.p)) ps.p++;
        if (ps.p == s) {
            fail(&ps, "expected a rule name");
            goto out;
        }
        const int32_t sym = symbol_named(&ps, s, (size_t)(ps.p - s));
        if (sym < 0) goto out;
        skip_space(&ps, false);
        if (ps.p + 2 >= ps.end || memcmp(ps.p, "::=", 3) != 0) {
            fail(&ps, "expected ::=");
            goto out;
        }
        ps.p += 3;
        skip_space(&ps, true);
        ps.defined[sym] = true;
        if (parse_alternates(&ps, sym) < 0) goto out;
        skip_space(&ps, false);
        if (ps.p < ps.end && *ps.p != '\n') {
            fail(&ps, "unexpected character");
            goto out;
        }
    }
    int32_t root = -1;
    for (int32_t i = 0; i < g->n_nonterms; i++) {
        if (ps.names[i] && !ps.defined[i]) {
            char msg[160];
            snprintf(msg, sizeof msg, "rule \"%.100s\" is used but not defined", ps.names[i]);
            fail(&ps, msg);
            goto out;
        }
        if (ps.names[i] && strcmp(ps.names[i], "root") == 0) root = i;
    }
    if (root < 0) {
        fail(&ps, "no rule named root");
        goto out;
    }
    rc = cfg_finish(g, root, err);
out:
    for (int32_t i = 0; i < g->n_nonterms && ps.names; i++) free(ps.names[i]);
    free(ps.names);
    free(ps.defined);
    return rc;
}
