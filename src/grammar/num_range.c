/* num_range.c — decimal numbers in a range as a regular expression
 * (num_range.h). A strict bound becomes an inclusive one at the next double
 * (x > b holds for a double exactly when x >= nextafter(b)); each bound is
 * then written as the shortest decimal that reads back as it. Comparing
 * decimals exactly against such bounds keeps every accepted number inside
 * the range once read as a double, because rounding to a double never
 * reorders numbers. Non-negative numbers are cut by their integer part
 * (below, at or above each bound's), the fraction digits compared to a
 * bound's digit by digit; a negative number is "-" and a magnitude in the
 * mirrored range, above zero. */
#include "grammar/num_range.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grammar/int_range.h"

#define LIMIT 9007199254740992.0 /* 2^53 */

typedef struct dec {
    uint64_t ip;    /* integer part */
    char fp[400];   /* fraction digits, trailing zeros trimmed ("" when none) */
} dec;

/* d: non-negative v as its shortest round-tripping decimal. */
static void to_dec(double v, dec *d) {
    char buf[64];
    for (int p = 0; p < 17; p++) {
        snprintf(buf, sizeof buf, "%.*e", p, v);
        if (strtod(buf, NULL) == v) break;
    }
    /* buf: D[.DDD]e±X */
    char digits[24];
    int nd = 0;
    const char *q = buf;
    for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') digits[nd++] = *q;
    const int exp = atoi(q + 1); /* the first digit's place: 10^exp */
    d->ip = 0;
    int k = 0;
    for (int i = 0; i < nd; i++)
        if (exp - i >= 0) d->ip = d->ip * 10 + (uint64_t)(digits[i] - '0');
    for (int i = 0; i < exp + 1 - nd; i++) d->ip *= 10; /* trailing integer zeros */
    for (int pos = -1; pos >= exp - nd + 1 && k < (int)sizeof d->fp - 1; pos--) {
        const int i = exp - pos; /* the digit at place 10^pos */
        d->fp[k++] = i >= 0 && i < nd ? digits[i] : '0';
    }
    while (k > 0 && d->fp[k - 1] == '0') k--;
    d->fp[k] = 0;
}

static rx_id digit(rx_store *s, char lo, char hi) { return rx_byte_range(s, (unsigned char)lo, (unsigned char)hi); }
static rx_id digits_any(rx_store *s, int min) { return rx_repeat(s, digit(s, '0', '9'), min, RX_INF); }

/* Fraction digits f (after the point; "" for none) with lo <= 0.f <= hi
 * where lo, hi are fraction digit strings (NULL: no bound, i.e. 0 and 1),
 * given the digits before position j equal lo's (tl) and hi's (th). */
static rx_id frac(rx_store *s, const char *lo, const char *hi, size_t j, bool tl, bool th, bool nonempty) {
    if (tl && j >= strlen(lo)) tl = false; /* the rest of lo is zeros: any rest is >= */
    if (th && j >= strlen(hi)) /* the rest of hi is zeros: so must ours be */
        return tl ? RX_NOTHING : rx_repeat(s, digit(s, '0', '0'), nonempty ? 1 : 0, RX_INF);
    if (!tl && !th) return digits_any(s, nonempty ? 1 : 0);
    rx_id r = !nonempty && !tl ? RX_EPSILON : RX_NOTHING; /* ending here: 0 <= lo's rest only if that is 0 */
    const char a = tl ? lo[j] : '0', b = th ? hi[j] : '9';
    if (a > b) return r;
    if (a == b) return rx_or(s, r, rx_concat(s, digit(s, a, a), frac(s, lo, hi, j + 1, tl, th, false)));
    if (tl) r = rx_or(s, r, rx_concat(s, digit(s, a, a), frac(s, lo, hi, j + 1, true, false, false)));
    if (th) r = rx_or(s, r, rx_concat(s, digit(s, b, b), frac(s, lo, hi, j + 1, false, true, false)));
    const char in_lo = tl ? (char)(a + 1) : a, in_hi = th ? (char)(b - 1) : b;
    if (in_lo <= in_hi) r = rx_or(s, r, rx_concat(s, digit(s, in_lo, in_hi), digits_any(s, 0)));
    return r;
}

/* An optional fraction ".f" with lo <= 0.f <= hi (NULL: unbounded side). */
static rx_id fraction(rx_store *s, const char *lo, const char *hi) {
    const rx_id none = lo && *lo ? RX_NOTHING : RX_EPSILON;
    const rx_id some = frac(s, lo, hi, 0, lo != NULL, hi != NULL, true);
    return rx_or(s, none, rx_concat(s, rx_literal(s, ".", 1), some));
}

static rx_id int_lit(rx_store *s, uint64_t v) {
    char b[24];
    const int n = snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    return rx_literal(s, b, (size_t)n);
}

/* Non-negative numbers in [L, H] (H NULL: no upper bound). */
static rx_id nonneg(rx_store *s, const dec *L, const dec *H) {
    const rx_id any_frac = fraction(s, NULL, NULL);
    if (!H) {
        const rx_id above = rx_concat(s, rx_int_range(s, true, (int64_t)L->ip + 1, false, 0), any_frac);
        return rx_or(s, above, rx_concat(s, int_lit(s, L->ip), fraction(s, L->fp, NULL)));
    }
    if (L->ip > H->ip) return RX_NOTHING;
    if (L->ip == H->ip) return rx_concat(s, int_lit(s, L->ip), fraction(s, L->fp, H->fp));
    rx_id r = rx_or(s, rx_concat(s, int_lit(s, L->ip), fraction(s, L->fp, NULL)),
                    rx_concat(s, int_lit(s, H->ip), fraction(s, NULL, H->fp)));
    if (L->ip + 1 <= H->ip - 1)
        r = rx_or(s, r, rx_concat(s, rx_int_range(s, true, (int64_t)L->ip + 1, true, (int64_t)H->ip - 1), any_frac));
    return r;
}

rx_id rx_num_range(rx_store *s, bool has_lo, double lo, bool lo_strict, bool has_hi, double hi, bool hi_strict) {
    if ((has_lo && !(fabs(lo) <= LIMIT)) || (has_hi && !(fabs(hi) <= LIMIT))) return -1;
    if (has_lo && lo_strict) lo = nextafter(lo, INFINITY);
    if (has_hi && hi_strict) hi = nextafter(hi, -INFINITY);
    if (has_lo && has_hi && lo > hi) return RX_NOTHING;
    dec *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    if (!a || !b) {
        free(a), free(b);
        return -1;
    }
    rx_id r = RX_NOTHING;
    if (!has_hi || hi >= 0) { /* x >= 0: [max(lo, 0), hi] */
        to_dec(has_lo && lo > 0 ? lo : 0, a);
        if (has_hi) to_dec(hi, b);
        r = rx_or(s, r, nonneg(s, a, has_hi ? b : NULL));
    }
    if (!has_lo || lo < 0) { /* x < 0: "-" and a magnitude in [max(-hi, tiny), -lo], above zero */
        const double m_lo = has_hi && hi < 0 ? -hi : nextafter(0.0, 1.0);
        to_dec(m_lo, a);
        if (has_lo) to_dec(-lo, b);
        r = rx_or(s, r, rx_concat(s, rx_literal(s, "-", 1), nonneg(s, a, has_lo ? b : NULL)));
    }
    free(a), free(b);
    return r;
}
