/* error.h — the error record every fallible library function fills.
 *
 * Convention: a function that can fail returns int (0 = ok, -1 = error) or a
 * pointer (NULL = error) and takes a `wick_error *err` (may be NULL) that it
 * fills with one human-readable line and a wick_errcode. Library code never
 * prints or exits. */
#ifndef WICK_CORE_ERROR_H
#define WICK_CORE_ERROR_H

#include "wick.h"

/* Format a message into err (if non-NULL) with code WICK_E_INVALID: most
 * failures are a bad argument, and the sources of other kinds (memory, I/O,
 * file format, queue full, ...) say so with wick_fail_code. Always returns
 * -1 so callers can write `return wick_fail(err, "...", ...);`. */
int wick_fail(wick_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Format a message into err (if non-NULL) with the given code. Returns -1. */
int wick_fail_code(wick_error *err, wick_errcode code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepend context ("loading X: ") to an existing message; the code stays.
 * Returns -1. */
int wick_fail_prefix(wick_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reset err (if non-NULL) to "no error": empty message, WICK_OK. */
void wick_error_clear(wick_error *err);

#endif
