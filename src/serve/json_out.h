/* json_out.h — the server's JSON writers into a wbuf (core/buf.h): string
 * literals that never carry invalid UTF-8, numbers, and the UTF-8 check the
 * request readers share. */
#ifndef WICK_SERVE_JSON_OUT_H
#define WICK_SERVE_JSON_OUT_H

#include <stddef.h>

#include "core/buf.h"

/* A JSON string literal (quotes included) of n bytes of s; control characters
 * are escaped and invalid UTF-8 becomes U+FFFD. */
void json_put_str(wbuf *b, const char *s, size_t n);
/* A JSON number for a float (non-finite values become null, as JSON has no
 * infinities; -inf logprobs become -9999.0 as OpenAI sends). */
void json_put_num(wbuf *b, double v);

/* Length of the longest prefix of s that is valid UTF-8. */
size_t utf8_valid_len(const char *s, size_t n);

#endif
