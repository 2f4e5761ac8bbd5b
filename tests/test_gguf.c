/* test_gguf.c — GGUF reader and writer: round trip of every value type and
 * the five compute tensor types, a hand-made v2 file, the real stories260K
 * and vocab-only files from ../shared, and hostile inputs (every truncation,
 * patched header fields, random byte flips) that must fail cleanly. */
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "core/fileio.h"
#include "format/gguf.h"

/* ---- temp files ---- */

static char tmpdir[256];

static void tmp_setup(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-test-gguf-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        exit(1);
    }
}

static void tmp_cleanup(void) {
    DIR *d = opendir(tmpdir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        if (de->d_name[0] == '.') continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", tmpdir, de->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(tmpdir);
}

static const char *tmp_path(const char *name) {
    static char buf[4][512];
    static int k;
    char *b = buf[k++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", tmpdir, name);
    return b;
}

static void write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n)) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

/* ---- a byte builder for hand-made files ---- */

typedef struct bb {
    unsigned char b[8192];
    size_t n;
} bb;

static void bb_put(bb *b, const void *p, size_t n) {
    memcpy(b->b + b->n, p, n);
    b->n += n;
}
static void bb_u8(bb *b, uint8_t v) { bb_put(b, &v, 1); }
static void bb_u32(bb *b, uint32_t v) { bb_put(b, &v, 4); }
static void bb_u64(bb *b, uint64_t v) { bb_put(b, &v, 8); }
static void bb_str(bb *b, const char *s) {
    bb_u64(b, strlen(s));
    bb_put(b, s, strlen(s));
}
static void bb_pad(bb *b, size_t a) {
    while (b->n % a) bb_u8(b, 0);
}
static void patch_u32(unsigned char *p, size_t at, uint32_t v) { memcpy(p + at, &v, 4); }
static void patch_u64(unsigned char *p, size_t at, uint64_t v) { memcpy(p + at, &v, 8); }

static int has(const wick_error *e, const char *s) { return strstr(e->msg, s) != NULL; }

/* ---- round trip ---- */

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 3));
}

typedef struct tspec {
    const char *name;
    int type, n_dims;
    int64_t ne[4];
} tspec;

static const tspec TENSORS[] = {
    {"token_embd.weight", WICK_F32, 2, {3, 5, 1, 1}},
    {"blk.0.attn_norm.weight", WICK_F16, 1, {7, 1, 1, 1}},
    {"blk.0.ffn_up.weight", WICK_BF16, 3, {4, 2, 3, 1}},
    {"blk.0.attn_q.weight", WICK_Q8_0, 2, {64, 3, 1, 1}},
    {"blk.0.ffn_down.weight", WICK_Q4_0, 4, {32, 2, 1, 2}},
};
#define N_TENSORS (int)(sizeof TENSORS / sizeof TENSORS[0])

static size_t spec_bytes(const tspec *t) {
    return dtype_row_bytes(t->type, t->ne[0]) * (size_t)(t->ne[1] * t->ne[2] * t->ne[3]);
}

static void build_writer(gguf_writer *w) {
    gguf_set_str(w, "general.architecture", "llama");
    gguf_set_u32(w, "replace.me", 1);
    gguf_set_u8(w, "v.u8", 200);
    gguf_set_i8(w, "v.i8", -100);
    gguf_set_u16(w, "v.u16", 60000);
    gguf_set_i16(w, "v.i16", -30000);
    gguf_set_u32(w, "v.u32", 4000000000u);
    gguf_set_i32(w, "v.i32", -2000000000);
    gguf_set_u64(w, "v.u64", 18000000000000000000ull);
    gguf_set_i64(w, "v.i64", -9000000000000000000ll);
    gguf_set_f32(w, "v.f32", 1.5f);
    gguf_set_f64(w, "v.f64", -2.25e300);
    gguf_set_bool(w, "v.bool", true);
    gguf_set_str(w, "v.str", "héllo");
    gguf_set_str(w, "v.empty", "");
    const char *toks[] = {"<s>", "", "▁hello", "a\"b"};
    gguf_set_arr_str(w, "v.arr_str", toks, 4);
    const char *bin[] = {"a\0b", "\0"};
    const size_t lens[] = {3, 1};
    gguf_set_arr_strn(w, "v.arr_strn", bin, lens, 2);
    const int32_t i32s[] = {1, -2, 2147483647, -2147483647 - 1};
    gguf_set_arr_i32(w, "v.arr_i32", i32s, 4);
    const float f32s[] = {0.5f, -1.0f, 3.25f};
    gguf_set_arr_f32(w, "v.arr_f32", f32s, 3);
    const uint8_t u8s[] = {0, 255, 7};
    gguf_set_arr(w, "v.arr_u8", GGUF_UINT8, u8s, 3);
    const int64_t i64s[] = {-5, 1ll << 50};
    gguf_set_arr(w, "v.arr_i64", GGUF_INT64, i64s, 2);
    const double f64s[] = {1e-300, 2.5};
    gguf_set_arr(w, "v.arr_f64", GGUF_FLOAT64, f64s, 2);
    const uint8_t bools[] = {1, 0, 1};
    gguf_set_arr(w, "v.arr_bool", GGUF_BOOL, bools, 3);
    gguf_set_arr(w, "v.arr_empty", GGUF_UINT16, NULL, 0);
    gguf_set_arr_str(w, "v.arr_str_empty", NULL, 0);
    /* Replacing keeps the original position, even with a different type. */
    gguf_set_str(w, "replace.me", "second");
}

static void check_values(const gguf_file *f) {
    wick_error err = {0};
    CHECK_INT(gguf_n_kv(f), 25);
    CHECK_STR(gguf_kv_key(f, 0), "general.architecture");
    CHECK_STR(gguf_kv_key(f, 1), "replace.me");
    CHECK_STR(gguf_kv_key(f, 24), "v.arr_str_empty");
    CHECK(gguf_kv_key(f, 25) == NULL && gguf_kv_key(f, -1) == NULL);
    char *s = NULL;
    CHECK_INT(gguf_get_string(f, "replace.me", &s, &err), 1);
    CHECK_STR(s, "second");
    free(s);
    CHECK_INT(gguf_get_string(f, "general.architecture", &s, &err), 1);
    CHECK_STR(s, "llama");
    free(s);
    CHECK_INT(gguf_get_string(f, "v.str", &s, &err), 1);
    CHECK_STR(s, "héllo");
    free(s);
    CHECK_INT(gguf_get_string(f, "v.empty", &s, &err), 1);
    CHECK_STR(s, "");
    free(s);

    int64_t i = 0;
    CHECK_INT(gguf_get_int(f, "v.u8", &i, &err), 1);
    CHECK_INT(i, 200);
    CHECK_INT(gguf_get_int(f, "v.i8", &i, &err), 1);
    CHECK_INT(i, -100);
    CHECK_INT(gguf_get_int(f, "v.u16", &i, &err), 1);
    CHECK_INT(i, 60000);
    CHECK_INT(gguf_get_int(f, "v.i16", &i, &err), 1);
    CHECK_INT(i, -30000);
    CHECK_INT(gguf_get_int(f, "v.u32", &i, &err), 1);
    CHECK_INT(i, 4000000000ll);
    CHECK_INT(gguf_get_int(f, "v.i32", &i, &err), 1);
    CHECK_INT(i, -2000000000);
    CHECK_INT(gguf_get_int(f, "v.i64", &i, &err), 1);
    CHECK_INT(i, -9000000000000000000ll);
    CHECK_INT(gguf_get_int(f, "v.u64", &i, &err), -1); /* > INT64_MAX */
    CHECK(has(&err, "v.u64"));
    CHECK(gguf_get(f, "v.u64")->type == GGUF_UINT64);
    CHECK(gguf_get(f, "v.u64")->u == 18000000000000000000ull);
    CHECK_INT(gguf_get_int(f, "v.str", &i, &err), -1);
    CHECK(has(&err, "v.str"));
    CHECK_INT(gguf_get_int(f, "absent", &i, &err), 0);

    double d = 0;
    CHECK_INT(gguf_get_float(f, "v.f32", &d, &err), 1);
    CHECK_NEAR(d, 1.5, 0);
    CHECK_INT(gguf_get_float(f, "v.f64", &d, &err), 1);
    CHECK(d == -2.25e300);
    CHECK_INT(gguf_get_float(f, "v.i16", &d, &err), 1);
    CHECK_NEAR(d, -30000, 0);
    CHECK_INT(gguf_get_float(f, "v.arr_f32", &d, &err), -1);
    CHECK_INT(gguf_get_float(f, "absent", &d, &err), 0);

    bool b = false;
    CHECK_INT(gguf_get_bool(f, "v.bool", &b, &err), 1);
    CHECK(b);
    CHECK_INT(gguf_get_bool(f, "v.str", &b, &err), -1);
    CHECK_INT(gguf_get_string(f, "v.bool", &s, &err), -1);

    const gguf_value *v = gguf_get(f, "v.arr_str");
    CHECK(v && v->type == GGUF_ARRAY && v->arr.type == GGUF_STRING && v->arr.n == 4);
    if (v && v->arr.strs) {
        CHECK(v->arr.strs[0].len == 3 && memcmp(v->arr.strs[0].ptr, "<s>", 3) == 0);
        CHECK(v->arr.strs[1].len == 0);
        CHECK(v->arr.strs[2].len == strlen("▁hello") &&
              memcmp(v->arr.strs[2].ptr, "▁hello", strlen("▁hello")) == 0);
        CHECK(v->arr.strs[3].len == 3 && memcmp(v->arr.strs[3].ptr, "a\"b", 3) == 0);
    }
    v = gguf_get(f, "v.arr_strn");
    CHECK(v && v->arr.n == 2 && v->arr.strs && v->arr.strs[0].len == 3 &&
          memcmp(v->arr.strs[0].ptr, "a\0b", 3) == 0 && v->arr.strs[1].len == 1 &&
          v->arr.strs[1].ptr[0] == 0);
    const gguf_value *av = NULL;
    CHECK_INT(gguf_get_arr(f, "v.arr_i32", &av, &err), 1);
    CHECK(av && av->arr.type == GGUF_INT32 && av->arr.n == 4 && av->arr.strs == NULL);
    if (av) {
        CHECK_INT(gguf_arr_int(av, 0), 1);
        CHECK_INT(gguf_arr_int(av, 1), -2);
        CHECK_INT(gguf_arr_int(av, 2), 2147483647);
        CHECK_INT(gguf_arr_int(av, 3), -2147483647ll - 1);
        CHECK_INT(gguf_arr_int(av, 4), 0); /* out of range index */
        CHECK_NEAR(gguf_arr_float(av, 1), -2.0, 0);
    }
    CHECK_INT(gguf_get_arr(f, "v.str", &av, &err), -1);
    CHECK_INT(gguf_get_arr(f, "absent", &av, &err), 0);
    v = gguf_get(f, "v.arr_f32");
    CHECK(v && v->arr.type == GGUF_FLOAT32 && v->arr.n == 3);
    CHECK_NEAR(gguf_arr_float(v, 0), 0.5, 0);
    CHECK_NEAR(gguf_arr_float(v, 2), 3.25, 0);
    CHECK_INT(gguf_arr_int(v, 2), 3);
    v = gguf_get(f, "v.arr_u8");
    CHECK(v && v->arr.type == GGUF_UINT8 && gguf_arr_int(v, 1) == 255 && gguf_arr_int(v, 2) == 7);
    v = gguf_get(f, "v.arr_i64");
    CHECK(v && v->arr.type == GGUF_INT64 && gguf_arr_int(v, 0) == -5 &&
          gguf_arr_int(v, 1) == (1ll << 50));
    v = gguf_get(f, "v.arr_f64");
    CHECK(v && v->arr.type == GGUF_FLOAT64 && gguf_arr_float(v, 0) == 1e-300 &&
          gguf_arr_float(v, 1) == 2.5);
    v = gguf_get(f, "v.arr_bool");
    CHECK(v && v->arr.type == GGUF_BOOL && v->arr.n == 3 && gguf_arr_int(v, 0) == 1 &&
          gguf_arr_int(v, 1) == 0);
    v = gguf_get(f, "v.arr_empty");
    CHECK(v && v->arr.type == GGUF_UINT16 && v->arr.n == 0);
    v = gguf_get(f, "v.arr_str_empty");
    CHECK(v && v->arr.type == GGUF_STRING && v->arr.n == 0);
    CHECK(gguf_get(f, "absent") == NULL);
}

static void check_tensors(const gguf_file *f) {
    CHECK_INT(gguf_n_tensors(f), N_TENSORS);
    for (int i = 0; i < N_TENSORS; i++) {
        const tspec *s = &TENSORS[i];
        const wick_tensor *t = gguf_tensor(f, i);
        CHECK(t != NULL);
        if (!t) continue;
        CHECK_STR(t->name, s->name);
        CHECK(gguf_find_tensor(f, s->name) == t);
        CHECK_INT(t->type, s->type);
        CHECK_INT(t->n_dims, s->n_dims);
        for (int d = 0; d < 4; d++) CHECK_INT(t->ne[d], s->ne[d]);
        size_t nb = spec_bytes(s);
        CHECK_INT(t->nbytes, nb);
        unsigned char *want = malloc(nb);
        fill(want, nb, (unsigned)i);
        CHECK(memcmp(t->data, want, nb) == 0);
        free(want);
        CHECK_INT((uintptr_t)t->data % 32, 0);
    }
    CHECK(gguf_find_tensor(f, "nope") == NULL);
    CHECK(gguf_tensor(f, N_TENSORS) == NULL);
}

static void test_round_trip(void) {
    wick_error err = {0};
    gguf_writer *w = gguf_writer_new();
    build_writer(w);
    for (int i = 0; i < N_TENSORS; i++) {
        const tspec *s = &TENSORS[i];
        size_t nb = spec_bytes(s);
        unsigned char *data = malloc(nb);
        fill(data, nb, (unsigned)i);
        CHECK_INT(gguf_add_tensor(w, s->name, s->type, s->n_dims, s->ne, data, nb, &err), 0);
        free(data);
    }
    /* bad tensors are refused */
    float x[64] = {0};
    int64_t ne[4] = {4, 1, 1, 1};
    CHECK_INT(gguf_add_tensor(w, TENSORS[0].name, WICK_F32, 1, ne, x, 16, &err), -1);
    CHECK(has(&err, "duplicate"));
    CHECK_INT(gguf_add_tensor(w, "x", WICK_F32, 1, ne, x, 12, &err), -1);
    CHECK_INT(gguf_add_tensor(w, "x", 4, 1, ne, x, 16, &err), -1);
    CHECK_INT(gguf_add_tensor(w, "x", WICK_DTYPE_COUNT, 1, ne, x, 16, &err), -1);
    CHECK_INT(gguf_add_tensor(w, "x", WICK_Q8_0, 1, ne, x, 16, &err), -1);
    CHECK_INT(gguf_add_tensor(w, "x", WICK_F32, 5, ne, x, 16, &err), -1);
    CHECK_INT(gguf_add_tensor(w, "x", WICK_F32, 0, ne, x, 16, &err), -1);
    int64_t zero[4] = {4, 0, 1, 1};
    CHECK_INT(gguf_add_tensor(w, "x", WICK_F32, 2, zero, x, 0, &err), -1);

    const char *p1 = tmp_path("rt.gguf");
    CHECK_INT(gguf_write(w, p1, &err), 0);
    gguf_writer_free(w);

    gguf_file *f = gguf_open(p1, &err);
    CHECK_MSG(f != NULL, "%s", err.msg);
    if (!f) return;
    CHECK_INT(gguf_version(f), 3);
    CHECK_INT(gguf_alignment(f), 32);
    CHECK_STR(gguf_path(f), p1);
    check_values(f);
    check_tensors(f);

    /* Copy every key and tensor into a new writer: the file must come out identical. */
    gguf_writer *w2 = gguf_writer_new();
    for (int i = 0; i < gguf_n_kv(f); i++)
        CHECK_INT(gguf_set_value(w2, gguf_kv_key(f, i), gguf_kv_value(f, i), &err), 0);
    for (int i = 0; i < gguf_n_tensors(f); i++) {
        const wick_tensor *t = gguf_tensor(f, i);
        CHECK_INT(gguf_add_tensor(w2, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes, &err),
                  0);
    }
    const char *p2 = tmp_path("rt2.gguf");
    CHECK_INT(gguf_write(w2, p2, &err), 0);
    gguf_writer_free(w2);
    gguf_close(f);
    size_t n1 = 0, n2 = 0;
    char *b1 = file_read_all(p1, &n1, &err), *b2 = file_read_all(p2, &n2, &err);
    CHECK(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0);
    CHECK_INT(n1 % 32, 0);
    free(b1);
    free(b2);

    /* A NULL key makes the writer fail at write time instead of crashing. */
    gguf_writer *w3 = gguf_writer_new();
    gguf_set_u32(w3, NULL, 1);
    CHECK_INT(gguf_write(w3, tmp_path("bad.gguf"), &err), -1);
    gguf_writer_free(w3);
    /* An unwritable path is an error. */
    gguf_writer *w4 = gguf_writer_new();
    CHECK_INT(gguf_write(w4, tmp_path("no/such/dir.gguf"), &err), -1);
    CHECK(has(&err, "no/such/dir.gguf"));
    gguf_writer_free(w4);
}

/* ---- a small hand-made file with recorded field positions ---- */

typedef struct small {
    bb b;
    size_t version, n_tensors, n_kv;
    size_t key0_len, vtype0, str0_len;
    size_t align_val;
    size_t arr_i32_n, arr_str_n, arr_str_el0, arr_elem_type;
    size_t nested_inner_n;
    size_t key3_name;
    size_t t0_ndims, t0_ne0, t0_ne1, t0_type, t0_off;
    size_t t1_name, t1_off;
    size_t data_end; /* end of the last tensor's bytes */
} small;

static void build_small(small *s, uint32_t version, uint32_t alignment) {
    bb *b = &s->b;
    b->n = 0;
    bb_put(b, "GGUF", 4);
    s->version = b->n;
    bb_u32(b, version);
    s->n_tensors = b->n;
    bb_u64(b, 2);
    s->n_kv = b->n;
    bb_u64(b, 5);
    /* kv 0 */
    s->key0_len = b->n;
    bb_str(b, "general.architecture");
    s->vtype0 = b->n;
    bb_u32(b, GGUF_STRING);
    s->str0_len = b->n;
    bb_str(b, "llama");
    /* kv 1 */
    bb_str(b, "general.alignment");
    bb_u32(b, GGUF_UINT32);
    s->align_val = b->n;
    bb_u32(b, alignment);
    /* kv 2 */
    bb_str(b, "arr.i32");
    bb_u32(b, GGUF_ARRAY);
    s->arr_elem_type = b->n;
    bb_u32(b, GGUF_INT32);
    s->arr_i32_n = b->n;
    bb_u64(b, 3);
    bb_u32(b, 10);
    bb_u32(b, (uint32_t)-20);
    bb_u32(b, 30);
    /* kv 3 */
    s->key3_name = b->n + 8;
    bb_str(b, "arr.str");
    bb_u32(b, GGUF_ARRAY);
    bb_u32(b, GGUF_STRING);
    s->arr_str_n = b->n;
    bb_u64(b, 2);
    s->arr_str_el0 = b->n;
    bb_str(b, "ab");
    bb_str(b, "c");
    /* kv 4: array of arrays */
    bb_str(b, "arr.nested");
    bb_u32(b, GGUF_ARRAY);
    bb_u32(b, GGUF_ARRAY);
    bb_u64(b, 2);
    bb_u32(b, GGUF_INT8);
    s->nested_inner_n = b->n;
    bb_u64(b, 1);
    bb_u8(b, 5);
    bb_u32(b, GGUF_STRING);
    bb_u64(b, 1);
    bb_str(b, "x");
    /* tensor 0: F32 {4, 2} */
    bb_str(b, "t0");
    s->t0_ndims = b->n;
    bb_u32(b, 2);
    s->t0_ne0 = b->n;
    bb_u64(b, 4);
    s->t0_ne1 = b->n;
    bb_u64(b, 2);
    s->t0_type = b->n;
    bb_u32(b, WICK_F32);
    s->t0_off = b->n;
    bb_u64(b, 0);
    /* tensor 1: Q8_0 {32} at the next aligned offset */
    s->t1_name = b->n + 8;
    bb_str(b, "t1");
    bb_u32(b, 1);
    bb_u64(b, 32);
    bb_u32(b, WICK_Q8_0);
    s->t1_off = b->n;
    uint64_t off1 = (32 + alignment - 1) / alignment * alignment;
    bb_u64(b, off1);
    bb_pad(b, alignment);
    size_t data = b->n;
    for (int i = 0; i < 8; i++) {
        float x = (float)i + 0.5f;
        bb_put(b, &x, 4);
    }
    bb_pad(b, alignment);
    for (int i = 0; i < 34; i++) bb_u8(b, (uint8_t)i);
    s->data_end = data + off1 + 34;
    CHECK_INT(b->n, s->data_end);
    bb_pad(b, alignment);
}

static gguf_file *open_bytes(const void *p, size_t n, wick_error *err) {
    const char *path = tmp_path("h.gguf");
    write_file(path, p, n);
    return gguf_open(path, err);
}

/* The streaming writer: the same file as gguf_write for the same tensors fed
 * in pieces of any size; a short or long stream is an error that removes the file. */
static void test_stream(void) {
    wick_error err;
    float a[96], b[7];
    for (int i = 0; i < 96; i++) a[i] = (float)i * 0.5f;
    for (int i = 0; i < 7; i++) b[i] = -(float)i;
    const int64_t ne_a[2] = {32, 3}, ne_b[1] = {7};
    gguf_writer *w1 = gguf_writer_new(), *w2 = gguf_writer_new();
    gguf_set_str(w1, "general.architecture", "llama");
    gguf_set_str(w2, "general.architecture", "llama");
    CHECK_INT(gguf_add_tensor(w1, "a", WICK_F32, 2, ne_a, a, sizeof a, &err), 0);
    CHECK_INT(gguf_add_tensor(w1, "b", WICK_F32, 1, ne_b, b, sizeof b, &err), 0);
    CHECK_INT(gguf_add_tensor_info(w2, "a", WICK_F32, 2, ne_a, &err), 0);
    CHECK_INT(gguf_add_tensor_info(w2, "b", WICK_F32, 1, ne_b, &err), 0);
    CHECK_INT(gguf_add_tensor_info(w2, "a", WICK_F32, 1, ne_b, &err), -1); /* duplicate name */
    CHECK_INT(gguf_write(w2, tmp_path("nope.gguf"), &err), -1);           /* declared only */
    const char *p1 = tmp_path("whole.gguf"), *p2 = tmp_path("streamed.gguf");
    CHECK_INT(gguf_write(w1, p1, &err), 0);
    gguf_stream *s = gguf_write_begin(w2, p2, &err);
    CHECK(s != NULL);
    if (s) {
        /* pieces that cross the tensor boundary */
        CHECK_INT(gguf_write_data(s, a, 100, &err), 0);
        CHECK_INT(gguf_write_data(s, (const char *)a + 100, sizeof a - 100, &err), 0);
        CHECK_INT(gguf_write_data(s, b, sizeof b, &err), 0);
        CHECK_INT(gguf_write_end(s, &err), 0);
        size_t n1, n2;
        char *f1 = file_read_all(p1, &n1, &err), *f2 = file_read_all(p2, &n2, &err);
        CHECK(f1 && f2 && n1 == n2 && memcmp(f1, f2, n1) == 0);
        free(f1), free(f2);
    }
    /* too little data: an error naming the tensor, and no file left */
    s = gguf_write_begin(w2, tmp_path("short.gguf"), &err);
    CHECK(s && gguf_write_data(s, a, sizeof a, &err) == 0);
    CHECK(s && gguf_write_end(s, &err) == -1 && has(&err, "'b'"));
    struct stat st;
    CHECK(stat(tmp_path("short.gguf"), &st) != 0);
    /* too much */
    s = gguf_write_begin(w2, tmp_path("long.gguf"), &err);
    CHECK(s && gguf_write_data(s, a, sizeof a, &err) == 0 && gguf_write_data(s, a, sizeof a, &err) == -1);
    gguf_write_abort(s);
    CHECK(stat(tmp_path("long.gguf"), &st) != 0);
    /* an unwritable place */
    CHECK(gguf_write_begin(w2, tmp_path("no/such/dir.gguf"), &err) == NULL && has(&err, "cannot create"));
    gguf_writer_free(w1);
    gguf_writer_free(w2);
}

static void test_small_and_v2(void) {
    wick_error err = {0};
    for (uint32_t version = 2; version <= 3; version++) {
        small s;
        build_small(&s, version, version == 2 ? 16 : 32);
        gguf_file *f = open_bytes(s.b.b, s.b.n, &err);
        CHECK_MSG(f != NULL, "%s", err.msg);
        if (!f) continue;
        CHECK_INT(gguf_version(f), version);
        CHECK_INT(gguf_alignment(f), version == 2 ? 16 : 32);
        CHECK_INT(gguf_n_kv(f), 5);
        CHECK_INT(gguf_n_tensors(f), 2);
        const gguf_value *v = gguf_get(f, "arr.i32");
        CHECK(v && gguf_arr_int(v, 1) == -20);
        v = gguf_get(f, "arr.nested");
        CHECK(v && v->type == GGUF_ARRAY && v->arr.type == GGUF_ARRAY && v->arr.n == 2 &&
              v->arr.data == NULL && v->arr.strs == NULL);
        CHECK_INT(gguf_arr_int(v, 0), 0);
        const wick_tensor *t = gguf_find_tensor(f, "t0");
        CHECK(t && t->nbytes == 32 && ((const float *)t->data)[7] == 7.5f);
        t = gguf_find_tensor(f, "t1");
        CHECK(t && t->type == WICK_Q8_0 && t->nbytes == 34 &&
              ((const unsigned char *)t->data)[33] == 33);
        /* a nested array cannot be copied into a writer */
        gguf_writer *w = gguf_writer_new();
        CHECK_INT(gguf_set_value(w, "n", gguf_get(f, "arr.nested"), &err), -1);
        CHECK_INT(gguf_set_value(w, "s", gguf_get(f, "arr.str"), &err), 0);
        gguf_writer_free(w);
        gguf_close(f);
    }
}

/* Every error case: patch one field of the small file, expect a clean error. */
typedef struct hcase {
    const char *what;
    int width; /* 4 or 8; 0 = raw bytes */
    size_t small_field;
    uint64_t value;
    const char *expect; /* substring of the error, or NULL */
} hcase;

#define F(field) offsetof(small, field)

static void test_hostile_fields(void) {
    small base;
    build_small(&base, 3, 32);
    const hcase cases[] = {
        {"v1", 4, F(version), 1, "v1"},
        {"v4", 4, F(version), 4, "version"},
        {"v0", 4, F(version), 0, "version"},
        {"big-endian", 4, F(version), 0x03000000u, "big-endian"},
        {"huge n_tensors", 8, F(n_tensors), 1ull << 62, "tensors"},
        {"max n_tensors", 8, F(n_tensors), UINT64_MAX, "tensors"},
        {"n_tensors +1", 8, F(n_tensors), 3, NULL},
        {"huge n_kv", 8, F(n_kv), 1ull << 62, "key/value"},
        {"max n_kv", 8, F(n_kv), UINT64_MAX, "key/value"},
        {"n_kv 2^31", 8, F(n_kv), 1ull << 31, NULL},
        {"key len max", 8, F(key0_len), UINT64_MAX, "h.gguf"},
        {"key len 2^40", 8, F(key0_len), 1ull << 40, "h.gguf"},
        {"key len to EOF", 8, F(key0_len), 100000, NULL},
        {"bad vtype", 4, F(vtype0), 13, "unknown value type id 13"},
        {"bad vtype max", 4, F(vtype0), UINT32_MAX, "unknown value type"},
        {"string len huge", 8, F(str0_len), UINT64_MAX - 3, "general.architecture"},
        {"alignment 0", 4, F(align_val), 0, "alignment"},
        {"alignment 3", 4, F(align_val), 3, "alignment"},
        {"alignment 2^31", 4, F(align_val), 1u << 31, "alignment"},
        {"arr n huge", 8, F(arr_i32_n), 1ull << 61, "arr.i32"},
        {"arr n max", 8, F(arr_i32_n), UINT64_MAX, "arr.i32"},
        {"arr elem type 13", 4, F(arr_elem_type), 13, "arr.i32"},
        {"str arr n huge", 8, F(arr_str_n), 1ull << 60, "arr.str"},
        {"str arr el len huge", 8, F(arr_str_el0), UINT64_MAX, "arr.str"},
        {"nested n huge", 8, F(nested_inner_n), 1ull << 62, "arr.nested"},
        {"n_dims 0", 4, F(t0_ndims), 0, "'t0'"},
        {"n_dims 5", 4, F(t0_ndims), 5, "'t0'"},
        {"n_dims max", 4, F(t0_ndims), UINT32_MAX, "'t0'"},
        {"ne0 zero", 8, F(t0_ne0), 0, "'t0'"},
        {"ne0 negative", 8, F(t0_ne0), UINT64_MAX, "'t0'"},
        {"ne1 huge", 8, F(t0_ne1), 1ull << 40, "out of file bounds"},
        {"ne overflow", 8, F(t0_ne1), 1ull << 62, "'t0'"},
        {"type gap", 4, F(t0_type), 4, "unknown type id 4"},
        {"type count", 4, F(t0_type), WICK_DTYPE_COUNT, "'t0'"},
        {"type max", 4, F(t0_type), UINT32_MAX, "'t0'"},
        {"type block", 4, F(t0_type), WICK_Q8_0, "block"},
        {"offset misaligned", 8, F(t0_off), 1, "alignment"},
        {"offset past end", 8, F(t0_off), 96, "out of file bounds"},
        {"offset huge aligned", 8, F(t0_off), UINT64_MAX - 31, "out of file bounds"},
        {"t1 offset huge", 8, F(t1_off), 1ull << 63, "out of file bounds"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const hcase *h = &cases[c];
        small s = base;
        size_t at = *(const size_t *)((const char *)&base + h->small_field);
        if (h->width == 4) patch_u32(s.b.b, at, (uint32_t)h->value);
        else patch_u64(s.b.b, at, h->value);
        wick_error err = {0};
        gguf_file *f = open_bytes(s.b.b, s.b.n, &err);
        CHECK_MSG(f == NULL, "case '%s' opened", h->what);
        gguf_close(f);
        CHECK_MSG(err.msg[0] != 0, "case '%s': empty error", h->what);
        if (h->expect) CHECK_MSG(has(&err, h->expect), "case '%s': error \"%s\"", h->what, err.msg);
    }
    /* byte patches */
    wick_error err = {0};
    small s = base;
    memcpy(s.b.b, "GGUX", 4);
    CHECK(open_bytes(s.b.b, s.b.n, &err) == NULL && has(&err, "magic") && has(&err, "h.gguf"));
    s = base;
    memcpy(s.b.b + base.t1_name, "t0", 2); /* duplicate tensor name */
    CHECK(open_bytes(s.b.b, s.b.n, &err) == NULL && has(&err, "duplicate tensor name 't0'"));
    s = base;
    memcpy(s.b.b + base.key3_name, "arr.i32", 7); /* duplicate key */
    CHECK(open_bytes(s.b.b, s.b.n, &err) == NULL && has(&err, "duplicate"));
    s = base;
    s.b.b[base.t1_name + 1] = 0; /* NUL inside a tensor name */
    CHECK(open_bytes(s.b.b, s.b.n, &err) == NULL);
    s = base;
    s.b.b[base.key0_len + 8 + 3] = 0; /* NUL inside a key */
    CHECK(open_bytes(s.b.b, s.b.n, &err) == NULL);
    /* arrays nested deeper than the limit */
    bb *d = malloc(sizeof *d);
    d->n = 0;
    bb_put(d, "GGUF", 4);
    bb_u32(d, 3);
    bb_u64(d, 0);
    bb_u64(d, 1);
    bb_str(d, "deep");
    bb_u32(d, GGUF_ARRAY);
    for (int i = 0; i < 100; i++) {
        bb_u32(d, GGUF_ARRAY);
        bb_u64(d, 1);
    }
    bb_u32(d, GGUF_UINT8);
    bb_u64(d, 0);
    CHECK(open_bytes(d->b, d->n, &err) == NULL && has(&err, "deep"));
    free(d);
    /* a missing file and a directory */
    CHECK(gguf_open(tmp_path("missing.gguf"), &err) == NULL && has(&err, "missing.gguf"));
    CHECK(gguf_open(tmpdir, &err) == NULL);
}

/* Every truncation of the small file: an error before the end of the last
 * tensor's data, a valid file after it (only trailing padding removed). */
static void test_truncation(void) {
    small s;
    build_small(&s, 3, 32);
    int bad_ok = 0, bad_fail = 0;
    for (size_t len = 0; len < s.b.n; len++) {
        wick_error err = {0};
        gguf_file *f = open_bytes(s.b.b, len, &err);
        if (len < s.data_end) bad_ok += f != NULL;
        else bad_fail += f == NULL;
        if (len < s.data_end && !f && err.msg[0] == 0) bad_ok++;
        gguf_close(f);
    }
    CHECK_INT(bad_ok, 0);
    CHECK_INT(bad_fail, 0);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Touch everything an opened file exposes, so ASan sees any overread. */
static unsigned touch(const gguf_file *f) {
    unsigned acc = 0;
    for (int i = 0; i < gguf_n_kv(f); i++) {
        acc += (unsigned)strlen(gguf_kv_key(f, i));
        const gguf_value *v = gguf_kv_value(f, i);
        if (v->type == GGUF_STRING && v->s.len) acc += (unsigned char)v->s.ptr[v->s.len - 1];
        if (v->type == GGUF_ARRAY && v->arr.strs)
            for (uint64_t k = 0; k < v->arr.n; k++)
                if (v->arr.strs[k].len) acc += (unsigned char)v->arr.strs[k].ptr[v->arr.strs[k].len - 1];
        if (v->type == GGUF_ARRAY && v->arr.data && v->arr.n)
            acc += (unsigned)gguf_arr_int(v, v->arr.n - 1);
    }
    for (int i = 0; i < gguf_n_tensors(f); i++) {
        const wick_tensor *t = gguf_tensor(f, i);
        acc += ((const unsigned char *)t->data)[0] + ((const unsigned char *)t->data)[t->nbytes - 1];
    }
    return acc;
}

static void test_random_flips(void) {
    small s;
    build_small(&s, 3, 32);
    int opened = 0, with_msg = 1;
    unsigned acc = 0;
    for (int it = 0; it < 3000; it++) {
        bb *b = malloc(sizeof *b);
        *b = s.b;
        int n = 1 + (int)(rng() % 4);
        for (int k = 0; k < n; k++) {
            size_t at = (size_t)(rng() % (s.data_end - 4 + 4));
            if (rng() % 3 == 0) b->b[at] = (unsigned char)rng();
            else b->b[at] ^= (unsigned char)(1u << (rng() % 8));
        }
        wick_error err = {0};
        gguf_file *f = open_bytes(b->b, b->n, &err);
        if (f) {
            opened++;
            acc += touch(f);
            gguf_close(f);
        } else if (!err.msg[0]) {
            with_msg = 0;
        }
        free(b);
    }
    CHECK(with_msg);
    CHECK(opened > 0); /* flips inside data leave valid files */
    (void)acc;
}

/* ---- real files from ../shared ---- */

static void test_stories(void) {
    const char *path = shared_path("models/stories260K/stories260K-f32.gguf");
    if (!path) SKIP("stories260K-f32.gguf not found (set WICK_SHARED)");
    wick_error err = {0};
    gguf_file *f = gguf_open(path, &err);
    CHECK_MSG(f != NULL, "%s", err.msg);
    if (!f) return;
    CHECK_INT(gguf_version(f), 3);
    char *arch = NULL;
    CHECK_INT(gguf_get_string(f, "general.architecture", &arch, &err), 1);
    CHECK_STR(arch, "llama");
    free(arch);
    int64_t emb = 0;
    CHECK_INT(gguf_get_int(f, "llama.embedding_length", &emb, &err), 1);
    CHECK_INT(emb, 64);
    const gguf_value *toks = NULL;
    CHECK_INT(gguf_get_arr(f, "tokenizer.ggml.tokens", &toks, &err), 1);
    CHECK(toks && toks->arr.type == GGUF_STRING && toks->arr.n == 512);
    const wick_tensor *t = gguf_find_tensor(f, "token_embd.weight");
    CHECK(t != NULL);
    if (t) {
        CHECK_INT(t->type, WICK_F32);
        CHECK_INT(t->n_dims, 2);
        CHECK_INT(t->ne[0], 64);
        CHECK_INT(t->ne[1], 512);
        CHECK_INT(t->nbytes, 64 * 512 * 4);
        const float *x = t->data;
        double sum = 0;
        for (int i = 0; i < 64 * 512; i++) sum += fabs(x[i]);
        CHECK(sum > 0 && isfinite(sum));
    }
    /* Truncations of the real file: every length through the header, then a
     * sample inside the data; all fail up to the end of the furthest tensor. */
    size_t n = 0;
    char *bytes = file_read_all(path, &n, &err);
    CHECK(bytes != NULL);
    size_t need_len = 0;
    for (int i = 0; i < gguf_n_tensors(f); i++) {
        size_t end = gguf_tensor_file_offset(f, i) + gguf_tensor(f, i)->nbytes;
        if (end > need_len) need_len = end;
    }
    CHECK(gguf_data_offset(f) > 0 && gguf_data_offset(f) % 32 == 0);
    CHECK(need_len > gguf_data_offset(f) && need_len <= n);
    if (bytes) {
        int opened_short = 0, silent = 0;
        for (size_t len = 0; len < need_len; len += len < gguf_data_offset(f) + 64 ? 1 : 4093) {
            wick_error e2 = {0};
            gguf_file *g = open_bytes(bytes, len, &e2);
            opened_short += g != NULL;
            silent += !g && !e2.msg[0];
            gguf_close(g);
        }
        CHECK_INT(opened_short, 0);
        CHECK_INT(silent, 0);
    }
    free(bytes);
    gguf_close(f);
}

static void test_vocab_files(void) {
    const char *dir = shared_path("tokenizers/llama.cpp-vocab");
    if (!dir) SKIP("tokenizers/llama.cpp-vocab not found (set WICK_SHARED)");
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 5, ".gguf") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        wick_error err = {0};
        gguf_file *f = gguf_open(path, &err);
        CHECK_MSG(f != NULL, "%s: %s", de->d_name, err.msg);
        if (!f) continue;
        n++;
        CHECK_INT(gguf_n_tensors(f), 0);
        const gguf_value *toks = NULL;
        CHECK_INT(gguf_get_arr(f, "tokenizer.ggml.tokens", &toks, &err), 1);
        CHECK(toks && toks->arr.type == GGUF_STRING && toks->arr.n > 100);
        char *model = NULL;
        CHECK_INT(gguf_get_string(f, "tokenizer.ggml.model", &model, &err), 1);
        free(model);
        gguf_close(f);
    }
    closedir(d);
    CHECK(n >= 10);
}

int main(void) {
    tmp_setup();
    RUN(test_round_trip);
    RUN(test_stream);
    RUN(test_small_and_v2);
    RUN(test_hostile_fields);
    RUN(test_truncation);
    RUN(test_random_flips);
    RUN(test_stories);
    RUN(test_vocab_files);
    tmp_cleanup();
    return check_summary("test_gguf");
}
