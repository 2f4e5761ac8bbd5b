/* json_out.c — JSON string and number writers into a wbuf, and the UTF-8
 * prefix check (see json_out.h). */
#include "serve/json_out.h"

#include <math.h>
#include <stdio.h>

#include "text/utf8_stream.h"

void json_put_str(wbuf *b, const char *s, size_t n) {
    if (!wbuf_reserve(b, n + 2)) return;
    wbuf_put(b, "\"", 1);
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0; /* run: start of the bytes copied as they are */
    while (i < n) {
        unsigned char c = u[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            continue;
        }
        int sl = c < 0x80 ? 1 : utf8_seq_len(u + i, n - i);
        if (c >= 0x80 && sl > 0) {
            i += (size_t)sl;
            continue;
        }
        wbuf_put(b, s + run, i - run);
        char esc[8];
        switch (c) {
        case '"': wbuf_put(b, "\\\"", 2); break;
        case '\\': wbuf_put(b, "\\\\", 2); break;
        case '\n': wbuf_put(b, "\\n", 2); break;
        case '\r': wbuf_put(b, "\\r", 2); break;
        case '\t': wbuf_put(b, "\\t", 2); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                wbuf_put(b, esc, 6);
            } else {
                wbuf_put(b, "\xEF\xBF\xBD", 3); /* invalid UTF-8 byte */
            }
        }
        i++;
        run = i;
    }
    wbuf_put(b, s + run, n - run);
    wbuf_put(b, "\"", 1);
}

void json_put_num(wbuf *b, double v) {
    if (isnan(v)) wbuf_puts(b, "null");
    else if (isinf(v)) wbuf_puts(b, v < 0 ? "-9999.0" : "9999.0");
    else wbuf_printf(b, "%.9g", v);
}

size_t utf8_valid_len(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        int sl = utf8_seq_len(u + i, n - i);
        if (sl <= 0) return i;
        i += (size_t)sl;
    }
    return n;
}
