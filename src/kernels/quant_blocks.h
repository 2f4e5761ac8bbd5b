/* quant_blocks.h — the small decoding steps of the quantized block layouts
 * (tensor.h) that dequantization, quantization and every matmul kernel
 * share: packed sub-block scales and mins, fifth and high bits. Inline, for
 * use inside src/kernels and tests. */
#ifndef WICK_KERNELS_QUANT_BLOCKS_H
#define WICK_KERNELS_QUANT_BLOCKS_H

#include <stdint.h>
#include <string.h>

#include "core/tensor.h"

/* Q4_K / Q5_K: the 6-bit scale and min of sub-block j (0..7). */
static inline void q4k_scale_min(const uint8_t s[12], int j, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Q3_K: the 16 sub-block scales, each already minus 32 (-32..31). */
static inline void q3k_scales(const uint8_t s[12], int8_t out[16]) {
    for (int g = 0; g < 16; g++) {
        const int lo = g < 8 ? (s[g] & 15) : (s[g - 8] >> 4);
        const int hi = (s[8 + g % 4] >> (2 * (g / 4))) & 3;
        out[g] = (int8_t)((lo | (hi << 4)) - 32);
    }
}

/* IQ4_XS: the scale of sub-block j (0..7), already minus 32 (-32..31). */
static inline int iq4xs_scale(const block_iq4_xs *b, int j) {
    const int lo = (b->scales_l[j / 2] >> (4 * (j % 2))) & 15;
    const int hi = (b->scales_h >> (2 * j)) & 3;
    return (lo | (hi << 4)) - 32;
}

/* Q5_0 / Q5_1: the 32 high bits of a block, bit j for element j. */
static inline uint32_t q5_high_bits(const uint8_t qh[4]) {
    return (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
}

/* The unsigned quant (0..15 or 0..31) of element j of a 32-element block
 * whose nibbles are packed as Q4_0's (j and j+16 share byte j % 16). */
static inline int nibble_at(const uint8_t qs[16], int j) { return j < 16 ? (qs[j] & 15) : (qs[j - 16] >> 4); }

#endif
