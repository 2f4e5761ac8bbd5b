/* dtype.c — names and sizes of tensor element types (see tensor.h). */
#include <stdio.h>
#include <strings.h>

#include "core/tensor.h"

typedef struct dtype_info {
    const char *name;
    int block_elems;
    size_t block_bytes;
} dtype_info;

/* Block geometry of every GGML type, so sizes of files holding types we do
 * not compute with can still be validated and named. */
static const dtype_info DTYPES[WICK_DTYPE_COUNT] = {
    [WICK_F32] = {"F32", 1, 4},        [WICK_F16] = {"F16", 1, 2},
    [WICK_Q4_0] = {"Q4_0", 32, 18},    [WICK_Q4_1] = {"Q4_1", 32, 20},
    [WICK_Q5_0] = {"Q5_0", 32, 22},    [WICK_Q5_1] = {"Q5_1", 32, 24},
    [WICK_Q8_0] = {"Q8_0", 32, 34},    [WICK_Q8_1] = {"Q8_1", 32, 36},
    [WICK_Q2_K] = {"Q2_K", 256, 84},   [WICK_Q3_K] = {"Q3_K", 256, 110},
    [WICK_Q4_K] = {"Q4_K", 256, 144},  [WICK_Q5_K] = {"Q5_K", 256, 176},
    [WICK_Q6_K] = {"Q6_K", 256, 210},  [WICK_Q8_K] = {"Q8_K", 256, 292},
    [WICK_IQ2_XXS] = {"IQ2_XXS", 256, 66}, [WICK_IQ2_XS] = {"IQ2_XS", 256, 74},
    [WICK_IQ3_XXS] = {"IQ3_XXS", 256, 98}, [WICK_IQ1_S] = {"IQ1_S", 256, 50},
    [WICK_IQ4_NL] = {"IQ4_NL", 32, 18},    [WICK_IQ3_S] = {"IQ3_S", 256, 110},
    [WICK_IQ2_S] = {"IQ2_S", 256, 82},     [WICK_IQ4_XS] = {"IQ4_XS", 256, 136},
    [WICK_I8] = {"I8", 1, 1},          [WICK_I16] = {"I16", 1, 2},
    [WICK_I32] = {"I32", 1, 4},        [WICK_I64] = {"I64", 1, 8},
    [WICK_F64] = {"F64", 1, 8},        [WICK_IQ1_M] = {"IQ1_M", 256, 56},
    [WICK_BF16] = {"BF16", 1, 2},      [WICK_TQ1_0] = {"TQ1_0", 256, 54},
    [WICK_TQ2_0] = {"TQ2_0", 256, 66},
};

static const dtype_info *info(int type) {
    if (type < 0 || type >= WICK_DTYPE_COUNT || !DTYPES[type].name) return NULL;
    return &DTYPES[type];
}

const char *dtype_name(int type) {
    static _Thread_local char buf[24];
    const dtype_info *i = info(type);
    if (i) return i->name;
    snprintf(buf, sizeof buf, "type#%d", type);
    return buf;
}

int dtype_from_name(const char *name) {
    for (int t = 0; t < WICK_DTYPE_COUNT; t++)
        if (DTYPES[t].name && strcasecmp(DTYPES[t].name, name) == 0) return t;
    return -1;
}

bool dtype_supported(int type) {
    switch (type) {
    case WICK_F32: case WICK_F16: case WICK_BF16: case WICK_Q8_0: case WICK_Q4_0: case WICK_Q4_1:
    case WICK_Q5_0: case WICK_Q5_1: case WICK_IQ4_NL: case WICK_Q2_K: case WICK_Q3_K: case WICK_Q4_K:
    case WICK_Q5_K: case WICK_Q6_K: case WICK_IQ4_XS:
        return true;
    default:
        return false;
    }
}

int dtype_block_elems(int type) {
    const dtype_info *i = info(type);
    return i ? i->block_elems : 0;
}

size_t dtype_block_bytes(int type) {
    const dtype_info *i = info(type);
    return i ? i->block_bytes : 0;
}

size_t dtype_row_bytes(int type, int64_t n) {
    const dtype_info *i = info(type);
    if (!i || n < 0 || n % i->block_elems != 0) return 0;
    return (size_t)(n / i->block_elems) * i->block_bytes;
}

int dtype_fallback(int type, int64_t row_len) {
    if (dtype_row_bytes(type, row_len)) return type;
    int alt;
    switch (type) {
    case WICK_Q4_K: alt = WICK_Q5_0; break;
    case WICK_Q5_K: alt = WICK_Q5_1; break;
    case WICK_Q6_K: alt = WICK_Q8_0; break;
    case WICK_Q2_K: case WICK_Q3_K: alt = WICK_Q4_0; break;
    case WICK_IQ4_XS: alt = WICK_IQ4_NL; break;
    default: alt = WICK_F16; break;
    }
    return dtype_row_bytes(alt, row_len) ? alt : WICK_F16;
}
