/* sbuf.h — a growable byte buffer for building HTTP bodies, SSE events and
 * NDJSON lines, with a JSON string writer that never emits invalid UTF-8. */
#ifndef WICK_SERVE_SBUF_H
#define WICK_SERVE_SBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sbuf {
    char *data; /* NUL-terminated when len > 0 */
    size_t len, cap;
    bool oom;   /* an allocation failed: the content is incomplete */
} sbuf;

void sbuf_put(sbuf *b, const char *s, size_t n);
void sbuf_puts(sbuf *b, const char *s);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal (quotes included) of n bytes of s; control characters
 * are escaped and invalid UTF-8 becomes U+FFFD. */
void sbuf_json_str(sbuf *b, const char *s, size_t n);
/* A JSON number for a float (non-finite values become null, as JSON has no
 * infinities; -inf logprobs become -9999.0 as OpenAI sends). */
void sbuf_json_num(sbuf *b, double v);
void sbuf_reset(sbuf *b); /* len = 0, memory kept */
void sbuf_free(sbuf *b);
/* Hand the data over (malloc'd, NUL-terminated, never NULL unless oom) and empty b. */
char *sbuf_take(sbuf *b, size_t *len);

/* Length of the longest prefix of s that is valid UTF-8. */
size_t sbuf_utf8_valid(const char *s, size_t n);

#endif
