/* sbuf.c — the growable byte buffer of the server (see sbuf.h). */
#include "serve/sbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/utf8_stream.h"

static bool grow(sbuf *b, size_t extra) {
    if (b->oom) return false;
    if (b->len + extra + 1 <= b->cap) return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1) cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->oom = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void sbuf_put(sbuf *b, const char *s, size_t n) {
    if (!grow(b, n)) return;
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

void sbuf_puts(sbuf *b, const char *s) { sbuf_put(b, s, strlen(s)); }

void sbuf_printf(sbuf *b, const char *fmt, ...) {
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof tmp) {
        sbuf_put(b, tmp, (size_t)n);
        return;
    }
    if (!grow(b, (size_t)n)) return;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sbuf_json_str(sbuf *b, const char *s, size_t n) {
    if (!grow(b, n + 2)) return;
    sbuf_put(b, "\"", 1);
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
        sbuf_put(b, s + run, i - run);
        char esc[8];
        switch (c) {
        case '"': sbuf_put(b, "\\\"", 2); break;
        case '\\': sbuf_put(b, "\\\\", 2); break;
        case '\n': sbuf_put(b, "\\n", 2); break;
        case '\r': sbuf_put(b, "\\r", 2); break;
        case '\t': sbuf_put(b, "\\t", 2); break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04x", c);
                sbuf_put(b, esc, 6);
            } else {
                sbuf_put(b, "\xEF\xBF\xBD", 3); /* invalid UTF-8 byte */
            }
        }
        i++;
        run = i;
    }
    sbuf_put(b, s + run, n - run);
    sbuf_put(b, "\"", 1);
}

void sbuf_json_num(sbuf *b, double v) {
    if (isnan(v)) sbuf_puts(b, "null");
    else if (isinf(v)) sbuf_puts(b, v < 0 ? "-9999.0" : "9999.0");
    else sbuf_printf(b, "%.9g", v);
}

void sbuf_reset(sbuf *b) {
    b->len = 0;
    if (b->data) b->data[0] = 0;
}

void sbuf_free(sbuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *sbuf_take(sbuf *b, size_t *len) {
    if (!b->data && !b->oom) grow(b, 0);
    char *d = b->oom ? NULL : b->data;
    if (b->oom) free(b->data);
    if (len) *len = d ? b->len : 0;
    if (d) d[b->len] = 0;
    memset(b, 0, sizeof *b);
    return d;
}

size_t sbuf_utf8_valid(const char *s, size_t n) {
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
