/* buf.c — the growable byte buffer and the array growth step (see buf.h). */
#include "core/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WBUF_FIRST 256 /* bytes of a buffer's first allocation */

bool wbuf_reserve(wbuf *b, size_t extra) {
    if (b->oom) return false;
    if (extra > SIZE_MAX - 1 - b->len || (b->max && extra > b->max - (b->len < b->max ? b->len : b->max))) {
        b->oom = true;
        return false;
    }
    const size_t need = b->len + extra + 1; /* the NUL */
    if (need <= b->cap) return true;
    size_t cap = b->cap ? b->cap : WBUF_FIRST;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (b->max && cap > b->max + 1) cap = b->max + 1; /* need <= max + 1 here */
    char *d = realloc(b->data, cap);
    if (!d) {
        b->oom = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

bool wbuf_put(wbuf *b, const void *s, size_t n) {
    if (!wbuf_reserve(b, n)) return false;
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
    return true;
}

bool wbuf_puts(wbuf *b, const char *s) { return wbuf_put(b, s, strlen(s)); }

bool wbuf_printf(wbuf *b, const char *fmt, ...) {
    char tmp[256]; /* most pieces fit: one formatting pass */
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return false;
    if ((size_t)n < sizeof tmp) return wbuf_put(b, tmp, (size_t)n);
    if (!wbuf_reserve(b, (size_t)n)) return false;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return true;
}

void wbuf_reset(wbuf *b) {
    b->len = 0;
    if (b->data) b->data[0] = 0;
}

void wbuf_free(wbuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

char *wbuf_take(wbuf *b, size_t *len) {
    if (!b->data) wbuf_reserve(b, 0); /* "" rather than NULL */
    char *d = b->oom ? NULL : b->data;
    if (!d) free(b->data);
    else d[b->len] = 0;
    if (len) *len = d ? b->len : 0;
    memset(b, 0, sizeof *b);
    return d;
}

bool grow_array(void *arr, size_t elem, size_t need, size_t *cap) {
    if (need <= *cap) return true;
    if (elem == 0 || need > SIZE_MAX / elem) return false;
    size_t c = *cap < 8 ? 8 : *cap;
    while (c < need) c = c > SIZE_MAX / 2 ? need : c * 2;
    if (c > SIZE_MAX / elem) c = need;
    void *p;
    memcpy(&p, arr, sizeof p); /* arr is the address of some T *: read it as bytes */
    p = realloc(p, c * elem);
    if (!p) return false;
    memcpy(arr, &p, sizeof p);
    *cap = c;
    return true;
}
