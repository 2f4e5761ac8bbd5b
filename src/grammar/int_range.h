/* int_range.h — the decimal integers of a range as a regular expression. */
#ifndef WICK_GRAMMAR_INT_RANGE_H
#define WICK_GRAMMAR_INT_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "grammar/regex.h"

/* The integers n with lo <= n (when has_lo) and n <= hi (when has_hi), in
 * JSON's spelling (no leading zeros, no plus sign, no -0); RX_NOTHING for an
 * empty range. */
rx_id rx_int_range(rx_store *s, bool has_lo, int64_t lo, bool has_hi, int64_t hi);

#endif
