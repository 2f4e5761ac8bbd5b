/* gguf_write.c — writing GGUF v3 files: a writer that collects keys and
 * tensors and writes the file at once (gguf_write), and the streaming writer
 * that writes the header first and the tensor data as it comes
 * (gguf_write_begin / _data / _end). The layout is in gguf_read.c. */
#include "format/gguf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/fileio.h"
#include "format/gguf_internal.h"
#include "format/tensor_list.h"

static void wb_u32(wbuf *b, uint32_t v) { wbuf_put(b, &v, 4); }
static void wb_u64(wbuf *b, uint64_t v) { wbuf_put(b, &v, 8); }
static void wb_str(wbuf *b, const char *s, size_t len) {
    wb_u64(b, len);
    wbuf_put(b, s, len);
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
        free(w->kv[i].enc.data);
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
        free(enc->data);
        if (w) writer_fail(w, key ? "out of memory" : "NULL key", key);
        return;
    }
    for (size_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->kv[i].key, key) == 0) {
            free(w->kv[i].enc.data);
            w->kv[i].enc = *enc;
            return;
        }
    if (!GROW_ARRAY(w->kv, w->n_kv + 1, &w->cap_kv)) {
        free(enc->data);
        writer_fail(w, "out of memory", key);
        return;
    }
    char *k = strdup(key);
    if (!k) {
        free(enc->data);
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
    wbuf_put(&b, v, gguf_vtype_size(t));
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
    size_t es = gguf_vtype_size(elem_type);
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
    wbuf_put(&b, data, n * es);
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
        } else if (gguf_vtype_size(v->arr.type) && (v->arr.data || n == 0)) {
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
        memcpy(&t, w->kv[i].enc.data, 4);
        if (t == GGUF_UINT32) memcpy(&a, w->kv[i].enc.data + 4, 4);
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
        out_put(o, w->kv[i].enc.data, w->kv[i].enc.len);
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
