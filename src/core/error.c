/* error.c — filling and clearing wick_error records (see error.h). */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 0)))
static int fail_v(wick_error *err, wick_errcode code, const char *fmt, va_list ap) {
    if (!err) return -1;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    err->code = code;
    return -1;
}

int wick_fail(wick_error *err, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(err, WICK_E_INVALID, fmt, ap);
    va_end(ap);
    return -1;
}

int wick_fail_code(wick_error *err, wick_errcode code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fail_v(err, code, fmt, ap);
    va_end(ap);
    return -1;
}

void wick_error_clear(wick_error *err) {
    if (!err) return;
    err->msg[0] = 0;
    err->code = WICK_OK;
}

int wick_fail_prefix(wick_error *err, const char *fmt, ...) {
    if (!err) return -1;
    char prefix[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    char old[sizeof err->msg];
    memcpy(old, err->msg, sizeof old);
    old[sizeof old - 1] = 0;
    size_t np = strlen(prefix), no = strlen(old), cap = sizeof err->msg - 1;
    if (np > cap) np = cap;
    if (no > cap - np) no = cap - np;
    memcpy(err->msg, prefix, np);
    memcpy(err->msg + np, old, no);
    err->msg[np + no] = 0;
    return -1;
}
