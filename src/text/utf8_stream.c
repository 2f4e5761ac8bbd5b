/* utf8_stream.c — UTF-8-safe streaming of token bytes (see utf8_stream.h). */
#include "text/utf8_stream.h"

#include <string.h>

void utf8_stream_init(utf8_stream *u) { u->n_pending = 0; }

int utf8_seq_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    int len;
    unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else
        return 0;
    for (int i = 1; i < len; i++) {
        if ((size_t)i >= n) return -1;
        unsigned b = s[i];
        if (i == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
    }
    return len;
}

static size_t put_replacement(char *o) {
    memcpy(o, "\xEF\xBF\xBD", 3);
    return 3;
}

size_t utf8_stream_push(utf8_stream *u, const char *bytes, size_t n) {
    unsigned char buf[UTF8_STREAM_OUT + 4];
    if (n > UTF8_STREAM_OUT) n = UTF8_STREAM_OUT;
    size_t len = (size_t)u->n_pending;
    memcpy(buf, u->pending, len);
    memcpy(buf + len, bytes, n);
    len += n;
    size_t i = 0, o = 0;
    u->n_pending = 0;
    while (i < len) {
        int l = utf8_seq_len(buf + i, len - i);
        if (l > 0) {
            memcpy(u->out + o, buf + i, (size_t)l);
            o += (size_t)l;
            i += (size_t)l;
        } else if (l < 0) {
            u->n_pending = (int)(len - i);
            memcpy(u->pending, buf + i, len - i);
            break;
        } else {
            o += put_replacement(u->out + o);
            i++;
        }
    }
    return o;
}

size_t utf8_stream_finish(utf8_stream *u) {
    size_t o = 0;
    if (u->n_pending) o = put_replacement(u->out);
    u->n_pending = 0;
    return o;
}
