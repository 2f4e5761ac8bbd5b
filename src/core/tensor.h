/* tensor.h — element types and the tensor view shared by file formats, the
 * model and the kernels.
 *
 * Type ids are GGML's (so GGUF type fields map 1:1). Only F32, F16, BF16, Q8_0,
 * Q4_0 and Q6_K are supported for compute; the others exist so errors can name them.
 * Block layouts (bit-exact with llama.cpp):
 *   Q8_0: 32 elements per block: { uint16 d (fp16 scale); int8 qs[32] }, x = d*qs[i]
 *   Q4_0: 32 elements per block: { uint16 d (fp16 scale); uint8 qs[16] },
 *         x[j] = d*((qs[j] & 15) - 8), x[j+16] = d*((qs[j] >> 4) - 8), j < 16
 *   Q6_K: 256 elements per super-block: { uint8 ql[128]; uint8 qh[64]; int8 scales[16];
 *         uint16 d (fp16) }, x[e] = d*scales[e/16]*(q[e] - 32) with the 6-bit q of
 *         element e = 128h + 32k + l (h < 2, k < 4, l < 32) taken from
 *         ql[64h + 32(k&1) + l] (low nibble for k < 2, high nibble for k >= 2) and
 *         bits 2k..2k+1 of qh[32h + l] as its high two bits (llama.cpp's order)
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

_Static_assert(sizeof(block_q6_K) == 210, "Q6_K block is 210 bytes");
_Static_assert(sizeof(block_q8_0) == 34, "Q8_0 block is 34 bytes");
_Static_assert(sizeof(block_q4_0) == 18, "Q4_0 block is 18 bytes");

/* Name of a type ("Q4_K"), or "type#N" for ids GGML does not define. */
const char *dtype_name(int type);
/* Parse a name (case-insensitive: "f32", "q8_0", "bf16"); -1 if unknown. */
int dtype_from_name(const char *name);
/* True for the types wick computes with (F32, F16, BF16, Q8_0, Q4_0, Q6_K). */
bool dtype_supported(int type);
/* Elements per block (1 for float types); 0 for unknown ids. */
int dtype_block_elems(int type);
/* Bytes per block; 0 for unknown ids. */
size_t dtype_block_bytes(int type);
/* Bytes taken by n elements (n must be a multiple of the block size);
 * returns 0 if it is not. */
size_t dtype_row_bytes(int type, int64_t n);

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
