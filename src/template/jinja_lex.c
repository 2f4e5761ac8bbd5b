/* jinja_lex.c — the Jinja lexer: template text -> tokens, with all of
 * Jinja's whitespace rules applied here so the parser sees final text.
 *
 * Rules, as Python Jinja2 with trim_blocks=True, lstrip_blocks=True (the
 * transformers chat-template configuration):
 *  - "\r\n" and "\r" become "\n"; one trailing "\n" of the template is dropped;
 *  - trim_blocks: a "\n" right after a block tag "%}" or a comment "#}" is dropped
 *    (not after "+%}");
 *  - lstrip_blocks: spaces/tabs between a line start and "{%" / "{#" are dropped
 *    (not before "{%+");
 *  - "{%-" "{{-" "{#-" strip all whitespace before the tag, "-%}" "-}}" "-#}" all
 *    whitespace after it;
 *  - {% raw %}...{% endraw %} is copied as text.
 * Inside tags: names, numbers (1, 1_000, 1.5, 1e3), strings with Python escapes,
 * operators; "}}" only ends an expression outside brackets/braces so dict literals
 * work. Every token records the line and column it starts at (1-based, columns
 * count characters). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "template/jinja_internal.h"

typedef struct lexer {
    jarena *a;
    const char *s;
    size_t len;
    jtok *t;
    size_t n, cap;
    wick_error *err;
    size_t lc_pos; /* line/column cursor */
    int lc_line, lc_col;
} lexer;

static void linecol(lexer *L, size_t pos, int *line, int *col) {
    if (pos < L->lc_pos) {
        L->lc_pos = 0;
        L->lc_line = 1;
        L->lc_col = 1;
    }
    for (; L->lc_pos < pos && L->lc_pos < L->len; L->lc_pos++) {
        unsigned char c = (unsigned char)L->s[L->lc_pos];
        if (c == '\n') {
            L->lc_line++;
            L->lc_col = 1;
        } else if ((c & 0xC0) != 0x80) {
            L->lc_col++;
        }
    }
    *line = L->lc_line;
    *col = L->lc_col;
}

static int lfail(lexer *L, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int lfail(lexer *L, size_t pos, const char *fmt, ...) {
    int line, col;
    linecol(L, pos, &line, &col);
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return wick_fail(L->err, "line %d, column %d: %s", line, col, msg);
}

static jtok *push(lexer *L, int kind, size_t pos) {
    if (!GROW_ARRAY(L->t, L->n + 1, &L->cap)) return NULL;
    jtok *t = &L->t[L->n++];
    memset(t, 0, sizeof *t);
    t->k = (uint8_t)kind;
    linecol(L, pos, &t->line, &t->col);
    return t;
}

/* Bytes of the Python whitespace character starting at i, or 0. */
static size_t ws_fwd(const char *s, size_t i, size_t end) {
    if (i >= end) return 0;
    size_t j = i;
    int cp = jutf8_next(s, end, &j);
    return jpy_isspace((uint32_t)cp) && !(cp == 0xFFFD) ? j - i : 0;
}

/* Bytes of the Python whitespace character ending at i (> start), or 0. */
static size_t ws_back(const char *s, size_t start, size_t i) {
    for (size_t k = 1; k <= 3 && k <= i - start; k++) {
        size_t j = i - k;
        if (k > 1 && ((unsigned char)s[j] & 0xC0) != 0xC0) continue;
        size_t p = j;
        int cp = jutf8_next(s, i, &p);
        if (p == i && cp != 0xFFFD && jpy_isspace((uint32_t)cp)) return k;
        if (k == 1 && (unsigned char)s[j] < 0x80) return 0;
    }
    return 0;
}

static bool is_ascii_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Apply "-" / trim / lstrip rules to the text [*ts, *te) before a tag. */
static void strip_before_tag(const char *s, size_t *ts, size_t *te, char tag_kind, char mod,
                             bool at_line_start) {
    if (mod == '-') {
        size_t k;
        while (*te > *ts && (k = ws_back(s, *ts, *te)) > 0) *te -= k;
        return;
    }
    if ((tag_kind == '%' || tag_kind == '#') && mod != '+') {
        size_t lpos = *ts;
        bool eligible = at_line_start;
        for (size_t i = *te; i > *ts; i--)
            if (s[i - 1] == '\n') {
                lpos = i;
                eligible = true;
                break;
            }
        if (!eligible) return;
        for (size_t i = lpos; i < *te; i++)
            if (s[i] != ' ' && s[i] != '\t') return;
        *te = lpos;
    }
}

static int emit_text(lexer *L, size_t ts, size_t te) {
    if (te <= ts) return 0;
    jtok *t = push(L, JT_TEXT, ts);
    if (!t) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    t->s = jarena_strndup(L->a, L->s + ts, te - ts);
    t->n = te - ts;
    return t->s ? 0 : wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
}

/* ---- strings ---- */

static int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Lex a quoted string at *p; decode Python escapes into the arena. */
static int lex_string(lexer *L, size_t *p) {
    const char *s = L->s;
    size_t start = *p, i = start + 1;
    char q = s[start];
    while (i < L->len && s[i] != q) {
        if (s[i] == '\\' && i + 1 < L->len) i++;
        i++;
    }
    if (i >= L->len) return lfail(L, start, "unterminated string literal");
    size_t end = i; /* closing quote */
    char *out = jarena_alloc(L->a, end - start + 1);
    if (!out) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    size_t o = 0;
    for (i = start + 1; i < end; i++) {
        char c = s[i];
        if (c != '\\') {
            out[o++] = c;
            continue;
        }
        char e = s[++i];
        switch (e) {
        case '\n': break; /* line continuation */
        case '\\': out[o++] = '\\'; break;
        case '\'': out[o++] = '\''; break;
        case '"': out[o++] = '"'; break;
        case 'a': out[o++] = '\a'; break;
        case 'b': out[o++] = '\b'; break;
        case 'f': out[o++] = '\f'; break;
        case 'n': out[o++] = '\n'; break;
        case 'r': out[o++] = '\r'; break;
        case 't': out[o++] = '\t'; break;
        case 'v': out[o++] = '\v'; break;
        case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': {
            uint32_t v = (uint32_t)(e - '0');
            for (int k = 0; k < 2 && i + 1 < end && s[i + 1] >= '0' && s[i + 1] <= '7'; k++)
                v = v * 8 + (uint32_t)(s[++i] - '0');
            o += (size_t)jutf8_put(v, out + o);
            break;
        }
        case 'x': case 'u': case 'U': {
            int nd = e == 'x' ? 2 : e == 'u' ? 4 : 8;
            uint32_t v = 0;
            for (int k = 0; k < nd; k++) {
                int h = i + 1 < end ? hexval(s[i + 1]) : -1;
                if (h < 0) return lfail(L, i - 1, "invalid \\%c escape in string literal", e);
                v = v * 16 + (uint32_t)h;
                i++;
            }
            if (v > 0x10FFFF) return lfail(L, i, "invalid \\%c escape in string literal", e);
            o += (size_t)jutf8_put(v, out + o); /* every escape is no longer than its output */
            break;
        }
        default: /* Python keeps unknown escapes as written */
            out[o++] = '\\';
            out[o++] = e;
            break;
        }
    }
    out[o] = 0;
    jtok *t = push(L, JT_STRING, start);
    if (!t) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    t->s = out;
    t->n = o;
    *p = end + 1;
    return 0;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* digits with single '_' separators; returns the end */
static size_t scan_digits(const char *s, size_t i, size_t len) {
    while (i < len && (is_digit(s[i]) || (s[i] == '_' && i + 1 < len && is_digit(s[i + 1]) &&
                                          i > 0 && is_digit(s[i - 1]))))
        i++;
    return i;
}

static int lex_number(lexer *L, size_t *p) {
    const char *s = L->s;
    size_t start = *p, i = scan_digits(s, start, L->len);
    bool is_float = false;
    bool after_dot = start > 0 && s[start - 1] == '.';
    if (!after_dot) {
        if (i + 1 < L->len && s[i] == '.' && is_digit(s[i + 1])) {
            i = scan_digits(s, i + 1, L->len);
            is_float = true;
        }
        if (i < L->len && s[i] == 'e') {
            size_t j = i + 1;
            if (j < L->len && (s[j] == '+' || s[j] == '-')) j++;
            if (j < L->len && is_digit(s[j])) {
                i = scan_digits(s, j, L->len);
                is_float = true;
            }
        }
    }
    char buf[128];
    size_t n = 0;
    for (size_t k = start; k < i && n + 1 < sizeof buf; k++)
        if (s[k] != '_') buf[n++] = s[k];
    buf[n] = 0;
    if (i - start >= sizeof buf - 1) return lfail(L, start, "number literal too long");
    jtok *t = push(L, is_float ? JT_FLOAT : JT_INT, start);
    if (!t) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
    errno = 0;
    if (is_float) {
        t->f = strtod(buf, NULL);
    } else {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE) return lfail(L, start, "integer literal too large");
        t->i = v;
    }
    *p = i;
    return 0;
}

static const struct {
    const char *op;
    int kind;
} OPS[] = {
    {"//", JT_FLOORDIV}, {"**", JT_POW}, {"==", JT_EQ}, {"!=", JT_NE}, {"<=", JT_LE},
    {">=", JT_GE},       {"+", JT_ADD},  {"-", JT_SUB}, {"*", JT_MUL},  {"/", JT_DIV},
    {"%", JT_MOD},       {"~", JT_TILDE}, {"<", JT_LT},  {">", JT_GT},   {"=", JT_ASSIGN},
    {"(", JT_LPAREN},    {")", JT_RPAREN}, {"[", JT_LBRACKET}, {"]", JT_RBRACKET},
    {"{", JT_LBRACE},    {"}", JT_RBRACE}, {",", JT_COMMA}, {".", JT_DOT}, {":", JT_COLON},
    {"|", JT_PIPE},
};

const char *jinja_tok_name(int kind) {
    switch (kind) {
    case JT_EOF: return "end of template";
    case JT_TEXT: return "text";
    case JT_BLOCK_BEGIN: return "'{%'";
    case JT_BLOCK_END: return "'%}'";
    case JT_VAR_BEGIN: return "'{{'";
    case JT_VAR_END: return "'}}'";
    case JT_NAME: return "name";
    case JT_STRING: return "string";
    case JT_INT: return "integer";
    case JT_FLOAT: return "float";
    case JT_ADD: return "'+'";
    case JT_SUB: return "'-'";
    case JT_MUL: return "'*'";
    case JT_DIV: return "'/'";
    case JT_FLOORDIV: return "'//'";
    case JT_MOD: return "'%'";
    case JT_POW: return "'**'";
    case JT_TILDE: return "'~'";
    case JT_EQ: return "'=='";
    case JT_NE: return "'!='";
    case JT_LT: return "'<'";
    case JT_LE: return "'<='";
    case JT_GT: return "'>'";
    case JT_GE: return "'>='";
    case JT_ASSIGN: return "'='";
    case JT_LPAREN: return "'('";
    case JT_RPAREN: return "')'";
    case JT_LBRACKET: return "'['";
    case JT_RBRACKET: return "']'";
    case JT_LBRACE: return "'{'";
    case JT_RBRACE: return "'}'";
    case JT_COMMA: return "','";
    case JT_DOT: return "'.'";
    case JT_COLON: return "':'";
    case JT_PIPE: return "'|'";
    default: return "token";
    }
}

/* Tokens inside {% %} or {{ }} starting at *p (after the opener). Stops after
 * the closer; *end_mod gets '-', '+' or 0. */
static int lex_tag(lexer *L, size_t *p, bool block, size_t tag_pos, char *end_mod) {
    const char *s = L->s;
    size_t i = *p;
    int depth = 0;
    for (;;) {
        while (i < L->len && is_ascii_ws(s[i])) i++;
        if (i >= L->len)
            return lfail(L, tag_pos, "unexpected end of template: the tag opened here is not closed "
                                     "(expected '%s')", block ? "%}" : "}}");
        char c = s[i];
        size_t rest = L->len - i;
        if (block) {
            if ((c == '-' || c == '+') && rest >= 3 && s[i + 1] == '%' && s[i + 2] == '}') {
                *end_mod = c;
                if (!push(L, JT_BLOCK_END, i)) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
                *p = i + 3;
                return 0;
            }
            if (c == '%' && rest >= 2 && s[i + 1] == '}') {
                *end_mod = 0;
                if (!push(L, JT_BLOCK_END, i)) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
                *p = i + 2;
                return 0;
            }
        } else if (depth == 0) {
            if (c == '-' && rest >= 3 && s[i + 1] == '}' && s[i + 2] == '}') {
                *end_mod = '-';
                if (!push(L, JT_VAR_END, i)) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
                *p = i + 3;
                return 0;
            }
            if (c == '}' && rest >= 2 && s[i + 1] == '}') {
                *end_mod = 0;
                if (!push(L, JT_VAR_END, i)) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
                *p = i + 2;
                return 0;
            }
        }
        if (c == '{' && rest >= 2 && (s[i + 1] == '%' || s[i + 1] == '{' || s[i + 1] == '#') &&
            !(s[i + 1] == '{' && !block))
        {
            int line, col;
            linecol(L, i, &line, &col);
            return lfail(L, tag_pos, "'%s' is not closed: expected '%s' before the '%.2s' at line %d, "
                                     "column %d", block ? "{%" : "{{", block ? "%}" : "}}", s + i, line, col);
        }
        if (c == '\'' || c == '"') {
            if (lex_string(L, &i)) return -1;
            continue;
        }
        if (is_digit(c)) {
            if (lex_number(L, &i)) return -1;
            continue;
        }
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            size_t j = i;
            while (j < L->len && ((s[j] >= 'a' && s[j] <= 'z') || (s[j] >= 'A' && s[j] <= 'Z') ||
                                  s[j] == '_' || is_digit(s[j])))
                j++;
            jtok *t = push(L, JT_NAME, i);
            if (!t) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
            t->s = jarena_strndup(L->a, s + i, j - i);
            t->n = j - i;
            if (!t->s) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
            i = j;
            continue;
        }
        size_t k;
        for (k = 0; k < sizeof OPS / sizeof OPS[0]; k++) {
            size_t ol = strlen(OPS[k].op);
            if (rest >= ol && memcmp(s + i, OPS[k].op, ol) == 0) break;
        }
        if (k == sizeof OPS / sizeof OPS[0]) {
            size_t j = i;
            int cp = jutf8_next(s, L->len, &j);
            char u[5] = {0};
            if (cp < 0x80) u[0] = (char)cp;
            else memcpy(u, s + i, j - i < 4 ? j - i : 4);
            return lfail(L, i, "unexpected character '%s'", u);
        }
        int kind = OPS[k].kind;
        if (kind == JT_LPAREN || kind == JT_LBRACKET || kind == JT_LBRACE) depth++;
        if ((kind == JT_RPAREN || kind == JT_RBRACKET || kind == JT_RBRACE) && depth > 0) depth--;
        if (!push(L, kind, i)) return wick_fail_code(L->err, WICK_E_NO_MEMORY, "out of memory");
        i += strlen(OPS[k].op);
    }
}

/* At s[i] = "{%": is this "{%[-+]? raw [-+]?%}"? Fills the content start. */
static bool match_raw_begin(const char *s, size_t len, size_t i, size_t *after, char *end_mod) {
    size_t j = i + 2;
    if (j < len && (s[j] == '-' || s[j] == '+')) j++;
    while (j < len && is_ascii_ws(s[j])) j++;
    if (j + 3 > len || memcmp(s + j, "raw", 3) != 0) return false;
    j += 3;
    if (j < len && !is_ascii_ws(s[j]) && s[j] != '-' && s[j] != '+' && s[j] != '%') return false;
    while (j < len && is_ascii_ws(s[j])) j++;
    *end_mod = 0;
    if (j < len && (s[j] == '-' || s[j] == '+')) *end_mod = s[j++];
    if (j + 2 > len || s[j] != '%' || s[j + 1] != '}') return false;
    *after = j + 2;
    return true;
}

/* Find "{%[-+]? endraw [-+]?%}" from i: its start, mod of its opener, end, mod of its closer. */
static bool find_raw_end(const char *s, size_t len, size_t i, size_t *tag, char *open_mod,
                         size_t *after, char *close_mod) {
    for (; i + 1 < len; i++) {
        if (s[i] != '{' || s[i + 1] != '%') continue;
        size_t j = i + 2;
        char om = 0;
        if (j < len && (s[j] == '-' || s[j] == '+')) om = s[j++];
        while (j < len && is_ascii_ws(s[j])) j++;
        if (j + 6 > len || memcmp(s + j, "endraw", 6) != 0) continue;
        j += 6;
        while (j < len && is_ascii_ws(s[j])) j++;
        char cm = 0;
        if (j < len && (s[j] == '-' || s[j] == '+')) cm = s[j++];
        if (j + 2 > len || s[j] != '%' || s[j + 1] != '}') continue;
        *tag = i;
        *open_mod = om;
        *after = j + 2;
        *close_mod = cm;
        return true;
    }
    return false;
}

/* Whitespace the previous tag's closer strips from the next text. */
typedef struct after_tag {
    bool strip_all; /* "-%}" "-}}" "-#}" */
    bool trim_nl;   /* trim_blocks after "%}" / "#}" */
} after_tag;

static size_t apply_after(const char *s, size_t ts, size_t te, after_tag at, bool *line_start) {
    if (at.strip_all) {
        size_t k;
        while (ts < te && (k = ws_fwd(s, ts, te)) > 0) {
            *line_start = s[ts] == '\n';
            ts += k;
        }
    } else if (at.trim_nl && ts < te && s[ts] == '\n') {
        ts++;
        *line_start = true;
    }
    return ts;
}

int jinja_lex(jarena *a, const char *src, size_t len, jtok **toks, size_t *n_toks,
              wick_error *err) {
    *toks = NULL;
    *n_toks = 0;
    /* newline normalization, then drop one trailing "\n" */
    char *s = malloc(len + 1);
    if (!s) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        if (src[i] == '\r') {
            s[n++] = '\n';
            if (i + 1 < len && src[i + 1] == '\n') i++;
        } else {
            s[n++] = src[i];
        }
    }
    if (n > 0 && s[n - 1] == '\n') n--;
    s[n] = 0;

    lexer L = {.a = a, .s = s, .len = n, .err = err, .lc_line = 1, .lc_col = 1};
    after_tag at = {0};
    size_t pos = 0;
    int rc = 0;
    for (;;) {
        size_t tag = pos;
        while (tag + 1 < n && !(s[tag] == '{' && (s[tag + 1] == '%' || s[tag + 1] == '{' ||
                                                  s[tag + 1] == '#')))
            tag++;
        if (tag + 1 >= n) tag = n;
        bool line_start = pos == 0;
        size_t ts = apply_after(s, pos, tag, at, &line_start), te = tag;
        at = (after_tag){0};
        if (tag == n) {
            if ((rc = emit_text(&L, ts, te))) break;
            break;
        }
        char kind = s[tag + 1];
        char mod = tag + 2 < n ? s[tag + 2] : 0;
        size_t raw_after;
        char raw_mod;
        if (kind == '%' && match_raw_begin(s, n, tag, &raw_after, &raw_mod)) {
            strip_before_tag(s, &ts, &te, kind, mod, line_start);
            if ((rc = emit_text(&L, ts, te))) break;
            size_t etag, eafter;
            char eopen, eclose;
            if (!find_raw_end(s, n, raw_after, &etag, &eopen, &eafter, &eclose)) {
                rc = lfail(&L, tag, "unexpected end of template: {%% raw %%} without {%% endraw %%}");
                break;
            }
            bool ls = false;
            size_t cs = apply_after(s, raw_after, etag, (after_tag){raw_mod == '-', false}, &ls);
            size_t ce = etag;
            strip_before_tag(s, &cs, &ce, '%', eopen, ls);
            if ((rc = emit_text(&L, cs, ce))) break;
            at = (after_tag){eclose == '-', eclose != '+'};
            pos = eafter;
            continue;
        }
        strip_before_tag(s, &ts, &te, kind, mod, line_start);
        if ((rc = emit_text(&L, ts, te))) break;
        if (kind == '#') {
            size_t p = tag + 2;
            while (p + 1 < n && !(s[p] == '#' && s[p + 1] == '}')) p++;
            if (p + 1 >= n) {
                rc = lfail(&L, tag, "unexpected end of template: comment not closed (expected '#}')");
                break;
            }
            char em = p > tag + 2 && (s[p - 1] == '-' || s[p - 1] == '+') ? s[p - 1] : 0;
            at = (after_tag){em == '-', em != '+'};
            pos = p + 2;
            continue;
        }
        bool block = kind == '%';
        if (!push(&L, block ? JT_BLOCK_BEGIN : JT_VAR_BEGIN, tag)) {
            rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
            break;
        }
        size_t p = tag + 2 + ((mod == '-' || mod == '+') ? 1 : 0);
        char em = 0;
        if ((rc = lex_tag(&L, &p, block, tag, &em))) break;
        at = (after_tag){em == '-', block && em != '+'};
        pos = p;
    }
    if (rc == 0 && !push(&L, JT_EOF, n)) rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    free(s);
    if (rc) {
        free(L.t);
        return -1;
    }
    *toks = L.t;
    *n_toks = L.n;
    return 0;
}
