/* dequant.h — dequantization of the block types convert.c does not handle
 * itself (Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q2_K, Q3_K, Q4_K, Q5_K; see
 * dequant.c). Callers use dequantize_row (convert.h), which dispatches here. */
#ifndef WICK_KERNELS_DEQUANT_H
#define WICK_KERNELS_DEQUANT_H

#include <stdbool.h>
#include <stdint.h>

/* n elements of `type` at src into dst; false if `type` is not one of these. */
bool dequantize_row_more(int type, const void *src, float *dst, int64_t n);

#endif
