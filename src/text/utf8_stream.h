/* utf8_stream.h — turns a stream of token byte pieces into text that never
 * ends inside a UTF-8 character: bytes of an unfinished sequence are held
 * until it completes; bytes that can never form a valid character are
 * replaced by U+FFFD. Fixed-size buffer, no allocation. */
#ifndef WICK_TEXT_UTF8_STREAM_H
#define WICK_TEXT_UTF8_STREAM_H

#include <stddef.h>

#define UTF8_STREAM_OUT 1024

typedef struct utf8_stream {
    unsigned char pending[4];
    int n_pending;
    char out[UTF8_STREAM_OUT * 3 + 16]; /* worst case: every input byte -> U+FFFD */
} utf8_stream;

void utf8_stream_init(utf8_stream *u);
/* Feed up to UTF8_STREAM_OUT bytes (longer input is processed in parts by
 * the caller); returns the number of complete bytes now in u->out. */
size_t utf8_stream_push(utf8_stream *u, const char *bytes, size_t n);
/* Flush held bytes (as U+FFFD) at the end of the stream. */
size_t utf8_stream_finish(utf8_stream *u);

/* Length of the valid UTF-8 sequence starting at s (1..4), or 0 if invalid,
 * or -1 if it is a valid prefix cut off by the end of the n bytes. */
int utf8_seq_len(const unsigned char *s, size_t n);

#endif
