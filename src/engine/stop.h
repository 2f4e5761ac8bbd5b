/* stop.h — stop strings matched across token boundaries.
 *
 * Generated text goes through stop_feed before it reaches the caller. Text
 * that could still be the start of a stop string is held back; when a stop
 * string appears, everything before it is released and the rest (the stop
 * string included) is never emitted. Buffers are sized at init. */
#ifndef WICK_ENGINE_STOP_H
#define WICK_ENGINE_STOP_H

#include <stdbool.h>
#include <stddef.h>

#include "wick.h"

typedef struct stop_matcher {
    const char *const *stops;
    int n_stops;
    size_t max_len;  /* longest stop string */
    char *held;      /* text that may start a stop string (< max_len bytes) */
    char *work;      /* held text + the chunk being fed; what stop_feed returns points here */
    size_t n_held, max_chunk;
} stop_matcher;

/* max_chunk: the most bytes one stop_feed call will pass. Empty stop strings are errors. */
int stop_init(stop_matcher *m, const char *const *stops, int n_stops, size_t max_chunk,
              wick_error *err);
void stop_free(stop_matcher *m);

/* Feed len bytes; *out and *out_len get the text that is now safe to emit.
 * Returns true if a stop string matched (then *out is the text before it). */
bool stop_feed(stop_matcher *m, const char *text, size_t len, const char **out, size_t *out_len);
/* At the end of generation: release whatever is still held. */
size_t stop_flush(stop_matcher *m, const char **out);

#endif
