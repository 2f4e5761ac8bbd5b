/* error.c — filling wick_error records (see error.h). */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int wick_fail(wick_error *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
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
    snprintf(err->msg, sizeof err->msg, "%s%s", prefix, old);
    return -1;
}
