/* error.h — the error record every fallible library function fills.
 *
 * Convention: a function that can fail returns int (0 = ok, -1 = error) or a
 * pointer (NULL = error) and takes a `wick_error *err` (may be NULL) that it
 * fills with one human-readable line. Library code never prints or exits. */
#ifndef WICK_CORE_ERROR_H
#define WICK_CORE_ERROR_H

#include "wick.h"

/* Format a message into err (if non-NULL). Always returns -1 so callers can
 * write `return wick_fail(err, "...", ...);`. */
int wick_fail(wick_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prepend context ("loading X: ") to an existing message. Returns -1. */
int wick_fail_prefix(wick_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
