/* safetensors.c — Hugging Face safetensors: memory-mapped reading of one file
 * or a sharded set (model.safetensors.index.json), and writing one file or
 * shards + index (see safetensors.h).
 *
 * File layout: u64 little-endian header length N, N bytes of JSON
 *   {"__metadata__": {...}, "name": {"dtype": "F32", "shape": [outer, ..., inner],
 *    "data_offsets": [begin, end]}, ...}
 * then the data section; offsets are relative to its start.
 *
 * Invariants of this module:
 *  - the header length is checked against the file size and a 100 MB cap
 *    before the JSON is parsed; every tensor's [begin, end) lies inside the
 *    data section and, for dtypes of known width, equals dtype × shape (all
 *    arithmetic overflow-checked);
 *  - shapes are stored in GGML order (ne[0] = last safetensors dim); a 0-d
 *    scalar has n_dims 0 and ne all 1;
 *  - names and dtype strings are NUL-terminated copies owned by the st_set
 *    and unique across all shards (sorted name index);
 *  - each shard file is mapped once and stays mapped until st_close. */
#include "format/safetensors.h"

#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/name_index.h"
#include "core/fileio.h"
#include "format/tensor_list.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c assumes a little-endian host"
#endif

#define ST_MAX_HEADER (100u * 1024 * 1024)
#define ST_INDEX_NAME "model.safetensors.index.json"
#define ST_MAX_JSON_INT 9007199254740992.0 /* 2^53: larger JSON integers are inexact */

/* ---- dtypes ---- */

typedef struct st_dtype {
    const char *name;
    int wick_type; /* -1: not a wick type */
    int bits;      /* bits per element */
} st_dtype;

static const st_dtype ST_DTYPES[] = {
    {"F32", WICK_F32, 32},   {"F16", WICK_F16, 16},   {"BF16", WICK_BF16, 16},
    {"F64", WICK_F64, 64},   {"I8", WICK_I8, 8},      {"I16", WICK_I16, 16},
    {"I32", WICK_I32, 32},   {"I64", WICK_I64, 64},   {"U8", -1, 8},
    {"U16", -1, 16},         {"U32", -1, 32},         {"U64", -1, 64},
    {"BOOL", -1, 8},         {"F8_E4M3", -1, 8},      {"F8_E5M2", -1, 8},
    {"F8_E8M0", -1, 8},      {"F4", -1, 4},           {"F6_E2M3", -1, 6},
    {"F6_E3M2", -1, 6},      {"C64", -1, 64},
};

static const st_dtype *dtype_lookup(const char *name) {
    for (size_t i = 0; i < sizeof ST_DTYPES / sizeof ST_DTYPES[0]; i++)
        if (strcmp(ST_DTYPES[i].name, name) == 0) return &ST_DTYPES[i];
    return NULL;
}

static const char *dtype_st_name(int type) {
    switch (type) {
    case WICK_F32: return "F32";
    case WICK_F16: return "F16";
    case WICK_BF16: return "BF16";
    default: return NULL;
    }
}

/* ---- the reader ---- */

typedef struct st_shard {
    char *path;
    file_map map;
} st_shard;

struct st_set {
    st_shard *files;
    int n_files;
    int n;
    size_t cap;
    wick_tensor *tensors;
    char **names;
    char **dtypes;
    int *shard_of;
    name_index index;
};

void st_close(st_set *s) {
    if (!s) return;
    for (int i = 0; i < s->n_files; i++) {
        file_map_close(&s->files[i].map);
        free(s->files[i].path);
    }
    for (int i = 0; i < s->n; i++) {
        free(s->names[i]);
        free(s->dtypes[i]);
    }
    free(s->files);
    free(s->tensors);
    free(s->names);
    free(s->dtypes);
    free(s->shard_of);
    free(s->index.refs);
    free(s);
}

static int grow_tensors(st_set *s, int extra) {
    if (extra > INT_MAX / 2 - s->n) return -1;
    /* four arrays, one capacity: each grows the same way from the same start */
    size_t need = (size_t)s->n + (size_t)extra, ct = s->cap, cn = s->cap, cd = s->cap, cs = s->cap;
    if (!GROW_ARRAY(s->tensors, need, &ct) || !GROW_ARRAY(s->names, need, &cn) || !GROW_ARRAY(s->dtypes, need, &cd) ||
        !GROW_ARRAY(s->shard_of, need, &cs))
        return -1;
    s->cap = ct;
    return 0;
}

/* A JSON number that is a non-negative integer below 2^53. */
static bool json_uint(const cJSON *j, uint64_t *out) {
    if (!cJSON_IsNumber(j)) return false;
    double d = j->valuedouble;
    if (!(d >= 0.0) || d > ST_MAX_JSON_INT || d != floor(d)) return false;
    *out = (uint64_t)d;
    return true;
}

/* Parse one tensor entry of shard `shard` and append it. */
static int add_entry(st_set *s, int shard, const cJSON *e, const unsigned char *data,
                     size_t data_size, wick_error *err) {
    const char *path = s->files[shard].path;
    const char *name = e->string;
    if (!name || !name[0]) return wick_fail_code(err, WICK_E_FORMAT, "tensor with an empty name in %s", path);
    if (!cJSON_IsObject(e))
        return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: header entry is not an object", name, path);
    const cJSON *jd = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *js = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *jo = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    if (!cJSON_IsString(jd) || !jd->valuestring)
        return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: missing or bad \"dtype\"", name, path);
    if (!cJSON_IsArray(js))
        return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: missing or bad \"shape\"", name, path);
    if (!cJSON_IsArray(jo) || cJSON_GetArraySize(jo) != 2)
        return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: missing or bad \"data_offsets\"", name, path);

    wick_tensor t;
    memset(&t, 0, sizeof t);
    int nd = cJSON_GetArraySize(js);
    if (nd > WICK_MAX_DIMS)
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "tensor '%s' in %s has %d dims (at most %d supported)", name, path,
                              nd, WICK_MAX_DIMS);
    t.n_dims = nd;
    for (int d = 0; d < WICK_MAX_DIMS; d++) t.ne[d] = 1;
    uint64_t nel = 1;
    bool ovf = false;
    int k = 0;
    for (const cJSON *x = js->child; x; x = x->next, k++) {
        uint64_t v;
        if (!json_uint(x, &v))
            return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: shape[%d] is not a non-negative integer",
                                  name, path, k);
        t.ne[nd - 1 - k] = (int64_t)v;
        ovf |= __builtin_mul_overflow(nel, v, &nel);
    }
    uint64_t begin, end;
    if (!json_uint(cJSON_GetArrayItem(jo, 0), &begin) || !json_uint(cJSON_GetArrayItem(jo, 1), &end))
        return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: data_offsets are not non-negative integers",
                              name, path);
    if (begin > end || end > data_size)
        return wick_fail_code(err, WICK_E_FORMAT,
                              "tensor '%s' data out of file bounds (%s): data_offsets [%" PRIu64
                              ", %" PRIu64 "], data section has %zu bytes",
                              name, path, begin, end, data_size);
    const st_dtype *dt = dtype_lookup(jd->valuestring);
    if (dt) {
        uint64_t bits;
        ovf |= __builtin_mul_overflow(nel, (uint64_t)dt->bits, &bits);
        if (ovf) return wick_fail_code(err, WICK_E_FORMAT, "tensor '%s' in %s: shape size overflows", name, path);
        if (bits % 8 != 0 || bits / 8 != end - begin)
            return wick_fail_code(err, WICK_E_FORMAT,
                                  "tensor '%s' in %s: data_offsets span %" PRIu64
                                  " bytes, but %s x shape needs %" PRIu64 " bits",
                                  name, path, end - begin, dt->name, bits);
    }
    t.type = dt ? dt->wick_type : -1;
    t.data = data + begin;
    t.nbytes = (size_t)(end - begin);

    if (grow_tensors(s, 1)) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", path);
    char *nm = strdup(name), *dn = strdup(jd->valuestring);
    if (!nm || !dn) {
        free(nm);
        free(dn);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", path);
    }
    t.name = nm;
    s->tensors[s->n] = t;
    s->names[s->n] = nm;
    s->dtypes[s->n] = dn;
    s->shard_of[s->n] = shard;
    s->n++;
    return 0;
}

/* Map one file and append its tensors. */
static int load_file(st_set *s, const char *path, wick_error *err) {
    st_shard *f = realloc(s->files, (size_t)(s->n_files + 1) * sizeof *f);
    if (!f) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory opening %s", path);
    s->files = f;
    int shard = s->n_files;
    st_shard *sh = &s->files[shard];
    memset(sh, 0, sizeof *sh);
    sh->path = strdup(path);
    if (!sh->path) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory opening %s", path);
    s->n_files++;
    if (file_map_open(&sh->map, path, err)) return -1;

    const unsigned char *p = sh->map.data;
    size_t size = sh->map.size;
    if (size < 8) return wick_fail_code(err, WICK_E_FORMAT, "truncated safetensors file %s (no header length)", path);
    uint64_t hlen;
    memcpy(&hlen, p, 8);
    if (hlen > ST_MAX_HEADER)
        return wick_fail_code(err, WICK_E_FORMAT, "safetensors header of %s claims %" PRIu64 " bytes (limit %u)", path,
                              hlen, ST_MAX_HEADER);
    if (hlen > size - 8)
        return wick_fail_code(err, WICK_E_FORMAT,
                              "truncated safetensors file %s: header of %" PRIu64
                              " bytes runs past the end of the file (%zu bytes)",
                              path, hlen, size);
    if (hlen < 2 || p[8] != '{')
        return wick_fail_code(err, WICK_E_FORMAT, "bad safetensors header in %s (not a JSON object)", path);
    /* Parse a NUL-terminated copy so the JSON parser can never read past it. */
    char *text = malloc((size_t)hlen + 1);
    if (!text) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", path);
    memcpy(text, p + 8, (size_t)hlen);
    text[hlen] = 0;
    cJSON *root = cJSON_Parse(text);
    free(text);
    if (!root || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return wick_fail_code(err, WICK_E_FORMAT, "bad safetensors header in %s (invalid JSON)", path);
    }
    const unsigned char *data = p + 8 + hlen;
    size_t data_size = size - 8 - (size_t)hlen;
    int rc = 0;
    for (const cJSON *e = root->child; e && rc == 0; e = e->next) {
        if (e->string && strcmp(e->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(e))
                rc = wick_fail_code(err, WICK_E_FORMAT, "bad safetensors header in %s (__metadata__ is not an object)",
                                    path);
            continue;
        }
        rc = add_entry(s, shard, e, data, data_size, err);
    }
    cJSON_Delete(root);
    return rc;
}

/* Build the name index; duplicate names are an error. */
static int finish(st_set *s, wick_error *err) {
    int j, i;
    if (index_build(&s->index, s->names, s->n, &j, &i)) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    if (j < 0) return 0;
    if (s->shard_of[i] == s->shard_of[j])
        return wick_fail_code(err, WICK_E_FORMAT, "duplicate tensor name '%s' in %s", s->names[i],
                              s->files[s->shard_of[i]].path);
    return wick_fail_code(err, WICK_E_FORMAT, "duplicate tensor name '%s' in %s and %s", s->names[i],
                          s->files[s->shard_of[j]].path, s->files[s->shard_of[i]].path);
}

st_set *st_open_file(const char *path, wick_error *err) {
    if (!path) {
        wick_fail(err, "st_open_file: no path");
        return NULL;
    }
    st_set *s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory opening %s", path);
        return NULL;
    }
    if (load_file(s, path, err) || finish(s, err)) {
        st_close(s);
        return NULL;
    }
    return s;
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A shard name from an index must stay inside the model directory. */
static bool shard_name_ok(const char *n) {
    if (!n[0] || n[0] == '/') return false;
    for (const char *p = n; *p;) {
        const char *q = strchr(p, '/');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') return false;
        p += len + (q ? 1 : 0);
    }
    return true;
}

static st_set *open_index(const char *dir, const char *index_path, wick_error *err) {
    char *text = file_read_all(index_path, NULL, err);
    if (!text) return NULL;
    cJSON *root = cJSON_Parse(text);
    free(text);
    st_set *s = NULL;
    const char **files = NULL;
    size_t n_files = 0;
    const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!root || !cJSON_IsObject(root) || !cJSON_IsObject(wm)) {
        wick_fail_code(err, WICK_E_FORMAT, "bad safetensors index %s (no \"weight_map\" object)", index_path);
        goto fail;
    }
    int n_entries = cJSON_GetArraySize(wm);
    files = calloc((size_t)n_entries + 1, sizeof *files);
    if (!files) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", index_path);
        goto fail;
    }
    for (const cJSON *e = wm->child; e; e = e->next) {
        if (!cJSON_IsString(e) || !e->valuestring || !shard_name_ok(e->valuestring)) {
            wick_fail_code(err, WICK_E_FORMAT, "bad safetensors index %s: bad file name for tensor '%s'", index_path,
                           e->string ? e->string : "");
            goto fail;
        }
        bool seen = false;
        for (size_t i = 0; i < n_files && !seen; i++) seen = strcmp(files[i], e->valuestring) == 0;
        if (!seen) files[n_files++] = e->valuestring;
    }
    if (n_files == 0) {
        wick_fail_code(err, WICK_E_FORMAT, "safetensors index %s names no files", index_path);
        goto fail;
    }
    qsort(files, n_files, sizeof *files, cmp_str);
    s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", index_path);
        goto fail;
    }
    for (size_t i = 0; i < n_files; i++) {
        char path[4096];
        if (path_join(path, sizeof path, dir, files[i])) {
            wick_fail(err, "path too long: %s/%s", dir, files[i]);
            goto fail;
        }
        if (load_file(s, path, err)) goto fail;
    }
    if (finish(s, err)) goto fail;
    /* Every tensor the index lists must be in the shard it names. */
    for (const cJSON *e = wm->child; e; e = e->next) {
        int i = index_find(&s->index, e->string);
        char want[4096];
        if (path_join(want, sizeof want, dir, e->valuestring)) want[0] = 0;
        if (i < 0) {
            wick_fail_code(err, WICK_E_FORMAT, "index %s lists tensor '%s' in %s, which does not contain it",
                           index_path, e->string, e->valuestring);
            goto fail;
        }
        if (strcmp(s->files[s->shard_of[i]].path, want) != 0) {
            wick_fail_code(err, WICK_E_FORMAT, "index %s lists tensor '%s' in %s, but it is in %s", index_path,
                           e->string, e->valuestring, s->files[s->shard_of[i]].path);
            goto fail;
        }
    }
    free(files);
    cJSON_Delete(root);
    return s;
fail:
    st_close(s);
    free(files);
    cJSON_Delete(root);
    return NULL;
}

static bool has_suffix(const char *s, const char *suf) {
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

st_set *st_open_dir(const char *dir, wick_error *err) {
    if (!dir) {
        wick_fail(err, "st_open_dir: no directory");
        return NULL;
    }
    char path[4096];
    if (path_join(path, sizeof path, dir, ST_INDEX_NAME) == 0 && file_exists(path))
        return open_index(dir, path, err);
    if (path_join(path, sizeof path, dir, "model.safetensors") == 0 && file_exists(path))
        return st_open_file(path, err);
    DIR *d = opendir(dir);
    if (!d) {
        wick_fail_code(err, WICK_E_IO, "cannot open directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    int found = 0;
    char only[4096] = "";
    for (struct dirent *de; (de = readdir(d));) {
        if (!has_suffix(de->d_name, ".safetensors")) continue;
        char p[4096];
        if (path_join(p, sizeof p, dir, de->d_name) || !file_exists(p)) continue;
        if (found++ == 0) memcpy(only, p, sizeof only);
    }
    closedir(d);
    if (found == 0) {
        wick_fail_code(err, WICK_E_NOT_FOUND, "no .safetensors file in %s", dir);
        return NULL;
    }
    if (found > 1) {
        wick_fail_code(err, WICK_E_FORMAT, "%s holds %d .safetensors files but no %s", dir, found, ST_INDEX_NAME);
        return NULL;
    }
    return st_open_file(only, err);
}

int st_n_tensors(const st_set *s) { return s ? s->n : 0; }

const wick_tensor *st_tensor(const st_set *s, int i) {
    return (s && i >= 0 && i < s->n) ? &s->tensors[i] : NULL;
}

const wick_tensor *st_find_tensor(const st_set *s, const char *name) {
    if (!s) return NULL;
    int i = index_find(&s->index, name);
    return i >= 0 ? &s->tensors[i] : NULL;
}

int st_tensor_index(const st_set *s, const wick_tensor *t) {
    if (!s || !t || t < s->tensors || t >= s->tensors + s->n) return -1;
    return (int)(t - s->tensors);
}

const char *st_dtype_name(const st_set *s, int i) {
    return (s && i >= 0 && i < s->n) ? s->dtypes[i] : NULL;
}

/* ---- the writer ---- */

struct st_writer {
    tensor_list tensors;
};

st_writer *st_writer_new(void) { return calloc(1, sizeof(st_writer)); }

void st_writer_free(st_writer *w) {
    if (!w) return;
    tlist_free(&w->tensors);
    free(w);
}

static int check_tensor(st_writer *w, tlist_tensor *tp, const char *name, int type, int n_dims,
                        const int64_t *ne, size_t nbytes, wick_error *err) {
    if (!w || !name || (n_dims > 0 && !ne)) return wick_fail(err, "st_add_tensor: bad arguments");
    if (!name[0] || strcmp(name, "__metadata__") == 0)
        return wick_fail(err, "st_add_tensor: bad tensor name '%s'", name);
    if (!dtype_st_name(type))
        return wick_fail_code(err, WICK_E_UNSUPPORTED, "tensor '%s': safetensors writer supports F32, F16 and BF16, not %s",
                              name, dtype_name(type));
    if (n_dims < 0 || n_dims > WICK_MAX_DIMS)
        return wick_fail(err, "tensor '%s': %d dims (must be 0..%d)", name, n_dims, WICK_MAX_DIMS);
    tlist_tensor t = {0};
    t.type = type;
    t.n_dims = n_dims;
    uint64_t want = dtype_block_bytes(type);
    for (int d = 0; d < WICK_MAX_DIMS; d++) {
        t.ne[d] = d < n_dims ? ne[d] : 1;
        if (t.ne[d] < 0 || (double)t.ne[d] > ST_MAX_JSON_INT)
            return wick_fail(err, "tensor '%s': bad dimension ne[%d] = %" PRId64, name, d, t.ne[d]);
        if (__builtin_mul_overflow(want, (uint64_t)t.ne[d], &want))
            return wick_fail(err, "tensor '%s': size overflows", name);
    }
    if (want != nbytes)
        return wick_fail(err, "tensor '%s': %zu bytes given, %s shape needs %" PRIu64, name,
                         nbytes, dtype_name(type), want);
    *tp = t;
    return 0;
}

int st_add_tensor(st_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                  const void *data, size_t nbytes, wick_error *err) {
    tlist_tensor t;
    if (check_tensor(w, &t, name, type, n_dims, ne, nbytes, err) < 0) return -1;
    if (nbytes && !data) return wick_fail(err, "tensor '%s': no data", name);
    return tlist_add(&w->tensors, &t, name, data, nbytes, err);
}

int st_add_tensor_deferred(st_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                           size_t nbytes, int (*fill)(void *ctx, void *dst, size_t nbytes, wick_error *err),
                           void *ctx, wick_error *err) {
    tlist_tensor t;
    if (check_tensor(w, &t, name, type, n_dims, ne, nbytes, err) < 0) return -1;
    if (!fill) return wick_fail(err, "tensor '%s': no data", name);
    return tlist_add_deferred(&w->tensors, &t, name, nbytes, fill, ctx, err);
}

static void sb_u64(wbuf *b, uint64_t v) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    wbuf_put(b, tmp, (size_t)n);
}

/* A JSON string literal: quotes, backslashes and control bytes escaped;
 * other bytes (UTF-8) copied as they are. */
static void sb_json_str(wbuf *b, const char *s) {
    wbuf_put(b, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            wbuf_put(b, e, 2);
        } else if (c < 0x20) {
            char e[8];
            snprintf(e, sizeof e, "\\u%04x", c);
            wbuf_put(b, e, 6);
        } else {
            wbuf_put(b, (const char *)&c, 1);
        }
    }
    wbuf_put(b, "\"", 1);
}

/* Write tensors [from, to) as one safetensors file. */
static int write_file(const st_writer *w, size_t from, size_t to, const char *path,
                      wick_error *err) {
    wbuf h = {0};
    wbuf_puts(&h, "{\"__metadata__\":{\"format\":\"pt\"}");
    uint64_t off = 0;
    for (size_t i = from; i < to; i++) {
        const tlist_tensor *t = &w->tensors.t[i];
        wbuf_puts(&h, ",");
        sb_json_str(&h, t->name);
        wbuf_puts(&h, ":{\"dtype\":\"");
        wbuf_puts(&h, dtype_st_name(t->type));
        wbuf_puts(&h, "\",\"shape\":[");
        for (int d = t->n_dims - 1; d >= 0; d--) {
            sb_u64(&h, (uint64_t)t->ne[d]);
            if (d) wbuf_puts(&h, ",");
        }
        wbuf_puts(&h, "],\"data_offsets\":[");
        sb_u64(&h, off);
        wbuf_puts(&h, ",");
        off += t->nbytes;
        sb_u64(&h, off);
        wbuf_puts(&h, "]}");
    }
    wbuf_puts(&h, "}");
    while (!h.oom && (8 + h.len) % 8 != 0) wbuf_puts(&h, " ");
    if (h.oom) {
        wbuf_free(&h);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory writing %s", path);
    }
    FILE *fp = fopen(path, "wb");
    if (!fp) {
        wbuf_free(&h);
        return wick_fail_code(err, WICK_E_IO, "cannot create %s: %s", path, strerror(errno));
    }
    uint64_t hlen = h.len;
    bool bad = fwrite(&hlen, 8, 1, fp) != 1 || fwrite(h.data, 1, h.len, fp) != h.len;
    wbuf_free(&h);
    for (size_t i = from; i < to && !bad; i++) {
        const tlist_tensor *t = &w->tensors.t[i];
        void *tmp;
        const void *data = t->nbytes ? tlist_data(t, &tmp, err) : NULL;
        if (t->nbytes && !data) {
            fclose(fp);
            remove(path);
            return -1;
        }
        if (t->nbytes && fwrite(data, 1, t->nbytes, fp) != t->nbytes) bad = true;
        if (t->nbytes) free(tmp);
    }
    int saved = errno;
    if (fclose(fp) != 0 && !bad) {
        bad = true;
        saved = errno;
    }
    if (bad) {
        remove(path);
        return wick_fail_code(err, WICK_E_IO, "write error on %s: %s", path, strerror(saved));
    }
    return 0;
}

int st_write(st_writer *w, const char *path, wick_error *err) {
    if (!w || !path) return wick_fail(err, "st_write: bad arguments");
    return write_file(w, 0, w->tensors.n, path, err);
}

int st_write_sharded(st_writer *w, const char *dir, size_t max_shard_bytes, wick_error *err) {
    if (!w || !dir) return wick_fail(err, "st_write_sharded: bad arguments");
    if (!dir_exists(dir) && mkdir(dir, 0777) != 0 && errno != EEXIST)
        return wick_fail_code(err, WICK_E_IO, "cannot create directory %s: %s", dir, strerror(errno));
    /* Greedy packing in insertion order: a shard ends before the tensor that
     * would push it past max_shard_bytes (a larger tensor gets its own). */
    size_t *start = malloc((w->tensors.n + 2) * sizeof *start);
    if (!start) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    size_t n_shards = 0, cur = 0;
    uint64_t total = 0;
    start[0] = 0;
    for (size_t i = 0; i < w->tensors.n; i++) {
        size_t nb = w->tensors.t[i].nbytes;
        if (i > start[n_shards] && (nb > max_shard_bytes || cur > max_shard_bytes - nb)) {
            start[++n_shards] = i;
            cur = 0;
        }
        cur += nb;
        total += nb;
    }
    n_shards++;
    start[n_shards] = w->tensors.n;
    if (n_shards > 99999) {
        free(start);
        return wick_fail(err, "st_write_sharded: %zu shards is too many", n_shards);
    }
    wbuf idx = {0};
    wbuf_puts(&idx, "{\n  \"metadata\": {\"total_size\": ");
    sb_u64(&idx, total);
    wbuf_puts(&idx, "},\n  \"weight_map\": {");
    int rc = 0;
    for (size_t s = 0; s < n_shards && rc == 0; s++) {
        char name[64], path[4096];
        snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", s + 1, n_shards);
        if (path_join(path, sizeof path, dir, name)) {
            rc = wick_fail(err, "path too long: %s/%s", dir, name);
            break;
        }
        rc = write_file(w, start[s], start[s + 1], path, err);
        for (size_t i = start[s]; i < start[s + 1]; i++) {
            wbuf_puts(&idx, i ? ",\n    " : "\n    ");
            sb_json_str(&idx, w->tensors.t[i].name);
            wbuf_puts(&idx, ": ");
            sb_json_str(&idx, name);
        }
    }
    free(start);
    wbuf_puts(&idx, "\n  }\n}\n");
    if (rc == 0 && idx.oom) rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory writing the index in %s", dir);
    if (rc == 0) {
        char path[4096];
        FILE *fp = NULL;
        if (path_join(path, sizeof path, dir, ST_INDEX_NAME))
            rc = wick_fail(err, "path too long: %s/%s", dir, ST_INDEX_NAME);
        else if (!(fp = fopen(path, "wb")))
            rc = wick_fail_code(err, WICK_E_IO, "cannot create %s: %s", path, strerror(errno));
        else {
            bool bad = fwrite(idx.data, 1, idx.len, fp) != idx.len;
            if (fclose(fp) != 0) bad = true;
            if (bad) {
                remove(path);
                rc = wick_fail_code(err, WICK_E_IO, "write error on %s", path);
            }
        }
    }
    wbuf_free(&idx);
    return rc;
}
