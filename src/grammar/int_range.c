/* int_range.c — the decimal integers in a range as a regular expression
 * (JSON spelling: no leading zeros, no plus sign, -0 not produced), for
 * JSON Schema's minimum/maximum on integers. A range of non-negative
 * numbers is cut by digit count, then digit by digit: the first digit
 * fixed while the rest run over a smaller range. */
#include "grammar/int_range.h"

#include <stdio.h>
#include <string.h>

/* Same-length digit strings lo <= hi (n digits, leading zeros allowed). */
static rx_id same_length(rx_store *s, const char *lo, const char *hi, int n) {
    if (n == 0) return RX_EPSILON;
    if (n == 1) return rx_byte_range(s, (unsigned char)lo[0], (unsigned char)hi[0]);
    if (lo[0] == hi[0]) return rx_concat(s, rx_byte_range(s, (unsigned char)lo[0], (unsigned char)lo[0]), same_length(s, lo + 1, hi + 1, n - 1));
    char nines[24], zeros[24];
    memset(nines, '9', (size_t)n), memset(zeros, '0', (size_t)n);
    const bool lo_rest_zero = memcmp(lo + 1, zeros, (size_t)n - 1) == 0, hi_rest_nine = memcmp(hi + 1, nines, (size_t)n - 1) == 0;
    const unsigned first_full = (unsigned char)lo[0] + (lo_rest_zero ? 0 : 1), last_full = (unsigned char)hi[0] - (hi_rest_nine ? 0 : 1);
    rx_id r = RX_NOTHING;
    if (!lo_rest_zero)
        r = rx_or(s, r, rx_concat(s, rx_byte_range(s, (unsigned char)lo[0], (unsigned char)lo[0]), same_length(s, lo + 1, nines, n - 1)));
    if (first_full <= last_full)
        r = rx_or(s, r, rx_concat(s, rx_byte_range(s, first_full, last_full), rx_repeat(s, rx_byte_range(s, '0', '9'), n - 1, n - 1)));
    if (!hi_rest_nine)
        r = rx_or(s, r, rx_concat(s, rx_byte_range(s, (unsigned char)hi[0], (unsigned char)hi[0]), same_length(s, zeros, hi + 1, n - 1)));
    return r;
}

static int digits(uint64_t v) {
    int d = 1;
    while (v >= 10) v /= 10, d++;
    return d;
}

static uint64_t pow10u(int d) {
    uint64_t p = 1;
    while (d-- > 0) p *= 10;
    return p;
}

/* a..b (a <= b), or a.. when !bounded. */
static rx_id non_negative(rx_store *s, uint64_t a, uint64_t b, bool bounded) {
    rx_id r = RX_NOTHING;
    const int da = digits(a), db = bounded ? digits(b) : 19;
    for (int d = da; d <= db; d++) {
        const uint64_t lo = d == da ? a : pow10u(d - 1), hi = !bounded || d < db ? pow10u(d) - 1 : b;
        if (lo > hi) continue;
        char l[24], h[24];
        snprintf(l, sizeof l, "%0*llu", d, (unsigned long long)lo);
        snprintf(h, sizeof h, "%0*llu", d, (unsigned long long)hi);
        r = rx_or(s, r, same_length(s, l, h, d));
    }
    if (!bounded) /* 20 digits and more */
        r = rx_or(s, r, rx_concat(s, rx_byte_range(s, '1', '9'), rx_repeat(s, rx_byte_range(s, '0', '9'), 19, RX_INF)));
    return r;
}

rx_id rx_int_range(rx_store *s, bool has_lo, int64_t lo, bool has_hi, int64_t hi) {
    if (has_lo && has_hi && lo > hi) return RX_NOTHING;
    rx_id r = RX_NOTHING;
    /* negative part: magnitudes max(1, -hi) .. -lo */
    if (!has_lo || lo < 0) {
        const uint64_t mag_lo = has_hi && hi < 0 ? (uint64_t)(-(hi + 1)) + 1 : 1;
        const uint64_t mag_hi = has_lo ? (uint64_t)(-(lo + 1)) + 1 : 0;
        if (!has_lo || mag_lo <= mag_hi)
            r = rx_or(s, r, rx_concat(s, rx_byte_range(s, '-', '-'), non_negative(s, mag_lo, mag_hi, has_lo)));
    }
    /* non-negative part */
    if (!has_hi || hi >= 0) {
        const uint64_t a = has_lo && lo > 0 ? (uint64_t)lo : 0;
        if (!has_hi || (uint64_t)hi >= a) r = rx_or(s, r, non_negative(s, a, has_hi ? (uint64_t)hi : 0, has_hi));
    }
    return r;
}
