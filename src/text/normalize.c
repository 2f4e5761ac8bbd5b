/* normalize.c — the normalizer steps run on each raw-text fragment before
 * pre-tokenization: Unicode NFC/NFD/NFKC/NFKD (utf8proc), lowercase, prepend,
 * literal replace, strip. Steps run in order; the result is s->nbuf. */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "core/buf.h"
#include "core/error.h"
#include "text/tok_internal.h"

static int reserve(char **buf, size_t *cap, size_t need) {
    return GROW_ARRAY(*buf, need, cap) ? 0 : -1;
}

/* swap nbuf and nbuf2 after writing the result into nbuf2 */
static void swap_bufs(tok_scratch *s, size_t new_len) {
    char *b = s->nbuf;
    size_t c = s->ncap;
    s->nbuf = s->nbuf2;
    s->ncap = s->ncap2;
    s->nbuf2 = b;
    s->ncap2 = c;
    s->nlen = new_len;
}

static bool all_below(const char *s, size_t n, unsigned char limit) {
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= limit) return false;
    return true;
}

static int unicode_norm(tok_scratch *s, tok_norm_kind kind, wick_error *err) {
    /* fast paths: text below U+0300 is NFC already; ASCII is invariant under all four */
    if (kind == NORM_NFC ? all_below(s->nbuf, s->nlen, 0xCC) : all_below(s->nbuf, s->nlen, 0x80))
        return 0;
    int opt = UTF8PROC_STABLE;
    switch (kind) {
    case NORM_NFC: opt |= UTF8PROC_COMPOSE; break;
    case NORM_NFD: opt |= UTF8PROC_DECOMPOSE; break;
    case NORM_NFKC: opt |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    default: opt |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
    }
    utf8proc_uint8_t *dst = NULL;
    utf8proc_ssize_t n =
        utf8proc_map((const utf8proc_uint8_t *)s->nbuf, (utf8proc_ssize_t)s->nlen, &dst, (utf8proc_option_t)opt);
    if (n < 0) {
        free(dst);
        return wick_fail(err, "tokenizer: normalization failed: %s", utf8proc_errmsg(n));
    }
    if (reserve(&s->nbuf2, &s->ncap2, (size_t)n + 1)) {
        free(dst);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    }
    memcpy(s->nbuf2, dst, (size_t)n);
    free(dst);
    swap_bufs(s, (size_t)n);
    return 0;
}

static int lowercase(tok_scratch *s, wick_error *err) {
    if (reserve(&s->nbuf2, &s->ncap2, s->nlen * 2 + 4)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    size_t o = 0, i = 0;
    while (i < s->nlen) {
        unsigned char c = (unsigned char)s->nbuf[i];
        if (c < 0x80) {
            s->nbuf2[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
            i++;
            continue;
        }
        uint32_t cp;
        int k = tok_utf8_decode(s->nbuf + i, s->nlen - i, &cp);
        utf8proc_int32_t lc = utf8proc_tolower((utf8proc_int32_t)cp);
        char u[4];
        int m = tok_utf8_encode((uint32_t)lc, u);
        if (reserve(&s->nbuf2, &s->ncap2, o + (size_t)m + (s->nlen - i) * 2 + 4))
            return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
        memcpy(s->nbuf2 + o, u, (size_t)m);
        o += (size_t)m;
        i += (size_t)k;
    }
    swap_bufs(s, o);
    return 0;
}

static int replace(tok_scratch *s, const tok_norm *n, wick_error *err) {
    if (n->alen == 0) return 0;
    size_t count = 0;
    for (const char *p = s->nbuf, *e = s->nbuf + s->nlen; (p = memmem(p, (size_t)(e - p), n->a, n->alen));
         p += n->alen)
        count++;
    if (!count) return 0;
    size_t nl = s->nlen - count * n->alen + count * n->blen;
    if (reserve(&s->nbuf2, &s->ncap2, nl + 1)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    size_t o = 0;
    const char *p = s->nbuf, *e = s->nbuf + s->nlen;
    for (;;) {
        const char *q = memmem(p, (size_t)(e - p), n->a, n->alen);
        if (!q) break;
        memcpy(s->nbuf2 + o, p, (size_t)(q - p));
        o += (size_t)(q - p);
        if (n->blen) memcpy(s->nbuf2 + o, n->b, n->blen);
        o += n->blen;
        p = q + n->alen;
    }
    memcpy(s->nbuf2 + o, p, (size_t)(e - p));
    o += (size_t)(e - p);
    swap_bufs(s, o);
    return 0;
}

static bool ws(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int tok_normalize(const tokenizer *t, const char *text, size_t len, tok_scratch *s,
                  wick_error *err) {
    return tok_normalize_part(t, text, len, true, s, err);
}

int tok_normalize_part(const tokenizer *t, const char *text, size_t len, bool start, tok_scratch *s,
                       wick_error *err) {
    if (reserve(&s->nbuf, &s->ncap, len + 1)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    memcpy(s->nbuf, text, len);
    s->nlen = len;
    for (int i = 0; i < t->n_norms; i++) {
        const tok_norm *n = &t->norms[i];
        if (s->nlen == 0) break;
        switch (n->kind) {
        case NORM_NFC:
        case NORM_NFD:
        case NORM_NFKC:
        case NORM_NFKD:
            if (unicode_norm(s, n->kind, err)) return -1;
            break;
        case NORM_LOWERCASE:
            if (lowercase(s, err)) return -1;
            break;
        case NORM_PREPEND:
            if (!start) break;
            if (reserve(&s->nbuf2, &s->ncap2, s->nlen + n->alen + 1))
                return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
            memcpy(s->nbuf2, n->a, n->alen);
            memcpy(s->nbuf2 + n->alen, s->nbuf, s->nlen);
            swap_bufs(s, s->nlen + n->alen);
            break;
        case NORM_REPLACE:
            if (replace(s, n, err)) return -1;
            break;
        case NORM_STRIP: {
            size_t b = 0, e = s->nlen;
            if (n->flag1)
                while (b < e && ws(s->nbuf[b])) b++;
            if (n->flag2)
                while (e > b && ws(s->nbuf[e - 1])) e--;
            memmove(s->nbuf, s->nbuf + b, e - b);
            s->nlen = e - b;
            break;
        }
        }
    }
    if (reserve(&s->nbuf, &s->ncap, s->nlen + 1)) return wick_fail_code(err, WICK_E_NO_MEMORY, "tokenizer: out of memory");
    s->nbuf[s->nlen] = 0;
    return 0;
}
