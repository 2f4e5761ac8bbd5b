/* regex_utf8.c — a range of Unicode code points as a byte expression: the
 * UTF-8 encodings of every code point in [lo, hi], surrogates excluded
 * (they have no UTF-8 form). The range is cut where the encoding's length
 * changes, then where the continuation bytes stop running from 0x80 to
 * 0xBF, until each piece is a sequence of byte ranges. */
#include "grammar/regex_internal.h"

static int utf8_len(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

static void utf8_encode(uint32_t c, uint8_t *b) {
    switch (utf8_len(c)) {
    case 1: b[0] = (uint8_t)c; break;
    case 2: b[0] = (uint8_t)(0xC0 | c >> 6), b[1] = (uint8_t)(0x80 | (c & 63)); break;
    case 3:
        b[0] = (uint8_t)(0xE0 | c >> 12), b[1] = (uint8_t)(0x80 | (c >> 6 & 63)), b[2] = (uint8_t)(0x80 | (c & 63));
        break;
    default:
        b[0] = (uint8_t)(0xF0 | c >> 18), b[1] = (uint8_t)(0x80 | (c >> 12 & 63));
        b[2] = (uint8_t)(0x80 | (c >> 6 & 63)), b[3] = (uint8_t)(0x80 | (c & 63));
        break;
    }
}

/* lo and hi encode to the same length. */
static rx_id same_length(rx_store *s, uint32_t lo, uint32_t hi) {
    const int len = utf8_len(lo);
    for (int i = 1; i < len; i++) {
        const uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) == (hi & ~m)) continue;
        if (lo & m) return rx_or(s, same_length(s, lo, lo | m), same_length(s, (lo | m) + 1, hi));
        if ((hi & m) != m) return rx_or(s, same_length(s, lo, (hi & ~m) - 1), same_length(s, hi & ~m, hi));
    }
    uint8_t a[4], b[4];
    utf8_encode(lo, a);
    utf8_encode(hi, b);
    rx_id r = RX_EPSILON;
    for (int i = len; i-- > 0;) r = rx_concat(s, rx_byte_range(s, a[i], b[i]), r);
    return r;
}

rx_id rx_codepoints(rx_store *s, uint32_t lo, uint32_t hi) {
    if (hi > 0x10FFFF) hi = 0x10FFFF;
    if (lo > hi) return RX_NOTHING;
    if (lo <= 0xDFFF && hi >= 0xD800) { /* the surrogates */
        const rx_id below = lo < 0xD800 ? rx_codepoints(s, lo, 0xD7FF) : RX_NOTHING;
        const rx_id above = hi > 0xDFFF ? rx_codepoints(s, 0xE000, hi) : RX_NOTHING;
        return rx_or(s, below, above);
    }
    static const uint32_t ends[] = {0x7F, 0x7FF, 0xFFFF};
    for (int i = 0; i < 3; i++)
        if (lo <= ends[i] && hi > ends[i])
            return rx_or(s, rx_codepoints(s, lo, ends[i]), rx_codepoints(s, ends[i] + 1, hi));
    return same_length(s, lo, hi);
}
