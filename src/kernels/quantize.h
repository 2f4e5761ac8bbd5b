/* quantize.h — quantizers for the block types beyond Q8_0 / Q4_0 (those
 * are in convert.c): Q4_1, Q5_0, Q5_1 (quantize_legacy.c), IQ4_NL, IQ4_XS
 * (quantize_iq4.c), Q2_K, Q3_K, Q4_K, Q5_K and Q6_K (quantize_k.c). Callers
 * use quantize_row (convert.h), which dispatches here. Every function takes
 * n elements (a multiple of the type's block) and returns false, writing
 * nothing, for a type that is not its own. */
#ifndef WICK_KERNELS_QUANTIZE_H
#define WICK_KERNELS_QUANTIZE_H

#include <stdbool.h>
#include <stdint.h>

bool quantize_row_legacy(int type, const float *src, void *dst, int64_t n);
bool quantize_row_iq4(int type, const float *src, void *dst, int64_t n);
bool quantize_row_k(int type, const float *src, void *dst, int64_t n);

/* Any of the above. */
static inline bool quantize_row_more(int type, const float *src, void *dst, int64_t n) {
    return quantize_row_legacy(type, src, dst, n) || quantize_row_iq4(type, src, dst, n) ||
           quantize_row_k(type, src, dst, n);
}

#endif
