/* utf8.c — UTF-8 validation, repair (each maximal invalid subpart -> one
 * U+FFFD), decode and encode for the tokenizers. */
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

#include "text/tok_internal.h"

/* Length of a valid sequence at s (n bytes available), or 0 if invalid. */
static size_t valid_seq(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80) return 0;
        if (c == 0xE0 && s[1] < 0xA0) return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0) return 0; /* surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90) return 0;  /* overlong */
        if (c == 0xF4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
        return 4;
    }
    return 0;
}

size_t tok_utf8_valid_prefix(const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        /* ASCII fast path, 8 bytes at a time */
        while (i + 8 <= len) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
        }
        if (i >= len) break;
        size_t k = valid_seq(s + i, len - i);
        if (!k) return i;
        i += k;
    }
    return len;
}

/* Bytes at s (n > 0, not a valid sequence) that one U+FFFD replaces: the
 * maximal subpart of a well-formed sequence (a valid lead byte and the valid
 * continuation bytes that follow it, cut short), else 1. This is the Unicode
 * "substitution of maximal subparts" that Python, Rust and WHATWG decoders use. */
static size_t invalid_run(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t want;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) want = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        want = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        want = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 1;
    size_t k = 1;
    while (k < want && k < n) {
        unsigned b = s[k];
        if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) break;
        k++;
    }
    return k;
}

size_t tok_utf8_count_invalid(const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = tok_utf8_valid_prefix(str, len), bad = 0;
    while (i < len) {
        size_t k = valid_seq(s + i, len - i);
        if (k) {
            i += k;
        } else {
            k = invalid_run(s + i, len - i);
            bad += k;
            i += k;
        }
    }
    return bad;
}

char *tok_utf8_sanitize(const char *str, size_t len, size_t *out_len) {
    const unsigned char *s = (const unsigned char *)str;
    /* worst case every byte becomes 3 bytes */
    if (len > (SIZE_MAX - 1) / 3) return NULL;
    char *out = malloc(len * 3 + 1);
    if (!out) return NULL;
    size_t o = 0, i = 0;
    while (i < len) {
        size_t k = valid_seq(s + i, len - i);
        if (k) {
            memcpy(out + o, s + i, k);
            o += k;
            i += k;
        } else {
            out[o++] = (char)0xEF;
            out[o++] = (char)0xBF;
            out[o++] = (char)0xBD;
            i += invalid_run(s + i, len - i);
        }
    }
    out[o] = 0;
    *out_len = o;
    return out;
}

int tok_utf8_decode(const char *str, size_t len, uint32_t *cp) {
    const unsigned char *s = (const unsigned char *)str;
    int n = tok_utf8_len(s[0]);
    if ((size_t)n > len) n = 1;
    switch (n) {
    case 1: *cp = s[0]; break;
    case 2: *cp = ((uint32_t)(s[0] & 0x1F) << 6) | (s[1] & 0x3F); break;
    case 3: *cp = ((uint32_t)(s[0] & 0x0F) << 12) | ((uint32_t)(s[1] & 0x3F) << 6) | (s[2] & 0x3F); break;
    default:
        *cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3F) << 12) |
              ((uint32_t)(s[2] & 0x3F) << 6) | (s[3] & 0x3F);
        break;
    }
    return n;
}

int tok_utf8_encode(uint32_t cp, char out[4]) {
    /* utf8proc writes 1-4 bytes for any code point up to U+10FFFF. */
    return (int)utf8proc_encode_char((utf8proc_int32_t)cp, (utf8proc_uint8_t *)out);
}
