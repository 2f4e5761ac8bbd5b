/* num_range.h — the decimal numbers of a range as a regular expression, for
 * JSON Schema's minimum/maximum on numbers. */
#ifndef WICK_GRAMMAR_NUM_RANGE_H
#define WICK_GRAMMAR_NUM_RANGE_H

#include <stdbool.h>

#include "grammar/regex.h"

/* The JSON numbers x, spelled without an exponent (and never as -0), with
 * lo <= x (lo < x when lo_strict) when has_lo and x <= hi (x < hi when
 * hi_strict) when has_hi, compared as the doubles a validator reads: a
 * subset of them, never a number outside. RX_NOTHING for an empty range;
 * -1 for a bound beyond ±2^53. */
rx_id rx_num_range(rx_store *s, bool has_lo, double lo, bool lo_strict, bool has_hi, double hi, bool hi_strict);

#endif
