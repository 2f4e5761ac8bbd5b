/* gguf.h — GGUF v2/v3 files: a memory-mapped reader and a writer.
 *
 * Reader invariants (checked by gguf_open, so users need not re-check):
 *  - magic "GGUF", version 2 or 3; every count, length and offset lies inside
 *    the file (hostile sizes give an error, never an overread or huge alloc);
 *  - every tensor has 1..4 dims, a known GGML type id, its data range
 *    [offset, offset+nbytes) inside the file and aligned to general.alignment
 *    (default 32); tensor names are unique.
 *  Types wick cannot compute with are NOT rejected here (a vocab-only or
 *  K-quant file can still be inspected); the model loader rejects them by name.
 * Strings inside the file are not NUL-terminated: gguf_str points into the map.
 * The writer collects keys and tensors in memory and writes a v3 file. */
#ifndef WICK_FORMAT_GGUF_H
#define WICK_FORMAT_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "wick.h"

typedef enum gguf_vtype {
    GGUF_UINT8 = 0,
    GGUF_INT8 = 1,
    GGUF_UINT16 = 2,
    GGUF_INT16 = 3,
    GGUF_UINT32 = 4,
    GGUF_INT32 = 5,
    GGUF_FLOAT32 = 6,
    GGUF_BOOL = 7,
    GGUF_STRING = 8,
    GGUF_ARRAY = 9,
    GGUF_UINT64 = 10,
    GGUF_INT64 = 11,
    GGUF_FLOAT64 = 12,
} gguf_vtype;

typedef struct gguf_str {
    const char *ptr; /* not NUL-terminated */
    uint64_t len;
} gguf_str;

typedef struct gguf_value {
    gguf_vtype type;
    union {
        uint64_t u;  /* UINT8..UINT64, BOOL (0/1) */
        int64_t i;   /* INT8..INT64 */
        double f;    /* FLOAT32, FLOAT64 */
        gguf_str s;  /* STRING */
        struct {
            gguf_vtype type;  /* element type */
            uint64_t n;       /* element count */
            const void *data; /* numeric elements, packed little-endian, maybe unaligned */
            gguf_str *strs;   /* STRING elements (n entries), else NULL */
        } arr;                /* ARRAY (nested arrays are kept opaque: data=NULL) */
    };
} gguf_value;

typedef struct gguf_file gguf_file;

gguf_file *gguf_open(const char *path, wick_error *err);
void gguf_close(gguf_file *f);

uint32_t gguf_version(const gguf_file *f);
const char *gguf_path(const gguf_file *f);

int gguf_n_kv(const gguf_file *f);
const char *gguf_kv_key(const gguf_file *f, int i); /* NUL-terminated copy */
const gguf_value *gguf_kv_value(const gguf_file *f, int i);
const gguf_value *gguf_get(const gguf_file *f, const char *key); /* NULL if absent */

/* Typed lookups. Return 1 if found and converted, 0 if absent, -1 (with err
 * naming the key) if present with an incompatible type or out of range. */
int gguf_get_int(const gguf_file *f, const char *key, int64_t *out, wick_error *err);
int gguf_get_float(const gguf_file *f, const char *key, double *out, wick_error *err);
int gguf_get_bool(const gguf_file *f, const char *key, bool *out, wick_error *err);
/* *out is a malloc'd NUL-terminated copy the caller frees. */
int gguf_get_string(const gguf_file *f, const char *key, char **out, wick_error *err);

/* Element i of a numeric array value as int64 / double (any numeric element type). */
int64_t gguf_arr_int(const gguf_value *v, uint64_t i);
double gguf_arr_float(const gguf_value *v, uint64_t i);

int gguf_n_tensors(const gguf_file *f);
const wick_tensor *gguf_tensor(const gguf_file *f, int i);
const wick_tensor *gguf_find_tensor(const gguf_file *f, const char *name);

/* ---- writer ---- */
typedef struct gguf_writer gguf_writer;

gguf_writer *gguf_writer_new(void);
void gguf_writer_free(gguf_writer *w);
/* Setting a key twice replaces the earlier value. Strings are copied. */
void gguf_set_u32(gguf_writer *w, const char *key, uint32_t v);
void gguf_set_i32(gguf_writer *w, const char *key, int32_t v);
void gguf_set_u64(gguf_writer *w, const char *key, uint64_t v);
void gguf_set_f32(gguf_writer *w, const char *key, float v);
void gguf_set_bool(gguf_writer *w, const char *key, bool v);
void gguf_set_str(gguf_writer *w, const char *key, const char *v);
void gguf_set_arr_str(gguf_writer *w, const char *key, const char *const *v, size_t n);
/* Arrays of strings whose bytes may contain NUL (explicit lengths). */
void gguf_set_arr_strn(gguf_writer *w, const char *key, const char *const *v, const size_t *lens,
                       size_t n);
void gguf_set_arr_i32(gguf_writer *w, const char *key, const int32_t *v, size_t n);
void gguf_set_arr_f32(gguf_writer *w, const char *key, const float *v, size_t n);
/* Add a tensor; ne[0] innermost. data (nbytes = dtype_row_bytes(type, ne0)*rest) is
 * copied. Returns -1 with err on a bad shape/size or duplicate name. */
int gguf_add_tensor(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                    const void *data, size_t nbytes, wick_error *err);
/* The same with the bytes produced by fill(ctx, dst, nbytes, err) when the
 * file is written (one tensor in memory at a time; ctx must live until then). */
int gguf_add_tensor_deferred(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                             size_t nbytes, int (*fill)(void *ctx, void *dst, size_t nbytes, wick_error *err),
                             void *ctx, wick_error *err);
/* Write a GGUF v3 file (alignment 32). */
int gguf_write(gguf_writer *w, const char *path, wick_error *err);

/* Streaming (a file larger than memory, e.g. a quantized model): declare every
 * tensor with gguf_add_tensor_info (no data), then gguf_write_begin writes the
 * header and gguf_write_data takes the tensors' bytes in declaration order, in
 * pieces of any size (padding between tensors is added); gguf_write_end checks
 * that every declared byte came and closes the file. Any failure, and
 * gguf_write_abort, remove the file. A writer used this way holds only
 * declared tensors (gguf_write refuses them). */
int gguf_add_tensor_info(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                         wick_error *err);
typedef struct gguf_stream gguf_stream;
gguf_stream *gguf_write_begin(gguf_writer *w, const char *path, wick_error *err);
int gguf_write_data(gguf_stream *s, const void *data, size_t n, wick_error *err);
int gguf_write_end(gguf_stream *s, wick_error *err);
void gguf_write_abort(gguf_stream *s);

/* ---- additions (format layer) ----
 * gguf_write uses general.alignment instead of 32 when the caller set it
 * (it must then be a power-of-two uint32). */
/* The data alignment in effect (general.alignment or 32). */
uint32_t gguf_alignment(const gguf_file *f);
/* File position where the data section starts, and of tensor i's bytes. */
size_t gguf_data_offset(const gguf_file *f);
size_t gguf_tensor_file_offset(const gguf_file *f, int i);
/* Forget the keys and values once the model has read what it needs: frees
 * their parsed form (a vocabulary's string arrays alone take megabytes) and
 * drops the header's pages from memory (they stay in the file). Tensors stay;
 * every key lookup afterwards finds nothing. */
void gguf_forget_metadata(gguf_file *f);
/* Name of a value type ("uint32", "string", "array"), "type#N" if unknown. */
const char *gguf_vtype_name(int type);
/* Look up an array value: 1 and *out if `key` holds an array (check
 * (*out)->arr.type; nested arrays have data == NULL), 0 if absent, -1 with err
 * if it holds something else. */
int gguf_get_arr(const gguf_file *f, const char *key, const gguf_value **out, wick_error *err);

void gguf_set_u8(gguf_writer *w, const char *key, uint8_t v);
void gguf_set_i8(gguf_writer *w, const char *key, int8_t v);
void gguf_set_u16(gguf_writer *w, const char *key, uint16_t v);
void gguf_set_i16(gguf_writer *w, const char *key, int16_t v);
void gguf_set_i64(gguf_writer *w, const char *key, int64_t v);
void gguf_set_f64(gguf_writer *w, const char *key, double v);
/* A numeric array of any scalar element type (UINT8..FLOAT64 except STRING and
 * ARRAY; BOOL elements are bytes): n packed host-order values are copied. */
void gguf_set_arr(gguf_writer *w, const char *key, gguf_vtype elem_type, const void *data,
                  size_t n);
/* Copy a value as read by gguf_open (to rewrite a file, e.g. when quantizing).
 * Returns -1 with err for nested arrays or a bad value. */
int gguf_set_value(gguf_writer *w, const char *key, const gguf_value *v, wick_error *err);

#endif
