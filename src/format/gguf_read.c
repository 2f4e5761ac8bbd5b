/* gguf_read.c — reading GGUF v2/v3 files: a memory-mapped, fully validated
 * reader and its accessors (see gguf.h for its guarantees). The writer is
 * gguf_write.c.
 *
 * Layout (all little-endian):
 *   "GGUF" u32 version, u64 n_tensors, u64 n_kv
 *   n_kv × { string key, u32 value type, value }
 *   n_tensors × { string name, u32 n_dims, u64 ne[n_dims], u32 type, u64 offset }
 *   padding to general.alignment, then the data section; tensor offsets are
 *   relative to its start and multiples of the alignment.
 *   string = u64 length + bytes; array = u32 element type, u64 n, elements.
 *
 * Invariants of this module:
 *  - every read goes through the `reader` cursor, which checks the bytes are
 *    in the file before touching them; counts are checked against the bytes
 *    left before anything is allocated for them, so allocations are bounded
 *    by the file size;
 *  - all size arithmetic on file values is overflow-checked;
 *  - nested arrays are skipped (bounded depth) and kept opaque;
 *  - keys and tensor names are NUL-terminated copies owned by gguf_file; they
 *    may not contain NUL bytes, and both are unique (sorted name index). */
#include "format/gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/name_index.h"
#include "core/fileio.h"
#include "format/gguf_internal.h"
#include "format/tensor_list.h"

#define GGUF_MAX_ARRAY_DEPTH 8
/* Smallest possible encodings, used to bound counts before allocating. */
#define GGUF_MIN_KV_BYTES 13u     /* u64 key len + u32 type + 1-byte value */
#define GGUF_MIN_TINFO_BYTES 32u  /* u64 name len + u32 n_dims + u64 ne + u32 type + u64 off */

/* ---- value types ---- */

size_t gguf_vtype_size(uint32_t t) {
    switch (t) {
    case GGUF_UINT8: case GGUF_INT8: case GGUF_BOOL: return 1;
    case GGUF_UINT16: case GGUF_INT16: return 2;
    case GGUF_UINT32: case GGUF_INT32: case GGUF_FLOAT32: return 4;
    case GGUF_UINT64: case GGUF_INT64: case GGUF_FLOAT64: return 8;
    default: return 0; /* STRING, ARRAY, unknown */
    }
}

const char *gguf_vtype_name(int type) {
    static const char *const names[] = {"uint8",  "int8",    "uint16", "int16", "uint32",
                                        "int32",  "float32", "bool",   "string", "array",
                                        "uint64", "int64",   "float64"};
    static _Thread_local char buf[24];
    if (type >= 0 && type <= GGUF_FLOAT64) return names[type];
    snprintf(buf, sizeof buf, "type#%d", type);
    return buf;
}

static bool vtype_is_int(gguf_vtype t) {
    return t == GGUF_UINT8 || t == GGUF_INT8 || t == GGUF_UINT16 || t == GGUF_INT16 ||
           t == GGUF_UINT32 || t == GGUF_INT32 || t == GGUF_UINT64 || t == GGUF_INT64;
}
static bool vtype_is_unsigned(gguf_vtype t) {
    return t == GGUF_UINT8 || t == GGUF_UINT16 || t == GGUF_UINT32 || t == GGUF_UINT64 ||
           t == GGUF_BOOL;
}
static bool vtype_is_float(gguf_vtype t) { return t == GGUF_FLOAT32 || t == GGUF_FLOAT64; }

/* Decode one scalar of type t (gguf_vtype_size(t) > 0) from little-endian bytes. */
static void decode_scalar(gguf_vtype t, const unsigned char *p, gguf_value *v) {
    memset(v, 0, sizeof *v);
    v->type = t;
    switch (t) {
    case GGUF_UINT8: v->u = p[0]; break;
    case GGUF_BOOL: v->u = p[0] != 0; break;
    case GGUF_INT8: v->i = (int8_t)p[0]; break;
    case GGUF_UINT16: { uint16_t x; memcpy(&x, p, 2); v->u = x; break; }
    case GGUF_INT16: { int16_t x; memcpy(&x, p, 2); v->i = x; break; }
    case GGUF_UINT32: { uint32_t x; memcpy(&x, p, 4); v->u = x; break; }
    case GGUF_INT32: { int32_t x; memcpy(&x, p, 4); v->i = x; break; }
    case GGUF_UINT64: { uint64_t x; memcpy(&x, p, 8); v->u = x; break; }
    case GGUF_INT64: { int64_t x; memcpy(&x, p, 8); v->i = x; break; }
    case GGUF_FLOAT32: { float x; memcpy(&x, p, 4); v->f = x; break; }
    case GGUF_FLOAT64: { double x; memcpy(&x, p, 8); v->f = x; break; }
    default: break;
    }
}

static int64_t scalar_as_i64(const gguf_value *v) {
    if (vtype_is_unsigned(v->type)) return v->u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v->u;
    if (vtype_is_float(v->type)) {
        if (isnan(v->f)) return 0;
        if (v->f >= 9223372036854775807.0) return INT64_MAX;
        if (v->f <= -9223372036854775808.0) return INT64_MIN;
        return (int64_t)v->f;
    }
    return v->i;
}

static double scalar_as_f64(const gguf_value *v) {
    if (vtype_is_unsigned(v->type)) return (double)v->u;
    if (vtype_is_float(v->type)) return v->f;
    return (double)v->i;
}

/* ---- the reader ---- */

struct gguf_file {
    char *path;
    file_map map;
    uint32_t version;
    uint32_t alignment;
    size_t data_off;
    int n_kv;
    char **keys;
    gguf_value *vals;
    name_index kv_index;
    int n_tensors;
    char **names;
    wick_tensor *tensors;
    name_index t_index;
};

typedef struct reader {
    const unsigned char *p;
    size_t size, pos;
    const char *path;
    wick_error *err;
} reader;

/* Ensure n more bytes exist; `what` and `ctx` describe them for the error. */
static int need(reader *r, uint64_t n, const char *what, const char *ctx) {
    if (n > r->size - r->pos)
        return wick_fail_code(r->err, WICK_E_FORMAT,
                              "truncated or corrupt GGUF file %s: %s%s%s (%" PRIu64
                              " bytes at offset %zu) runs past the end of the file (%zu bytes)",
                              r->path, what, ctx[0] ? " of " : "", ctx, n, r->pos, r->size);
    return 0;
}

static int rd_u32(reader *r, uint32_t *out, const char *what, const char *ctx) {
    if (need(r, 4, what, ctx)) return -1;
    memcpy(out, r->p + r->pos, 4);
    r->pos += 4;
    return 0;
}

static int rd_u64(reader *r, uint64_t *out, const char *what, const char *ctx) {
    if (need(r, 8, what, ctx)) return -1;
    memcpy(out, r->p + r->pos, 8);
    r->pos += 8;
    return 0;
}

static int rd_str(reader *r, gguf_str *out, const char *what, const char *ctx) {
    uint64_t len;
    if (rd_u64(r, &len, what, ctx)) return -1;
    if (need(r, len, what, ctx)) return -1;
    out->ptr = (const char *)r->p + r->pos;
    out->len = len;
    r->pos += (size_t)len;
    return 0;
}

/* An array count larger than the bytes left could hold. */
static int too_many(reader *r, uint64_t n, const char *key) {
    return wick_fail_code(r->err, WICK_E_FORMAT,
                          "truncated or corrupt GGUF file %s: array of %" PRIu64
                          " elements in key '%s' runs past the end of the file",
                          r->path, n, key);
}

static char *copy_str(gguf_str s) {
    char *c = malloc((size_t)s.len + 1);
    if (!c) return NULL;
    memcpy(c, s.ptr, (size_t)s.len);
    c[s.len] = 0;
    return c;
}

/* Skip the body of an array (element type + count + elements), depth-limited. */
static int skip_array(reader *r, int depth, const char *key) {
    if (depth > GGUF_MAX_ARRAY_DEPTH)
        return wick_fail_code(r->err, WICK_E_FORMAT, "GGUF key '%s' in %s nests arrays deeper than %d levels", key,
                              r->path, GGUF_MAX_ARRAY_DEPTH);
    uint32_t et;
    uint64_t n;
    if (rd_u32(r, &et, "array element type", key) || rd_u64(r, &n, "array length", key))
        return -1;
    size_t left = r->size - r->pos;
    size_t es = gguf_vtype_size(et);
    if (es) {
        if (n > left / es) return too_many(r, n, key);
        r->pos += (size_t)n * es;
    } else if (et == GGUF_STRING) {
        if (n > left / 8) return too_many(r, n, key);
        for (uint64_t k = 0; k < n; k++) {
            gguf_str s;
            if (rd_str(r, &s, "array string", key)) return -1;
        }
    } else if (et == GGUF_ARRAY) {
        if (n > left / 12) return too_many(r, n, key);
        for (uint64_t k = 0; k < n; k++)
            if (skip_array(r, depth + 1, key)) return -1;
    } else {
        return wick_fail_code(r->err, WICK_E_FORMAT, "GGUF key '%s' in %s has an array of unknown type id %u", key,
                              r->path, et);
    }
    return 0;
}

static int read_value(reader *r, uint32_t t, gguf_value *v, const char *key) {
    memset(v, 0, sizeof *v);
    size_t es = gguf_vtype_size(t);
    if (es) {
        if (need(r, es, "value", key)) return -1;
        decode_scalar((gguf_vtype)t, r->p + r->pos, v);
        r->pos += es;
        return 0;
    }
    if (t == GGUF_STRING) {
        v->type = GGUF_STRING;
        return rd_str(r, &v->s, "string value", key);
    }
    if (t != GGUF_ARRAY)
        return wick_fail_code(r->err, WICK_E_FORMAT, "GGUF key '%s' in %s has unknown value type id %u", key, r->path,
                              t);
    v->type = GGUF_ARRAY;
    size_t start = r->pos;
    uint32_t et;
    uint64_t n;
    if (rd_u32(r, &et, "array element type", key) || rd_u64(r, &n, "array length", key))
        return -1;
    size_t left = r->size - r->pos;
    v->arr.type = (gguf_vtype)et;
    v->arr.n = n;
    es = gguf_vtype_size(et);
    if (es) {
        if (n > left / es) return too_many(r, n, key);
        v->arr.data = r->p + r->pos;
        r->pos += (size_t)n * es;
    } else if (et == GGUF_STRING) {
        if (n > left / 8) return too_many(r, n, key);
        v->arr.strs = malloc((size_t)(n ? n : 1) * sizeof *v->arr.strs);
        if (!v->arr.strs) return wick_fail_code(r->err, WICK_E_NO_MEMORY, "out of memory reading %s", r->path);
        for (uint64_t k = 0; k < n; k++)
            if (rd_str(r, &v->arr.strs[k], "array string", key)) return -1;
    } else if (et == GGUF_ARRAY) {
        r->pos = start; /* re-read the header in the generic skipper */
        return skip_array(r, 0, key);
    } else {
        return wick_fail_code(r->err, WICK_E_FORMAT, "GGUF key '%s' in %s has an array of unknown type id %u", key,
                              r->path, et);
    }
    return 0;
}

static int read_kvs(gguf_file *f, reader *r, uint64_t n_kv) {
    wick_error *err = r->err;
    if (n_kv > (r->size - r->pos) / GGUF_MIN_KV_BYTES || n_kv > INT_MAX)
        return wick_fail_code(err, WICK_E_FORMAT,
                              "GGUF header of %s claims %" PRIu64
                              " key/value pairs, more than the file can hold",
                              f->path, n_kv);
    size_t n = (size_t)n_kv;
    f->keys = calloc(n ? n : 1, sizeof *f->keys);
    f->vals = calloc(n ? n : 1, sizeof *f->vals);
    if (!f->keys || !f->vals) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", f->path);
    for (size_t i = 0; i < n; i++) {
        char ctx[32];
        snprintf(ctx, sizeof ctx, "key #%zu", i);
        gguf_str k;
        if (rd_str(r, &k, "name", ctx)) return -1;
        if (memchr(k.ptr, 0, (size_t)k.len))
            return wick_fail_code(err, WICK_E_FORMAT, "GGUF key #%zu in %s contains a NUL byte", i, f->path);
        f->keys[i] = copy_str(k);
        if (!f->keys[i]) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", f->path);
        f->n_kv = (int)i + 1;
        uint32_t t;
        if (rd_u32(r, &t, "value type", f->keys[i])) return -1;
        if (read_value(r, t, &f->vals[i], f->keys[i])) return -1;
    }
    int d1, d2;
    if (index_build(&f->kv_index, f->keys, f->n_kv, &d1, &d2))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", f->path);
    if (d1 >= 0) return wick_fail_code(err, WICK_E_FORMAT, "duplicate GGUF key '%s' in %s", f->keys[d2], f->path);
    return 0;
}

static int read_alignment(gguf_file *f, wick_error *err) {
    f->alignment = GGUF_DEFAULT_ALIGNMENT;
    const gguf_value *v = gguf_get(f, "general.alignment");
    if (!v) return 0;
    if (!vtype_is_int(v->type))
        return wick_fail_code(err, WICK_E_FORMAT, "general.alignment in %s has type %s, expected uint32", f->path,
                              gguf_vtype_name(v->type));
    int64_t a = scalar_as_i64(v);
    if (a <= 0 || a > (1 << 30) || (a & (a - 1)) != 0)
        return wick_fail_code(err, WICK_E_FORMAT, "general.alignment in %s is %" PRId64 ", not a power of two",
                              f->path, a);
    f->alignment = (uint32_t)a;
    return 0;
}

static int read_tensor_infos(gguf_file *f, reader *r, uint64_t n_tensors, uint64_t *offsets) {
    wick_error *err = r->err;
    for (size_t i = 0; i < (size_t)n_tensors; i++) {
        char ctx[40];
        snprintf(ctx, sizeof ctx, "tensor info #%zu", i);
        gguf_str s;
        if (rd_str(r, &s, "name", ctx)) return -1;
        if (s.len == 0) return wick_fail_code(err, WICK_E_FORMAT, "tensor #%zu in %s has an empty name", i, f->path);
        if (memchr(s.ptr, 0, (size_t)s.len))
            return wick_fail_code(err, WICK_E_FORMAT, "tensor #%zu name in %s contains a NUL byte", i, f->path);
        f->names[i] = copy_str(s);
        if (!f->names[i]) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", f->path);
        f->n_tensors = (int)i + 1;
        const char *name = f->names[i];
        wick_tensor *t = &f->tensors[i];
        t->name = name;
        uint32_t nd;
        if (rd_u32(r, &nd, "n_dims", name)) return -1;
        if (nd < 1 || nd > WICK_MAX_DIMS)
            return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s has %u dims (must be 1..%d)", name, f->path,
                                  nd, WICK_MAX_DIMS);
        t->n_dims = (int)nd;
        for (int d = 0; d < WICK_MAX_DIMS; d++) t->ne[d] = 1;
        for (uint32_t d = 0; d < nd; d++) {
            uint64_t ne;
            if (rd_u64(r, &ne, "dimension", name)) return -1;
            if (ne == 0 || ne > (uint64_t)INT64_MAX)
                return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s has bad dimension ne[%u] = %" PRIu64,
                                      name, f->path, d, ne);
            t->ne[d] = (int64_t)ne;
        }
        uint32_t type;
        if (rd_u32(r, &type, "type", name)) return -1;
        if (type >= WICK_DTYPE_COUNT || dtype_block_elems((int)type) == 0)
            return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s has unknown type id %u", name, f->path, type);
        t->type = (int)type;
        if (rd_u64(r, &offsets[i], "data offset", name)) return -1;
    }
    int d1, d2;
    if (index_build(&f->t_index, f->names, f->n_tensors, &d1, &d2))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", f->path);
    if (d1 >= 0) return wick_fail_code(err, WICK_E_FORMAT, "duplicate tensor name '%s' in %s", f->names[d2], f->path);
    return 0;
}

/* Sizes, alignment and bounds of every tensor's data. */
static int place_tensors(gguf_file *f, const uint64_t *offsets, wick_error *err) {
    size_t data_size = f->data_off <= f->map.size ? f->map.size - f->data_off : 0;
    for (int i = 0; i < f->n_tensors; i++) {
        wick_tensor *t = &f->tensors[i];
        int be = dtype_block_elems(t->type);
        if (t->ne[0] % be != 0)
            return wick_fail_code(err, WICK_E_FORMAT,
                                  "tensor '%s' in %s: ne[0] = %" PRId64
                                  " is not a multiple of the %s block size %d",
                                  t->name, f->path, t->ne[0], dtype_name(t->type), be);
        int64_t nel = t->ne[0];
        uint64_t rows = 1, nbytes;
        bool ovf = false;
        for (int d = 1; d < WICK_MAX_DIMS; d++) {
            ovf |= __builtin_mul_overflow(nel, t->ne[d], &nel);
            ovf |= __builtin_mul_overflow(rows, (uint64_t)t->ne[d], &rows);
        }
        uint64_t row_bytes = (uint64_t)(t->ne[0] / be);
        ovf |= __builtin_mul_overflow(row_bytes, (uint64_t)dtype_block_bytes(t->type), &row_bytes);
        ovf |= __builtin_mul_overflow(row_bytes, rows, &nbytes);
        if (ovf || nbytes > SIZE_MAX)
            return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: size overflows", t->name, f->path);
        if (offsets[i] % f->alignment != 0)
            return wick_fail_code(err, WICK_E_FORMAT,
                                  "tensor '%s' in %s: data offset %" PRIu64
                                  " is not a multiple of the alignment %u",
                                  t->name, f->path, offsets[i], f->alignment);
        if (offsets[i] > data_size || nbytes > data_size - offsets[i])
            return wick_fail_code(err, WICK_E_FORMAT,
                                  "tensor '%s' data out of file bounds (%s): offset %" PRIu64
                                  " + %" PRIu64 " bytes, data section has %zu",
                                  t->name, f->path, offsets[i], nbytes, data_size);
        t->data = f->map.data + f->data_off + offsets[i];
        t->nbytes = (size_t)nbytes;
    }
    return 0;
}

static int parse(gguf_file *f, wick_error *err) {
    reader r = {f->map.data, f->map.size, 0, f->path, err};
    if (r.size < 4 || memcmp(r.p, "GGUF", 4) != 0)
        return wick_fail_code(err, WICK_E_FORMAT, "bad GGUF magic in %s", f->path);
    r.pos = 4;
    uint32_t version;
    uint64_t n_tensors, n_kv;
    if (rd_u32(&r, &version, "version", "")) return -1;
    if (version == 1)
        return wick_fail_code(err, WICK_E_UNSUPPORTED,
                              "%s is a GGUF v1 file, which is not supported (only v2 and v3); "
                              "re-convert it with a current llama.cpp",
                              f->path);
    if (version == 0x02000000u || version == 0x03000000u)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "%s is a big-endian GGUF file, which is not supported", f->path);
    if (version != 2 && version != 3)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "unsupported GGUF version %u in %s (expected 2 or 3)", version,
                              f->path);
    f->version = version;
    if (rd_u64(&r, &n_tensors, "tensor count", "") || rd_u64(&r, &n_kv, "key/value count", ""))
        return -1;
    if (read_kvs(f, &r, n_kv)) return -1;
    if (read_alignment(f, err)) return -1;

    if (n_tensors > (r.size - r.pos) / GGUF_MIN_TINFO_BYTES || n_tensors > INT_MAX)
        return wick_fail_code(err, WICK_E_FORMAT,
                              "GGUF header of %s claims %" PRIu64
                              " tensors, more than the file can hold",
                              f->path, n_tensors);
    size_t nt = (size_t)n_tensors;
    f->names = calloc(nt ? nt : 1, sizeof *f->names);
    f->tensors = calloc(nt ? nt : 1, sizeof *f->tensors);
    uint64_t *offsets = calloc(nt ? nt : 1, sizeof *offsets);
    if (!f->names || !f->tensors || !offsets) {
        free(offsets);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", f->path);
    }
    int rc = read_tensor_infos(f, &r, n_tensors, offsets);
    if (rc == 0) {
        /* pos <= size and alignment <= 2^30, so this cannot overflow size_t. */
        f->data_off = (r.pos + f->alignment - 1) / f->alignment * f->alignment;
        rc = place_tensors(f, offsets, err);
    }
    free(offsets);
    return rc;
}

gguf_file *gguf_open(const char *path, wick_error *err) {
    if (!path) {
        wick_fail(err, "gguf_open: no path");
        return NULL;
    }
    gguf_file *f = calloc(1, sizeof *f);
    if (f) f->path = strdup(path);
    if (!f || !f->path) {
        free(f);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory opening %s", path);
        return NULL;
    }
    if (file_map_open(&f->map, path, err) != 0 || parse(f, err) != 0) {
        gguf_close(f);
        return NULL;
    }
    return f;
}

static void free_kvs(gguf_file *f) {
    if (f->keys)
        for (int i = 0; i < f->n_kv; i++) free(f->keys[i]);
    if (f->vals)
        for (int i = 0; i < f->n_kv; i++)
            if (f->vals[i].type == GGUF_ARRAY) free(f->vals[i].arr.strs);
    free(f->keys);
    free(f->vals);
    free(f->kv_index.refs);
    f->keys = NULL;
    f->vals = NULL;
    f->kv_index.refs = NULL;
    f->kv_index.n = 0;
    f->n_kv = 0;
}

void gguf_forget_metadata(gguf_file *f) {
    if (!f) return;
    free_kvs(f);
    long pg = sysconf(_SC_PAGESIZE);
    if (!f->map.data || pg <= 0) return;
    size_t end = (f->data_off < f->map.size ? f->data_off : f->map.size) & ~((size_t)pg - 1);
    if (end) madvise((void *)f->map.data, end, MADV_DONTNEED);
}

void gguf_close(gguf_file *f) {
    if (!f) return;
    free_kvs(f);
    if (f->names)
        for (int i = 0; i < f->n_tensors; i++) free(f->names[i]);
    free(f->names);
    free(f->tensors);
    free(f->t_index.refs);
    file_map_close(&f->map);
    free(f->path);
    free(f);
}

uint32_t gguf_version(const gguf_file *f) { return f ? f->version : 0; }
const char *gguf_path(const gguf_file *f) { return f ? f->path : NULL; }
uint32_t gguf_alignment(const gguf_file *f) { return f ? f->alignment : 0; }
size_t gguf_data_offset(const gguf_file *f) { return f ? f->data_off : 0; }

size_t gguf_tensor_file_offset(const gguf_file *f, int i) {
    if (!f || i < 0 || i >= f->n_tensors) return 0;
    return (size_t)((const unsigned char *)f->tensors[i].data - f->map.data);
}

int gguf_n_kv(const gguf_file *f) { return f ? f->n_kv : 0; }

const char *gguf_kv_key(const gguf_file *f, int i) {
    return (f && i >= 0 && i < f->n_kv) ? f->keys[i] : NULL;
}

const gguf_value *gguf_kv_value(const gguf_file *f, int i) {
    return (f && i >= 0 && i < f->n_kv) ? &f->vals[i] : NULL;
}

const gguf_value *gguf_get(const gguf_file *f, const char *key) {
    if (!f) return NULL;
    int i = index_find(&f->kv_index, key);
    return i >= 0 ? &f->vals[i] : NULL;
}

int gguf_get_int(const gguf_file *f, const char *key, int64_t *out, wick_error *err) {
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    if (!vtype_is_int(v->type))
        return wick_fail_code(err, WICK_E_FORMAT, "GGUF key '%s' in %s has type %s, expected an integer", key,
                              f->path, gguf_vtype_name(v->type));
    if (vtype_is_unsigned(v->type) && v->u > (uint64_t)INT64_MAX)
        return wick_fail_code(err, WICK_E_FORMAT, "GGUF key '%s' in %s: value %" PRIu64 " is out of range", key,
                              f->path, v->u);
    *out = scalar_as_i64(v);
    return 1;
}

int gguf_get_float(const gguf_file *f, const char *key, double *out, wick_error *err) {
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    if (!vtype_is_int(v->type) && !vtype_is_float(v->type))
        return wick_fail_code(err, WICK_E_FORMAT, "GGUF key '%s' in %s has type %s, expected a number", key, f->path,
                              gguf_vtype_name(v->type));
    *out = scalar_as_f64(v);
    return 1;
}

int gguf_get_bool(const gguf_file *f, const char *key, bool *out, wick_error *err) {
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    if (v->type == GGUF_BOOL) {
        *out = v->u != 0;
        return 1;
    }
    if (vtype_is_int(v->type)) {
        int64_t x = scalar_as_i64(v);
        if (x == 0 || x == 1) {
            *out = x == 1;
            return 1;
        }
    }
    return wick_fail_code(err, WICK_E_FORMAT, "GGUF key '%s' in %s has type %s, expected bool", key, f->path,
                          gguf_vtype_name(v->type));
}

int gguf_get_string(const gguf_file *f, const char *key, char **out, wick_error *err) {
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    if (v->type != GGUF_STRING)
        return wick_fail_code(err, WICK_E_FORMAT, "GGUF key '%s' in %s has type %s, expected string", key, f->path,
                              gguf_vtype_name(v->type));
    *out = copy_str(v->s);
    if (!*out) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading key '%s'", key);
    return 1;
}

int gguf_get_arr(const gguf_file *f, const char *key, const gguf_value **out, wick_error *err) {
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    if (v->type != GGUF_ARRAY)
        return wick_fail_code(err, WICK_E_FORMAT, "GGUF key '%s' in %s has type %s, expected an array", key, f->path,
                              gguf_vtype_name(v->type));
    *out = v;
    return 1;
}

static bool arr_elem(const gguf_value *v, uint64_t i, gguf_value *e) {
    if (!v || v->type != GGUF_ARRAY || !v->arr.data || i >= v->arr.n) return false;
    size_t es = gguf_vtype_size(v->arr.type);
    if (!es) return false;
    decode_scalar(v->arr.type, (const unsigned char *)v->arr.data + i * es, e);
    return true;
}

int64_t gguf_arr_int(const gguf_value *v, uint64_t i) {
    gguf_value e;
    return arr_elem(v, i, &e) ? scalar_as_i64(&e) : 0;
}

double gguf_arr_float(const gguf_value *v, uint64_t i) {
    gguf_value e;
    return arr_elem(v, i, &e) ? scalar_as_f64(&e) : 0.0;
}

int gguf_n_tensors(const gguf_file *f) { return f ? f->n_tensors : 0; }

const wick_tensor *gguf_tensor(const gguf_file *f, int i) {
    return (f && i >= 0 && i < f->n_tensors) ? &f->tensors[i] : NULL;
}

const wick_tensor *gguf_find_tensor(const gguf_file *f, const char *name) {
    if (!f) return NULL;
    int i = index_find(&f->t_index, name);
    return i >= 0 ? &f->tensors[i] : NULL;
}
