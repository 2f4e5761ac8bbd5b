/* tensor.h — element types and the tensor view shared by file formats, the
 * model and the kernels.
 *
 * Type ids are GGML's (so GGUF type fields map 1:1). wick computes with F32,
 * F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K,
 * Q6_K and IQ4_XS; the others exist so errors can name them.
 * Block layouts (bit-exact with llama.cpp; fp16 fields are IEEE half floats;
 * "element e" counts within the block):
 *   Q8_0: 32 elements per block: { uint16 d (fp16 scale); int8 qs[32] }, x = d*qs[i]
 *   Q4_0: 32 elements per block: { uint16 d (fp16 scale); uint8 qs[16] },
 *         x[j] = d*((qs[j] & 15) - 8), x[j+16] = d*((qs[j] >> 4) - 8), j < 16
 *   Q6_K: 256 elements per super-block: { uint8 ql[128]; uint8 qh[64]; int8 scales[16];
 *         uint16 d (fp16) }, x[e] = d*scales[e/16]*(q[e] - 32) with the 6-bit q of
 *         element e = 128h + 32k + l (h < 2, k < 4, l < 32) taken from
 *         ql[64h + 32(k&1) + l] (low nibble for k < 2, high nibble for k >= 2) and
 *         bits 2k..2k+1 of qh[32h + l] as its high two bits (llama.cpp's order)
 *   Q4_1: 32 per block: { fp16 d, m; uint8 qs[16] }, x[j] = d*(qs[j] & 15) + m,
 *         x[j+16] = d*(qs[j] >> 4) + m
 *   Q5_0: 32 per block: { fp16 d; uint8 qh[4]; uint8 qs[16] }: with h = qh read as a
 *         little-endian uint32, q[j] = (qs[j] & 15) | bit j of h << 4 and
 *         q[j+16] = (qs[j] >> 4) | bit j+16 of h << 4; x = d*(q - 16)
 *   Q5_1: 32 per block: { fp16 d, m; uint8 qh[4]; uint8 qs[16] }, q as Q5_0, x = d*q + m
 *   IQ4_NL: 32 per block: { fp16 d; uint8 qs[16] }, nibbles as Q4_0 index the table
 *         IQ4_NL_VALUES: x = d*values[nibble]
 *   Q4_K: 256 per super-block of 8 sub-blocks of 32: { fp16 d, dmin; uint8 scales[12];
 *         uint8 qs[128] }; sub-block j has a 6-bit scale sc_j and min m_j packed in
 *         scales (j < 4: sc = scales[j] & 63, m = scales[j+4] & 63; j >= 4: sc =
 *         (scales[j+4] & 15) | (scales[j-4] >> 6) << 4, m = (scales[j+4] >> 4) |
 *         (scales[j] >> 6) << 4); element 64p + l (l < 32) is the low nibble of
 *         qs[32p + l] (sub-block 2p), element 64p + 32 + l the high nibble (sub-block
 *         2p+1); x = d*sc_j*q - dmin*m_j
 *   Q5_K: as Q4_K plus uint8 qh[32] before qs ({ d, dmin, scales[12], qh[32], qs[128] }):
 *         element e of sub-block j gets bit j of qh[e % 32] as its fifth bit (value 16)
 *   Q3_K: 256 per super-block of 16 sub-blocks of 16: { uint8 hmask[32]; uint8 qs[64];
 *         uint8 scales[12]; fp16 d }; element 128h + 32k + l (h < 2, k < 4, l < 32) has
 *         2-bit q = (qs[32h + l] >> 2k) & 3 and, when bit 4h + k of hmask[l] is clear,
 *         q -= 4; its sub-block g = (128h + 32k + l) / 16 has the 6-bit scale s_g
 *         with low bits scales[g] & 15 (g < 8) or scales[g-8] >> 4 (g >= 8) and high
 *         bits (scales[8 + g%4] >> 2(g/4)) & 3; x = d*(s_g - 32)*q
 *   Q2_K: 256 per super-block of 16 sub-blocks of 16: { uint8 scales[16]; uint8 qs[64];
 *         fp16 d, dmin }; element 128h + 32k + l has q = (qs[32h + l] >> 2k) & 3; sub-block
 *         g: sc = scales[g] & 15, m = scales[g] >> 4; x = d*sc*q - dmin*m
 *   IQ4_XS: 256 per super-block of 8 sub-blocks of 32: { fp16 d; uint16 scales_h;
 *         uint8 scales_l[4]; uint8 qs[128] }; sub-block j: ls = ((scales_l[j/2] >> 4(j%2))
 *         & 15) | ((scales_h >> 2j) & 3) << 4, its 32 elements' nibbles as one IQ4_NL
 *         block at qs + 16j; x = d*(ls - 32)*IQ4_NL_VALUES[nibble]
 * Dimensions follow GGML order: ne[0] is the innermost (contiguous) one, so a
 * weight matrix with `rows` outputs of `cols` inputs has ne = {cols, rows}. */
#ifndef WICK_CORE_TENSOR_H
#define WICK_CORE_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum wick_dtype {
    WICK_F32 = 0,
    WICK_F16 = 1,
    WICK_Q4_0 = 2,
    WICK_Q4_1 = 3,
    WICK_Q5_0 = 6,
    WICK_Q5_1 = 7,
    WICK_Q8_0 = 8,
    WICK_Q8_1 = 9,
    WICK_Q2_K = 10,
    WICK_Q3_K = 11,
    WICK_Q4_K = 12,
    WICK_Q5_K = 13,
    WICK_Q6_K = 14,
    WICK_Q8_K = 15,
    WICK_IQ2_XXS = 16,
    WICK_IQ2_XS = 17,
    WICK_IQ3_XXS = 18,
    WICK_IQ1_S = 19,
    WICK_IQ4_NL = 20,
    WICK_IQ3_S = 21,
    WICK_IQ2_S = 22,
    WICK_IQ4_XS = 23,
    WICK_I8 = 24,
    WICK_I16 = 25,
    WICK_I32 = 26,
    WICK_I64 = 27,
    WICK_F64 = 28,
    WICK_IQ1_M = 29,
    WICK_BF16 = 30,
    WICK_TQ1_0 = 34,
    WICK_TQ2_0 = 35,
    WICK_DTYPE_COUNT = 40
} wick_dtype;

#define WICK_QK 32 /* elements per Q8_0 / Q4_0 block */

typedef struct block_q8_0 {
    uint16_t d;
    int8_t qs[WICK_QK];
} block_q8_0;

typedef struct block_q4_0 {
    uint16_t d;
    uint8_t qs[WICK_QK / 2];
} block_q4_0;

#define WICK_QK_K 256 /* elements per K-quant super-block */

typedef struct block_q6_K {
    uint8_t ql[WICK_QK_K / 2];
    uint8_t qh[WICK_QK_K / 4];
    int8_t scales[WICK_QK_K / 16];
    uint16_t d;
} block_q6_K;

typedef struct block_q4_1 {
    uint16_t d, m;
    uint8_t qs[WICK_QK / 2];
} block_q4_1;

typedef struct block_q5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[WICK_QK / 2];
} block_q5_0;

typedef struct block_q5_1 {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[WICK_QK / 2];
} block_q5_1;

typedef struct block_iq4_nl {
    uint16_t d;
    uint8_t qs[WICK_QK / 2];
} block_iq4_nl;

typedef struct block_q4_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qs[WICK_QK_K / 2];
} block_q4_K;

typedef struct block_q5_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[WICK_QK_K / 8];
    uint8_t qs[WICK_QK_K / 2];
} block_q5_K;

typedef struct block_q3_K {
    uint8_t hmask[WICK_QK_K / 8];
    uint8_t qs[WICK_QK_K / 4];
    uint8_t scales[12];
    uint16_t d;
} block_q3_K;

typedef struct block_q2_K {
    uint8_t scales[WICK_QK_K / 16];
    uint8_t qs[WICK_QK_K / 4];
    uint16_t d, dmin;
} block_q2_K;

typedef struct block_iq4_xs {
    uint16_t d;
    uint16_t scales_h;
    uint8_t scales_l[WICK_QK_K / 64];
    uint8_t qs[WICK_QK_K / 2];
} block_iq4_xs;

/* Q8_K: activations only (the K types' matmuls): d = max|x|/127 as f32,
 * q = round(x/d), and the sum of each 16 quants. */
typedef struct block_q8_K {
    float d;
    int8_t qs[WICK_QK_K];
    int16_t bsums[WICK_QK_K / 16];
} block_q8_K;

/* The 16 values an IQ4_NL / IQ4_XS nibble selects (llama.cpp's kvalues_iq4nl). */
extern const int8_t IQ4_NL_VALUES[16];

_Static_assert(sizeof(block_q6_K) == 210, "Q6_K block is 210 bytes");
_Static_assert(sizeof(block_q8_K) == 292, "Q8_K block is 292 bytes");
_Static_assert(sizeof(block_q4_1) == 20, "Q4_1 block is 20 bytes");
_Static_assert(sizeof(block_q5_0) == 22, "Q5_0 block is 22 bytes");
_Static_assert(sizeof(block_q5_1) == 24, "Q5_1 block is 24 bytes");
_Static_assert(sizeof(block_iq4_nl) == 18, "IQ4_NL block is 18 bytes");
_Static_assert(sizeof(block_q4_K) == 144, "Q4_K block is 144 bytes");
_Static_assert(sizeof(block_q5_K) == 176, "Q5_K block is 176 bytes");
_Static_assert(sizeof(block_q3_K) == 110, "Q3_K block is 110 bytes");
_Static_assert(sizeof(block_q2_K) == 84, "Q2_K block is 84 bytes");
_Static_assert(sizeof(block_iq4_xs) == 136, "IQ4_XS block is 136 bytes");
_Static_assert(sizeof(block_q8_0) == 34, "Q8_0 block is 34 bytes");
_Static_assert(sizeof(block_q4_0) == 18, "Q4_0 block is 18 bytes");

/* Name of a type ("Q4_K"), or "type#N" for ids GGML does not define. */
const char *dtype_name(int type);
/* Parse a name (case-insensitive: "f32", "q8_0", "bf16"); -1 if unknown. */
int dtype_from_name(const char *name);
/* True for the types wick computes with (see the list above). */
bool dtype_supported(int type);
/* Elements per block (1 for float types); 0 for unknown ids. */
int dtype_block_elems(int type);
/* Bytes per block; 0 for unknown ids. */
size_t dtype_block_bytes(int type);
/* Bytes taken by n elements (n must be a multiple of the block size);
 * returns 0 if it is not. */
size_t dtype_row_bytes(int type, int64_t n);
/* The type a row of row_len elements gets when `type` is asked for: `type`
 * itself when its block divides row_len, else llama-quantize's fallback
 * (current llama.cpp: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K / Q3_K
 * -> Q4_0, IQ4_XS -> IQ4_NL), else F16 (and F16 for any other type whose
 * block does not divide). */
int dtype_fallback(int type, int64_t row_len);

#define WICK_MAX_DIMS 4

/* A view of a tensor's bytes (usually inside a memory-mapped file). */
typedef struct wick_tensor {
    const char *name;
    int type;                 /* wick_dtype */
    int n_dims;
    int64_t ne[WICK_MAX_DIMS]; /* ne[0] innermost; unused dims are 1 */
    const void *data;
    size_t nbytes;
} wick_tensor;

static inline int64_t tensor_nelements(const wick_tensor *t) {
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

#endif
