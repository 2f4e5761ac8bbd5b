/* test_safetensors.c — safetensors reader and writer: single-file and sharded
 * round trips, directory discovery, the real stories260K HF export from
 * ../shared, and hostile headers / truncations that must fail cleanly. */
#include <cJSON.h>
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "core/fileio.h"
#include "format/safetensors.h"

/* ---- temp files ---- */

static char tmpdir[256];

static void rm_tree(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_tree(p);
        else unlink(p);
    }
    closedir(d);
    rmdir(dir);
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

static int has(const wick_error *e, const char *s) { return strstr(e->msg, s) != NULL; }

/* ---- round trip ---- */

typedef struct tspec {
    const char *name;
    int type, n_dims;
    int64_t ne[4];
} tspec;

static const tspec TENSORS[] = {
    {"model.embed_tokens.weight", WICK_F32, 2, {3, 5, 1, 1}},
    {"model.norm.weight", WICK_F16, 1, {7, 1, 1, 1}},
    {"odd \"name\" \\ é\n", WICK_BF16, 3, {4, 2, 3, 1}},
    {"scalar", WICK_F32, 0, {1, 1, 1, 1}},
    {"four.d", WICK_F16, 4, {2, 3, 1, 2}},
    {"big", WICK_F32, 2, {64, 16, 1, 1}},
};
#define N_TENSORS (int)(sizeof TENSORS / sizeof TENSORS[0])

static size_t spec_bytes(const tspec *t) {
    return dtype_block_bytes(t->type) * (size_t)(t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]);
}

static void fill(unsigned char *p, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++) p[i] = (unsigned char)(seed * 131u + i * 7u + (i >> 3));
}

static st_writer *make_writer(void) {
    wick_error err = {0};
    st_writer *w = st_writer_new();
    for (int i = 0; i < N_TENSORS; i++) {
        const tspec *s = &TENSORS[i];
        size_t nb = spec_bytes(s);
        unsigned char *data = malloc(nb);
        fill(data, nb, (unsigned)i);
        CHECK_MSG(st_add_tensor(w, s->name, s->type, s->n_dims, s->ne, data, nb, &err) == 0, "%s",
                  err.msg);
        free(data);
    }
    return w;
}

static void check_set(const st_set *s) {
    CHECK_INT(st_n_tensors(s), N_TENSORS);
    for (int i = 0; i < N_TENSORS; i++) {
        const tspec *sp = &TENSORS[i];
        const wick_tensor *t = st_find_tensor(s, sp->name);
        CHECK_MSG(t != NULL, "tensor %s missing", sp->name);
        if (!t) continue;
        CHECK_STR(t->name, sp->name);
        CHECK_INT(t->type, sp->type);
        CHECK_INT(t->n_dims, sp->n_dims);
        for (int d = 0; d < 4; d++) CHECK_INT(t->ne[d], sp->ne[d]);
        size_t nb = spec_bytes(sp);
        CHECK_INT(t->nbytes, nb);
        unsigned char *want = malloc(nb);
        fill(want, nb, (unsigned)i);
        CHECK(memcmp(t->data, want, nb) == 0);
        free(want);
        int idx = (int)(t - st_tensor(s, 0));
        CHECK_STR(st_dtype_name(s, idx), sp->type == WICK_F32 ? "F32" : sp->type == WICK_F16 ? "F16" : "BF16");
    }
    CHECK(st_find_tensor(s, "absent") == NULL);
    CHECK(st_tensor(s, N_TENSORS) == NULL && st_tensor(s, -1) == NULL);
}

static void test_round_trip_single(void) {
    wick_error err = {0};
    st_writer *w = make_writer();
    /* refused tensors */
    float x[16] = {0};
    int64_t ne[4] = {4, 1, 1, 1};
    CHECK_INT(st_add_tensor(w, "model.norm.weight", WICK_F32, 1, ne, x, 16, &err), -1);
    CHECK(has(&err, "duplicate"));
    CHECK_INT(st_add_tensor(w, "q", WICK_Q8_0, 1, ne, x, 16, &err), -1);
    CHECK_INT(st_add_tensor(w, "q", WICK_F32, 1, ne, x, 12, &err), -1);
    CHECK_INT(st_add_tensor(w, "q", WICK_F32, 5, ne, x, 16, &err), -1);
    CHECK_INT(st_add_tensor(w, "__metadata__", WICK_F32, 1, ne, x, 16, &err), -1);

    const char *path = tmp_path("rt.safetensors");
    CHECK_INT(st_write(w, path, &err), 0);
    st_writer_free(w);

    /* header: 8-byte aligned, __metadata__ format pt, scalar shape [] */
    size_t n = 0;
    char *bytes = file_read_all(path, &n, &err);
    CHECK(bytes != NULL);
    if (bytes) {
        uint64_t hlen;
        memcpy(&hlen, bytes, 8);
        CHECK_INT((8 + hlen) % 8, 0);
        CHECK(8 + hlen <= n);
        cJSON *root = cJSON_ParseWithLength(bytes + 8, hlen);
        CHECK(root != NULL);
        const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "__metadata__"), "format");
        CHECK(cJSON_IsString(fmt) && strcmp(fmt->valuestring, "pt") == 0);
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "scalar"), "shape");
        CHECK(cJSON_IsArray(shape) && cJSON_GetArraySize(shape) == 0);
        /* outer-first order on disk */
        shape = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "model.embed_tokens.weight"), "shape");
        CHECK(cJSON_GetArraySize(shape) == 2 && cJSON_GetArrayItem(shape, 0)->valueint == 5 &&
              cJSON_GetArrayItem(shape, 1)->valueint == 3);
        cJSON_Delete(root);
        free(bytes);
    }

    st_set *s = st_open_file(path, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (!s) return;
    check_set(s);
    /* tensors come back in insertion order; the first starts 8-byte aligned */
    for (int i = 0; i < N_TENSORS; i++) CHECK_STR(st_tensor(s, i)->name, TENSORS[i].name);
    CHECK_INT((uintptr_t)st_tensor(s, 0)->data % 8, 0);
    st_close(s);

    /* a directory holding only model.safetensors, or only one other file */
    char dir[512];
    snprintf(dir, sizeof dir, "%s/single", tmpdir);
    mkdir(dir, 0777);
    char p2[600];
    snprintf(p2, sizeof p2, "%s/model.safetensors", dir);
    w = make_writer();
    CHECK_INT(st_write(w, p2, &err), 0);
    s = st_open_dir(dir, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (s) check_set(s);
    st_close(s);
    char p3[600];
    snprintf(p3, sizeof p3, "%s/other.safetensors", dir);
    rename(p2, p3);
    s = st_open_dir(dir, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    st_close(s);
    snprintf(p2, sizeof p2, "%s/third.safetensors", dir);
    CHECK_INT(st_write(w, p2, &err), 0); /* now two files, no index */
    s = st_open_dir(dir, &err);
    CHECK(s == NULL && has(&err, "index"));
    st_writer_free(w);
    snprintf(dir, sizeof dir, "%s/empty", tmpdir);
    mkdir(dir, 0777);
    CHECK(st_open_dir(dir, &err) == NULL && has(&err, "no .safetensors"));
    CHECK(st_open_dir(tmp_path("nonexistent"), &err) == NULL);
    CHECK(st_open_file(tmp_path("nonexistent.safetensors"), &err) == NULL);
}

static void test_round_trip_sharded(void) {
    wick_error err = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/sharded", tmpdir);
    st_writer *w = make_writer();
    /* 4096-byte "big" alone exceeds the limit; the others pack together */
    CHECK_INT(st_write_sharded(w, dir, 100, &err), 0);
    st_writer_free(w);
    size_t total = 0;
    for (int i = 0; i < N_TENSORS; i++) total += spec_bytes(&TENSORS[i]);

    /* shard files and the index */
    char p[600];
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    char *text = file_read_all(p, NULL, &err);
    CHECK(text != NULL);
    int n_files = 0;
    if (text) {
        cJSON *root = cJSON_Parse(text);
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "metadata"), "total_size");
        CHECK(cJSON_IsNumber(ts) && (size_t)ts->valuedouble == total);
        const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
        CHECK_INT(cJSON_GetArraySize(wm), N_TENSORS);
        const cJSON *last = cJSON_GetObjectItemCaseSensitive(wm, "big");
        CHECK(cJSON_IsString(last));
        if (cJSON_IsString(last)) {
            /* model-0000N-of-0000N.safetensors: N is the shard count */
            CHECK(strncmp(last->valuestring, "model-", 6) == 0);
            n_files = atoi(last->valuestring + 6);
            char want[64];
            snprintf(want, sizeof want, "model-%05d-of-%05d.safetensors", n_files, n_files);
            CHECK_STR(last->valuestring, want);
        }
        cJSON_Delete(root);
        free(text);
    }
    CHECK(n_files >= 3);
    for (int i = 1; i <= n_files; i++) {
        snprintf(p, sizeof p, "%s/model-%05d-of-%05d.safetensors", dir, i, n_files);
        CHECK_MSG(file_exists(p), "%s missing", p);
    }
    st_set *s = st_open_dir(dir, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (s) check_set(s);
    st_close(s);

    /* one shard when everything fits */
    snprintf(dir, sizeof dir, "%s/one_shard", tmpdir);
    w = make_writer();
    CHECK_INT(st_write_sharded(w, dir, 1 << 20, &err), 0);
    st_writer_free(w);
    snprintf(p, sizeof p, "%s/model-00001-of-00001.safetensors", dir);
    CHECK(file_exists(p));
    s = st_open_dir(dir, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (s) check_set(s);
    st_close(s);
}

/* Index files that must be refused. */
static void test_bad_index(void) {
    wick_error err = {0};
    char dir[512], p[600];
    snprintf(dir, sizeof dir, "%s/badidx", tmpdir);
    st_writer *w = make_writer();
    CHECK_INT(st_write_sharded(w, dir, 100, &err), 0);
    st_writer_free(w);
    snprintf(p, sizeof p, "%s/model.safetensors.index.json", dir);
    char *good = file_read_all(p, NULL, &err);
    CHECK(good != NULL);
    if (!good) return;
    const char *bad[] = {
        "not json",
        "[]",
        "{}",
        "{\"weight_map\": []}",
        "{\"weight_map\": {}}",
        "{\"weight_map\": {\"big\": 5}}",
        "{\"weight_map\": {\"big\": \"../x.safetensors\"}}",
        "{\"weight_map\": {\"big\": \"/etc/passwd\"}}",
        "{\"weight_map\": {\"big\": \"missing.safetensors\"}}",
        "{\"weight_map\": {\"nope\": \"model-00001-of-00003.safetensors\"}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_file(p, bad[i], strlen(bad[i]));
        st_set *s = st_open_dir(dir, &err);
        CHECK_MSG(s == NULL, "index '%s' accepted", bad[i]);
        CHECK(err.msg[0] != 0);
        st_close(s);
    }
    /* a tensor listed under the wrong shard */
    char *swapped = strdup(good);
    char *big = strstr(swapped, "\"big\": \"model-");
    CHECK(big != NULL);
    if (big) {
        big[strlen("\"big\": \"model-0000")] = '1'; /* big lives in the last shard */
        write_file(p, swapped, strlen(swapped));
        st_set *s = st_open_dir(dir, &err);
        CHECK(s == NULL && has(&err, "big"));
        st_close(s);
    }
    free(swapped);
    /* the same tensor in two shards */
    write_file(p, good, strlen(good));
    char shard1[600];
    snprintf(shard1, sizeof shard1, "%s/model-00001-of-00003.safetensors", dir);
    if (file_exists(shard1)) {
        w = st_writer_new();
        float x[4] = {1, 2, 3, 4};
        int64_t ne[4] = {4, 1, 1, 1};
        CHECK_INT(st_add_tensor(w, "big", WICK_F32, 1, ne, x, sizeof x, &err), 0);
        CHECK_INT(st_add_tensor(w, "model.embed_tokens.weight", WICK_F32, 1, ne, x, sizeof x, &err), 0);
        CHECK_INT(st_write(w, shard1, &err), 0);
        st_writer_free(w);
        st_set *s = st_open_dir(dir, &err);
        CHECK(s == NULL && has(&err, "duplicate"));
        st_close(s);
    }
    free(good);
}

/* ---- hostile single files ---- */

/* Write u64 header length + json (+ optional override of the length) + data bytes. */
static st_set *open_st(const char *json, uint64_t hlen_override, size_t data_len, wick_error *err) {
    size_t jl = strlen(json);
    size_t n = 8 + jl + data_len;
    unsigned char *b = calloc(1, n ? n : 1);
    uint64_t hl = hlen_override ? hlen_override : jl;
    memcpy(b, &hl, 8);
    memcpy(b + 8, json, jl);
    const char *path = tmp_path("h.safetensors");
    write_file(path, b, n);
    free(b);
    return st_open_file(path, err);
}

static void test_hostile_headers(void) {
    wick_error err = {0};
    typedef struct hc {
        const char *json;
        uint64_t hlen;
        size_t data;
        const char *expect;
    } hc;
    const hc cases[] = {
        {"{}", UINT64_MAX, 0, "header"},
        {"{}", 1ull << 40, 0, "header"},
        {"{}", 100u * 1024 * 1024 + 1, 0, "header"},
        {"{}", 3, 0, "past the end"},
        {"{}    ", 1, 0, "header"},
        {"[]", 0, 0, "header"},
        {"{\"a\":", 0, 0, "JSON"},
        {"{\"a\": 5}", 0, 0, "'a'"},
        {"{\"a\": {\"shape\": [1], \"data_offsets\": [0, 4]}}", 0, 4, "dtype"},
        {"{\"a\": {\"dtype\": 3, \"shape\": [1], \"data_offsets\": [0, 4]}}", 0, 4, "dtype"},
        {"{\"a\": {\"dtype\": \"F32\", \"data_offsets\": [0, 4]}}", 0, 4, "shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [-1], \"data_offsets\": [0, 4]}}", 0, 4, "shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1.5], \"data_offsets\": [0, 4]}}", 0, 4, "shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [\"1\"], \"data_offsets\": [0, 4]}}", 0, 4, "shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1e300], \"data_offsets\": [0, 4]}}", 0, 4, "shape"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1,1,1,1,1], \"data_offsets\": [0, 4]}}", 0, 4, "dims"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1]}}", 0, 4, "data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0]}}", 0, 4, "data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4, 8]}}", 0, 8, "data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 0]}}", 0, 4, "out of file bounds"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 8]}}", 0, 4, "out of file bounds"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, -4]}}", 0, 4, "data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 1e300]}}", 0, 4, "data_offsets"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [2], \"data_offsets\": [0, 4]}}", 0, 8, "needs"},
        {"{\"a\": {\"dtype\": \"F16\", \"shape\": [4294967296, 4294967296], \"data_offsets\": [0, 4]}}", 0, 8, "overflow"},
        {"{\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}, "
         "\"a\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [4, 8]}}", 0, 8, "duplicate"},
        {"{\"__metadata__\": 5}", 0, 0, "__metadata__"},
        {"{\"\": {\"dtype\": \"F32\", \"shape\": [1], \"data_offsets\": [0, 4]}}", 0, 4, "empty"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        err.msg[0] = 0;
        st_set *s = open_st(cases[c].json, cases[c].hlen, cases[c].data, &err);
        CHECK_MSG(s == NULL, "case %zu (%s) opened", c, cases[c].json);
        st_close(s);
        CHECK_MSG(has(&err, cases[c].expect), "case %zu: error \"%s\", expected \"%s\"", c, err.msg,
                  cases[c].expect);
    }
    /* files too short for the length field */
    for (size_t n = 0; n < 8; n++) {
        write_file(tmp_path("short.safetensors"), "\x02\0\0\0\0\0\0\0", n);
        CHECK(st_open_file(tmp_path("short.safetensors"), &err) == NULL);
    }
    /* dtypes wick does not compute with still open, with type -1 and their name */
    st_set *s = open_st("{\"__metadata__\": {\"x\": \"y\"}, "
                        "\"f8\": {\"dtype\": \"F8_E4M3\", \"shape\": [2, 3], \"data_offsets\": [0, 6]}, "
                        "\"b\": {\"dtype\": \"BOOL\", \"shape\": [2], \"data_offsets\": [6, 8]}, "
                        "\"i\": {\"dtype\": \"I32\", \"shape\": [2], \"data_offsets\": [8, 16]}, "
                        "\"e\": {\"dtype\": \"F32\", \"shape\": [0, 3], \"data_offsets\": [16, 16]}, "
                        "\"w\": {\"dtype\": \"WEIRD\", \"shape\": [3], \"data_offsets\": [16, 17]}}",
                        0, 17, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (s) {
        CHECK_INT(st_n_tensors(s), 5);
        const wick_tensor *t = st_find_tensor(s, "f8");
        CHECK(t && t->type == -1 && t->ne[0] == 3 && t->ne[1] == 2 && t->nbytes == 6);
        CHECK_STR(st_dtype_name(s, 0), "F8_E4M3");
        CHECK_STR(st_dtype_name(s, 1), "BOOL");
        t = st_find_tensor(s, "i");
        CHECK(t && t->type == WICK_I32 && t->nbytes == 8);
        t = st_find_tensor(s, "e");
        CHECK(t && t->nbytes == 0 && t->ne[1] == 0);
        CHECK_STR(st_dtype_name(s, 4), "WEIRD");
        st_close(s);
    }
}

/* Every truncation of a small valid file fails (the data section ends at EOF). */
static void test_truncation(void) {
    wick_error err = {0};
    st_writer *w = st_writer_new();
    float a[6] = {1, 2, 3, 4, 5, 6};
    uint16_t b[3] = {1, 2, 3};
    int64_t ne_a[4] = {3, 2, 1, 1}, ne_b[4] = {3, 1, 1, 1};
    CHECK_INT(st_add_tensor(w, "a", WICK_F32, 2, ne_a, a, sizeof a, &err), 0);
    CHECK_INT(st_add_tensor(w, "b", WICK_BF16, 1, ne_b, b, sizeof b, &err), 0);
    const char *path = tmp_path("small.safetensors");
    CHECK_INT(st_write(w, path, &err), 0);
    st_writer_free(w);
    size_t n = 0;
    char *bytes = file_read_all(path, &n, &err);
    CHECK(bytes != NULL);
    if (!bytes) return;
    st_set *s = st_open_file(path, &err);
    CHECK(s != NULL);
    st_close(s);
    int opened = 0, silent = 0;
    for (size_t len = 0; len < n; len++) {
        write_file(tmp_path("t.safetensors"), bytes, len);
        err.msg[0] = 0;
        s = st_open_file(tmp_path("t.safetensors"), &err);
        opened += s != NULL;
        silent += !s && !err.msg[0];
        st_close(s);
    }
    CHECK_INT(opened, 0);
    CHECK_INT(silent, 0);

    /* random byte flips: must never crash; a file that opens is fully readable */
    uint64_t st = 0x12345678abcdefull;
    int opened_ok = 0;
    unsigned acc = 0;
    char *copy = malloc(n);
    for (int it = 0; it < 3000; it++) {
        memcpy(copy, bytes, n);
        int k = 1 + (int)(st % 3);
        for (int j = 0; j < k; j++) {
            st ^= st << 13;
            st ^= st >> 7;
            st ^= st << 17;
            size_t at = (size_t)(st % n);
            copy[at] = (char)(copy[at] ^ (char)(1 + (st >> 32) % 255));
        }
        write_file(tmp_path("f.safetensors"), copy, n);
        err.msg[0] = 0;
        s = st_open_file(tmp_path("f.safetensors"), &err);
        if (s) {
            opened_ok++;
            for (int i = 0; i < st_n_tensors(s); i++) {
                const wick_tensor *t = st_tensor(s, i);
                acc += (unsigned)strlen(t->name) + (unsigned)strlen(st_dtype_name(s, i));
                if (t->nbytes) acc += ((const unsigned char *)t->data)[t->nbytes - 1];
            }
            st_close(s);
        } else {
            silent += !err.msg[0];
        }
    }
    CHECK_INT(silent, 0);
    CHECK(opened_ok > 0);
    (void)acc;
    free(copy);
    free(bytes);
}

/* ---- the real HF export ---- */

static void test_stories(void) {
    const char *path = shared_path("models/stories260K/hf/model.safetensors");
    if (!path) SKIP("stories260K/hf/model.safetensors not found (set WICK_SHARED)");
    wick_error err = {0};
    st_set *s = st_open_file(path, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    if (!s) return;
    const wick_tensor *t = st_find_tensor(s, "model.embed_tokens.weight");
    CHECK(t != NULL);
    if (t) {
        CHECK_INT(t->type, WICK_F32);
        CHECK_INT(t->n_dims, 2);
        CHECK_INT(t->ne[0], 64);
        CHECK_INT(t->ne[1], 512);
        CHECK_INT(t->nbytes, 64 * 512 * 4);
    }
    t = st_find_tensor(s, "model.norm.weight");
    CHECK(t && t->n_dims == 1 && t->ne[0] == 64 && t->ne[1] == 1);
    int n = st_n_tensors(s);
    CHECK(n > 40);
    st_close(s);
    /* the directory form finds the same file */
    const char *dir = shared_path("models/stories260K/hf");
    s = st_open_dir(dir, &err);
    CHECK_MSG(s != NULL, "%s", err.msg);
    CHECK_INT(st_n_tensors(s), n);
    st_close(s);

    /* truncations through the header and a sample of the data all fail */
    size_t len = 0;
    char *bytes = file_read_all(path, &len, &err);
    CHECK(bytes != NULL);
    if (!bytes) return;
    uint64_t hlen;
    memcpy(&hlen, bytes, 8);
    int opened = 0, silent = 0;
    for (size_t l = 0; l < len; l += l < 8 + hlen + 64 ? 1 : 4093) {
        write_file(tmp_path("tr.safetensors"), bytes, l);
        err.msg[0] = 0;
        st_set *x = st_open_file(tmp_path("tr.safetensors"), &err);
        opened += x != NULL;
        silent += !x && !err.msg[0];
        st_close(x);
    }
    CHECK_INT(opened, 0);
    CHECK_INT(silent, 0);
    free(bytes);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/wick-test-st-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_round_trip_single);
    RUN(test_round_trip_sharded);
    RUN(test_bad_index);
    RUN(test_hostile_headers);
    RUN(test_truncation);
    RUN(test_stories);
    rm_tree(tmpdir);
    return check_summary("test_safetensors");
}
