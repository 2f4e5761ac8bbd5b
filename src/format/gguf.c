/* gguf.c — GGUF v2/v3 files: a memory-mapped, fully validated reader and a
 * v3 writer (see gguf.h for the reader's guarantees).
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
#include "format/tensor_list.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gguf.c assumes a little-endian host"
#endif

#define GGUF_DEFAULT_ALIGNMENT 32u
#define GGUF_MAX_ARRAY_DEPTH 8
/* Smallest possible encodings, used to bound counts before allocating. */
#define GGUF_MIN_KV_BYTES 13u     /* u64 key len + u32 type + 1-byte value */
#define GGUF_MIN_TINFO_BYTES 32u  /* u64 name len + u32 n_dims + u64 ne + u32 type + u64 off */

/* ---- value types ---- */

static size_t vtype_size(uint32_t t) {
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

/* Decode one scalar of type t (vtype_size(t) > 0) from little-endian bytes. */
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
    size_t es = vtype_size(et);
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
    size_t es = vtype_size(t);
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
    es = vtype_size(et);
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
    size_t es = vtype_size(v->arr.type);
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

/* ---- the writer ---- */

typedef struct wbuf {
    unsigned char *p;
    size_t len, cap;
    bool oom;
} wbuf;

static void wb_put(wbuf *b, const void *src, size_t n) {
    if (b->oom || n == 0) return;
    if (n > SIZE_MAX - b->len) {
        b->oom = true;
        return;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}
static void wb_u32(wbuf *b, uint32_t v) { wb_put(b, &v, 4); }
static void wb_u64(wbuf *b, uint64_t v) { wb_put(b, &v, 8); }
static void wb_str(wbuf *b, const char *s, size_t len) {
    wb_u64(b, len);
    wb_put(b, s, len);
}

typedef struct wkv {
    char *key;
    wbuf enc; /* u32 value type + encoded value, exactly as in the file */
} wkv;

struct gguf_writer {
    wkv *kv;
    size_t n_kv, cap_kv;
    tensor_list tensors;
    size_t n_info_only; /* tensors declared without data (gguf_add_tensor_info) */
    bool failed;        /* a setter failed; gguf_write reports msg */
    char msg[256];
};

gguf_writer *gguf_writer_new(void) { return calloc(1, sizeof(gguf_writer)); }

void gguf_writer_free(gguf_writer *w) {
    if (!w) return;
    for (size_t i = 0; i < w->n_kv; i++) {
        free(w->kv[i].key);
        free(w->kv[i].enc.p);
    }
    free(w->kv);
    tlist_free(&w->tensors);
    free(w);
}

static void writer_fail(gguf_writer *w, const char *what, const char *key) {
    if (w->failed) return;
    w->failed = true;
    snprintf(w->msg, sizeof w->msg, "%s (key '%s')", what, key ? key : "(null)");
}

/* Store enc (taken over) under key, replacing an earlier value in place. */
static void set_encoded(gguf_writer *w, const char *key, wbuf *enc) {
    if (!key || enc->oom) {
        free(enc->p);
        if (w) writer_fail(w, key ? "out of memory" : "NULL key", key);
        return;
    }
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].key, key) == 0) {
            free(w->kv[i].enc.p);
            w->kv[i].enc = *enc;
            return;
        }
    if (w->n_kv == w->cap_kv) {
        size_t cap = w->cap_kv ? 2 * w->cap_kv : 16;
        wkv *kv = realloc(w->kv, cap * sizeof *kv);
        if (!kv) {
            free(enc->p);
            writer_fail(w, "out of memory", key);
            return;
        }
        w->kv = kv;
        w->cap_kv = cap;
    }
    char *k = strdup(key);
    if (!k) {
        free(enc->p);
        writer_fail(w, "out of memory", key);
        return;
    }
    w->kv[w->n_kv].key = k;
    w->kv[w->n_kv].enc = *enc;
    w->n_kv++;
}

static void set_scalar(gguf_writer *w, const char *key, gguf_vtype t, const void *v) {
    if (!w) return;
    wbuf b = {0};
    wb_u32(&b, t);
    wb_put(&b, v, vtype_size(t));
    set_encoded(w, key, &b);
}

void gguf_set_u8(gguf_writer *w, const char *key, uint8_t v) { set_scalar(w, key, GGUF_UINT8, &v); }
void gguf_set_i8(gguf_writer *w, const char *key, int8_t v) { set_scalar(w, key, GGUF_INT8, &v); }
void gguf_set_u16(gguf_writer *w, const char *key, uint16_t v) { set_scalar(w, key, GGUF_UINT16, &v); }
void gguf_set_i16(gguf_writer *w, const char *key, int16_t v) { set_scalar(w, key, GGUF_INT16, &v); }
void gguf_set_u32(gguf_writer *w, const char *key, uint32_t v) { set_scalar(w, key, GGUF_UINT32, &v); }
void gguf_set_i32(gguf_writer *w, const char *key, int32_t v) { set_scalar(w, key, GGUF_INT32, &v); }
void gguf_set_u64(gguf_writer *w, const char *key, uint64_t v) { set_scalar(w, key, GGUF_UINT64, &v); }
void gguf_set_i64(gguf_writer *w, const char *key, int64_t v) { set_scalar(w, key, GGUF_INT64, &v); }
void gguf_set_f32(gguf_writer *w, const char *key, float v) { set_scalar(w, key, GGUF_FLOAT32, &v); }
void gguf_set_f64(gguf_writer *w, const char *key, double v) { set_scalar(w, key, GGUF_FLOAT64, &v); }

void gguf_set_bool(gguf_writer *w, const char *key, bool v) {
    uint8_t b = v ? 1 : 0;
    set_scalar(w, key, GGUF_BOOL, &b);
}

static void set_strn(gguf_writer *w, const char *key, const char *v, size_t len) {
    if (!w) return;
    wbuf b = {0};
    wb_u32(&b, GGUF_STRING);
    wb_str(&b, v, len);
    set_encoded(w, key, &b);
}

void gguf_set_str(gguf_writer *w, const char *key, const char *v) {
    set_strn(w, key, v ? v : "", v ? strlen(v) : 0);
}

void gguf_set_arr_strn(gguf_writer *w, const char *key, const char *const *v, const size_t *lens,
                       size_t n) {
    if (!w) return;
    if (n && !v) {
        writer_fail(w, "NULL string array", key);
        return;
    }
    wbuf b = {0};
    wb_u32(&b, GGUF_ARRAY);
    wb_u32(&b, GGUF_STRING);
    wb_u64(&b, n);
    for (size_t i = 0; i < n; i++) {
        const char *s = v[i] ? v[i] : "";
        wb_str(&b, s, v[i] ? (lens ? lens[i] : strlen(s)) : 0);
    }
    set_encoded(w, key, &b);
}

void gguf_set_arr_str(gguf_writer *w, const char *key, const char *const *v, size_t n) {
    gguf_set_arr_strn(w, key, v, NULL, n);
}

void gguf_set_arr(gguf_writer *w, const char *key, gguf_vtype elem_type, const void *data,
                  size_t n) {
    if (!w) return;
    size_t es = vtype_size(elem_type);
    if (!es) {
        writer_fail(w, "gguf_set_arr: element type must be numeric or bool", key);
        return;
    }
    if ((n && !data) || n > SIZE_MAX / es) {
        writer_fail(w, "gguf_set_arr: bad array", key);
        return;
    }
    wbuf b = {0};
    wb_u32(&b, GGUF_ARRAY);
    wb_u32(&b, elem_type);
    wb_u64(&b, n);
    wb_put(&b, data, n * es);
    set_encoded(w, key, &b);
}

void gguf_set_arr_i32(gguf_writer *w, const char *key, const int32_t *v, size_t n) {
    gguf_set_arr(w, key, GGUF_INT32, v, n);
}

void gguf_set_arr_f32(gguf_writer *w, const char *key, const float *v, size_t n) {
    gguf_set_arr(w, key, GGUF_FLOAT32, v, n);
}

int gguf_set_value(gguf_writer *w, const char *key, const gguf_value *v, wick_error *err) {
    if (!w || !key || !v) return wick_fail(err, "gguf_set_value: bad arguments");
    switch (v->type) {
    case GGUF_UINT8: gguf_set_u8(w, key, (uint8_t)v->u); break;
    case GGUF_INT8: gguf_set_i8(w, key, (int8_t)v->i); break;
    case GGUF_UINT16: gguf_set_u16(w, key, (uint16_t)v->u); break;
    case GGUF_INT16: gguf_set_i16(w, key, (int16_t)v->i); break;
    case GGUF_UINT32: gguf_set_u32(w, key, (uint32_t)v->u); break;
    case GGUF_INT32: gguf_set_i32(w, key, (int32_t)v->i); break;
    case GGUF_UINT64: gguf_set_u64(w, key, v->u); break;
    case GGUF_INT64: gguf_set_i64(w, key, v->i); break;
    case GGUF_FLOAT32: gguf_set_f32(w, key, (float)v->f); break;
    case GGUF_FLOAT64: gguf_set_f64(w, key, v->f); break;
    case GGUF_BOOL: gguf_set_bool(w, key, v->u != 0); break;
    case GGUF_STRING:
        if (v->s.len > SIZE_MAX || (v->s.len && !v->s.ptr))
            return wick_fail(err, "gguf_set_value: bad string for key '%s'", key);
        set_strn(w, key, v->s.ptr ? v->s.ptr : "", (size_t)v->s.len);
        break;
    case GGUF_ARRAY: {
        uint64_t n = v->arr.n;
        if (n > SIZE_MAX) return wick_fail(err, "gguf_set_value: array too long for key '%s'", key);
        if (v->arr.type == GGUF_STRING) {
            if (n && !v->arr.strs)
                return wick_fail(err, "gguf_set_value: bad string array for key '%s'", key);
            wbuf b = {0};
            wb_u32(&b, GGUF_ARRAY);
            wb_u32(&b, GGUF_STRING);
            wb_u64(&b, n);
            for (uint64_t i = 0; i < n; i++) wb_str(&b, v->arr.strs[i].ptr, (size_t)v->arr.strs[i].len);
            set_encoded(w, key, &b);
        } else if (vtype_size(v->arr.type) && (v->arr.data || n == 0)) {
            gguf_set_arr(w, key, v->arr.type, v->arr.data, (size_t)n);
        } else {
            return wick_fail(err, "cannot copy GGUF key '%s': nested or unknown array type %s",
                             key, gguf_vtype_name(v->arr.type));
        }
        break;
    }
    default:
        return wick_fail(err, "gguf_set_value: unknown value type %d for key '%s'", (int)v->type,
                         key);
    }
    if (w->failed) return wick_fail(err, "gguf_set_value: %s", w->msg);
    return 0;
}

/* Check a tensor's name, type and shape; fill t (name, data left unset) and *nbytes. */
static int tensor_shape(const char *name, int type, int n_dims, const int64_t *ne, tlist_tensor *t,
                        uint64_t *nbytes, wick_error *err) {
    if (!name || !ne) return wick_fail(err, "gguf_add_tensor: bad arguments");
    if (!name[0]) return wick_fail(err, "gguf_add_tensor: empty tensor name");
    int be = dtype_block_elems(type);
    if (be == 0) return wick_fail(err, "tensor '%s': unknown type id %d", name, type);
    if (n_dims < 1 || n_dims > WICK_MAX_DIMS)
        return wick_fail(err, "tensor '%s': %d dims (must be 1..%d)", name, n_dims, WICK_MAX_DIMS);
    memset(t, 0, sizeof *t);
    t->type = type;
    t->n_dims = n_dims;
    uint64_t rows = 1;
    for (int d = 0; d < WICK_MAX_DIMS; d++) {
        t->ne[d] = d < n_dims ? ne[d] : 1;
        if (t->ne[d] <= 0)
            return wick_fail(err, "tensor '%s': bad dimension ne[%d] = %" PRId64, name, d, t->ne[d]);
        if (d > 0 && __builtin_mul_overflow(rows, (uint64_t)t->ne[d], &rows))
            return wick_fail(err, "tensor '%s': size overflows", name);
    }
    if (t->ne[0] % be != 0)
        return wick_fail(err, "tensor '%s': ne[0] = %" PRId64 " is not a multiple of the %s block size %d",
                         name, t->ne[0], dtype_name(type), be);
    if (__builtin_mul_overflow((uint64_t)dtype_row_bytes(type, t->ne[0]), rows, nbytes))
        return wick_fail(err, "tensor '%s': size overflows", name);
    return 0;
}

/* tensor_shape, and nbytes must be what the shape takes. */
static int check_tensor(gguf_writer *w, tlist_tensor *t, const char *name, int type, int n_dims, const int64_t *ne,
                        size_t nbytes, wick_error *err) {
    if (!w) return wick_fail(err, "gguf_add_tensor: bad arguments");
    uint64_t want;
    if (tensor_shape(name, type, n_dims, ne, t, &want, err) < 0) return -1;
    if (want != nbytes)
        return wick_fail(err, "tensor '%s': %zu bytes given, %s shape needs %" PRIu64, name,
                         nbytes, dtype_name(type), want);
    return 0;
}

int gguf_add_tensor(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                    const void *data, size_t nbytes, wick_error *err) {
    tlist_tensor t;
    if (check_tensor(w, &t, name, type, n_dims, ne, nbytes, err) < 0) return -1;
    if (!data) return wick_fail(err, "tensor '%s': no data", name);
    return tlist_add(&w->tensors, &t, name, data, nbytes, err);
}

int gguf_add_tensor_info(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                         wick_error *err) {
    if (!w) return wick_fail(err, "gguf_add_tensor_info: bad arguments");
    tlist_tensor t;
    uint64_t nbytes;
    if (tensor_shape(name, type, n_dims, ne, &t, &nbytes, err) < 0) return -1;
    if (nbytes > SIZE_MAX) return wick_fail(err, "tensor '%s': size overflows", name);
    if (tlist_add(&w->tensors, &t, name, NULL, 0, err) < 0) return -1;
    w->tensors.t[w->tensors.n - 1].nbytes = (size_t)nbytes; /* its bytes come later, streamed */
    w->n_info_only++;
    return 0;
}

int gguf_add_tensor_deferred(gguf_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                             size_t nbytes, tlist_fill_fn fill, void *ctx, wick_error *err) {
    tlist_tensor t;
    if (check_tensor(w, &t, name, type, n_dims, ne, nbytes, err) < 0) return -1;
    if (!fill) return wick_fail(err, "tensor '%s': no data", name);
    return tlist_add_deferred(&w->tensors, &t, name, nbytes, fill, ctx, err);
}

typedef struct fout {
    FILE *fp;
    uint64_t pos;
    bool bad;
} fout;

static void out_put(fout *o, const void *p, size_t n) {
    if (o->bad || n == 0) return;
    if (fwrite(p, 1, n, o->fp) != n) o->bad = true;
    o->pos += n;
}

static void out_pad(fout *o, uint32_t align) {
    static const unsigned char zeros[64];
    while (!o->bad && o->pos % align) {
        size_t k = align - (size_t)(o->pos % align);
        out_put(o, zeros, k < sizeof zeros ? k : sizeof zeros);
    }
}

static uint64_t align_up(uint64_t x, uint32_t a) { return (x + a - 1) / a * a; }

/* The data alignment the writer's keys ask for (general.alignment) or the
 * default; 0 after setting err when the key is malformed. */
static uint32_t writer_alignment(const gguf_writer *w, const char *path, wick_error *err) {
    uint32_t align = GGUF_DEFAULT_ALIGNMENT;
    for (size_t i = 0; i < w->n_kv; i++) {
        if (strcmp(w->kv[i].key, "general.alignment") != 0) continue;
        uint32_t t, a = 0;
        memcpy(&t, w->kv[i].enc.p, 4);
        if (t == GGUF_UINT32) memcpy(&a, w->kv[i].enc.p + 4, 4);
        if (t != GGUF_UINT32 || a == 0 || a > (1u << 30) || (a & (a - 1))) {
            wick_fail(err, "cannot write %s: general.alignment must be a power-of-two uint32", path);
            return 0;
        }
        align = a;
    }
    return align;
}

/* Magic, counts, keys, tensor infos and the padding before the data. */
static void write_header(const gguf_writer *w, fout *o, uint32_t align) {
    out_put(o, "GGUF", 4);
    uint32_t version = 3;
    uint64_t n_t = w->tensors.n, n_kv = w->n_kv;
    out_put(o, &version, 4);
    out_put(o, &n_t, 8);
    out_put(o, &n_kv, 8);
    for (size_t i = 0; i < w->n_kv; i++) {
        uint64_t klen = strlen(w->kv[i].key);
        out_put(o, &klen, 8);
        out_put(o, w->kv[i].key, (size_t)klen);
        out_put(o, w->kv[i].enc.p, w->kv[i].enc.len);
    }
    uint64_t off = 0;
    for (size_t i = 0; i < w->tensors.n; i++) {
        const tlist_tensor *t = &w->tensors.t[i];
        uint64_t nlen = strlen(t->name);
        uint32_t nd = (uint32_t)t->n_dims, type = (uint32_t)t->type;
        out_put(o, &nlen, 8);
        out_put(o, t->name, (size_t)nlen);
        out_put(o, &nd, 4);
        for (int d = 0; d < t->n_dims; d++) {
            uint64_t ne = (uint64_t)t->ne[d];
            out_put(o, &ne, 8);
        }
        out_put(o, &type, 4);
        out_put(o, &off, 8);
        off += align_up(t->nbytes, align);
    }
    out_pad(o, align);
}

/* Close the file; on any write error remove it and fill err. */
static int finish_file(fout *o, const char *path, wick_error *err) {
    bool bad = o->bad;
    int saved = errno;
    if (fclose(o->fp) != 0 && !bad) {
        bad = true;
        saved = errno;
    }
    o->fp = NULL;
    if (bad) {
        remove(path);
        return wick_fail_code(err, WICK_E_IO, "write error on %s: %s", path, strerror(saved ? saved : EIO));
    }
    return 0;
}

int gguf_write(gguf_writer *w, const char *path, wick_error *err) {
    if (!w || !path) return wick_fail(err, "gguf_write: bad arguments");
    if (w->failed) return wick_fail_code(err, WICK_E_IO, "cannot write %s: %s", path, w->msg);
    if (w->n_info_only) return wick_fail(err, "cannot write %s: tensors declared without data (use gguf_write_begin)", path);
    const uint32_t align = writer_alignment(w, path, err);
    if (!align) return -1;
    FILE *fp = fopen(path, "wb");
    if (!fp) return wick_fail_code(err, WICK_E_IO, "cannot create %s: %s", path, strerror(errno));
    fout o = {fp, 0, false};
    write_header(w, &o, align);
    for (size_t i = 0; i < w->tensors.n && !o.bad; i++) {
        void *tmp; /* a deferred tensor's bytes, made now */
        const void *data = tlist_data(&w->tensors.t[i], &tmp, err);
        if (!data && w->tensors.t[i].nbytes) {
            fclose(fp);
            remove(path);
            return -1;
        }
        out_put(&o, data, w->tensors.t[i].nbytes);
        free(tmp);
        out_pad(&o, align);
    }
    return finish_file(&o, path, err);
}

/* ---- the streaming writer ---- */

struct gguf_stream {
    const gguf_writer *w;
    char *path;
    fout o;
    uint32_t align;
    size_t tensor;   /* index of the tensor whose bytes come next */
    size_t written;  /* of that tensor's bytes so far */
};

gguf_stream *gguf_write_begin(gguf_writer *w, const char *path, wick_error *err) {
    if (!w || !path) {
        wick_fail(err, "gguf_write_begin: bad arguments");
        return NULL;
    }
    if (w->failed) {
        wick_fail_code(err, WICK_E_IO, "cannot write %s: %s", path, w->msg);
        return NULL;
    }
    if (w->n_info_only != w->tensors.n) {
        wick_fail(err, "cannot write %s: a streamed file takes only tensors declared with gguf_add_tensor_info", path);
        return NULL;
    }
    const uint32_t align = writer_alignment(w, path, err);
    if (!align) return NULL;
    gguf_stream *s = calloc(1, sizeof *s);
    char *p = strdup(path);
    if (!s || !p) {
        free(s);
        free(p);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        wick_fail_code(err, WICK_E_IO, "cannot create %s: %s", path, strerror(errno));
        free(s);
        free(p);
        return NULL;
    }
    s->w = w;
    s->path = p;
    s->o = (fout){fp, 0, false};
    s->align = align;
    write_header(w, &s->o, align);
    if (s->o.bad) {
        finish_file(&s->o, path, err);
        free(s->path);
        free(s);
        return NULL;
    }
    return s;
}

int gguf_write_data(gguf_stream *s, const void *data, size_t n, wick_error *err) {
    if (!s || (n && !data)) return wick_fail(err, "gguf_write_data: bad arguments");
    while (n > 0) {
        if (s->tensor >= s->w->tensors.n)
            return wick_fail(err, "%s: more data than the declared tensors hold", s->path);
        const tlist_tensor *t = &s->w->tensors.t[s->tensor];
        size_t k = t->nbytes - s->written < n ? t->nbytes - s->written : n;
        out_put(&s->o, data, k);
        data = (const char *)data + k;
        n -= k;
        s->written += k;
        if (s->written == t->nbytes) {
            out_pad(&s->o, s->align);
            s->tensor++;
            s->written = 0;
        }
    }
    if (s->o.bad) return wick_fail_code(err, WICK_E_IO, "write error on %s: %s", s->path, strerror(errno));
    return 0;
}

int gguf_write_end(gguf_stream *s, wick_error *err) {
    if (!s) return wick_fail(err, "gguf_write_end: bad arguments");
    /* zero-byte tensors need no data; skip past them */
    while (s->tensor < s->w->tensors.n && s->w->tensors.t[s->tensor].nbytes == 0) s->tensor++;
    int rc = 0;
    if (s->tensor < s->w->tensors.n) {
        rc = wick_fail(err, "%s: tensor '%s' got %zu of its %zu bytes", s->path,
                       s->w->tensors.t[s->tensor].name, s->written, s->w->tensors.t[s->tensor].nbytes);
        s->o.bad = true;
        fclose(s->o.fp);
        remove(s->path);
    } else {
        rc = finish_file(&s->o, s->path, err);
    }
    free(s->path);
    free(s);
    return rc;
}

void gguf_write_abort(gguf_stream *s) {
    if (!s) return;
    if (s->o.fp) fclose(s->o.fp);
    remove(s->path);
    free(s->path);
    free(s);
}
