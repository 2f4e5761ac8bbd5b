/* block_disk.c — prefix-cache blocks in files (see block_disk.h).
 *
 * File layout (little-endian):
 *   "WICKKVB1" | identity (2 × u64) | n_layer, n_kv_heads, head_dim, type,
 *   block size (5 × i32) | key (2 × u64) | parent (2 × u64) | has_parent,
 *   n_tok (2 × i32) | token ids (n_tok × i32) | K and V: for each layer, K
 *   then V, for each KV head, n_tok rows of head_dim values in the cache's
 *   type | XXH3-64 of everything before it (u64).
 * Files are written under a temporary name and renamed, so a crash leaves
 * no half-written block under a real name. */
#include "kv/block_disk.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "core/error.h"

#define MAGIC "WICKKVB1"
#define HEADER_BYTES 84

struct block_disk {
    char *dir;
    uint64_t max_bytes, total;
    kv_key identity;
    int32_t layout[5];
    disk_entry *e;
    int n, cap;
    uint64_t stamp;
    _Atomic uint64_t errs[WICK_CACHE_ERR_KINDS]; /* read by other threads (metrics) */
    bool told[WICK_CACHE_ERR_KINDS];             /* the callback has had this kind */
    disk_warn_fn warn_fn;
    void *warn_user;
    char last[256];
};

/* Count a failure of this kind and keep its message; the callback hears of
 * the first one of each kind. */
static void warn(block_disk *d, wick_cache_error kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(block_disk *d, wick_cache_error kind, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->last, sizeof d->last, fmt, ap);
    va_end(ap);
    atomic_fetch_add_explicit(&d->errs[kind], 1, memory_order_relaxed);
    if (!d->told[kind]) {
        d->told[kind] = true;
        if (d->warn_fn) {
            char msg[1024];
            snprintf(msg, sizeof msg, "cache directory %s: %s", d->dir, d->last);
            d->warn_fn(d->warn_user, msg);
        }
    }
}

static size_t run_bytes(const kv_cache *kv, int n_tok) { return (size_t)n_tok * (size_t)kv->head_dim * kv->elem_bytes; }

static uint64_t file_bytes(const kv_cache *kv, int n_tok) {
    return HEADER_BYTES + (uint64_t)n_tok * 4 + (uint64_t)KV_BLOCK_RUNS(kv) * run_bytes(kv, n_tok) + 8;
}

static void key_name(char *out, size_t cap, const char *dir, kv_key k) {
    snprintf(out, cap, "%s/%016llx%016llx.wkv", dir, (unsigned long long)k.hi, (unsigned long long)k.lo);
}

static void header(unsigned char *h, const block_disk *d, kv_key key, kv_key parent, bool has_parent, int n_tok) {
    memcpy(h, MAGIC, 8);
    memcpy(h + 8, &d->identity.lo, 8);
    memcpy(h + 16, &d->identity.hi, 8);
    memcpy(h + 24, d->layout, 20);
    memcpy(h + 44, &key.lo, 8);
    memcpy(h + 52, &key.hi, 8);
    memcpy(h + 60, &parent.lo, 8);
    memcpy(h + 68, &parent.hi, 8);
    int32_t hp = has_parent, nt = n_tok;
    memcpy(h + 76, &hp, 4);
    memcpy(h + 80, &nt, 4);
}

static int add_entry(block_disk *d, const disk_entry *en) {
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 64;
        disk_entry *e = realloc(d->e, (size_t)cap * sizeof *e);
        if (!e) return -1;
        d->e = e;
        d->cap = cap;
    }
    d->e[d->n++] = *en;
    d->total += en->bytes;
    return 0;
}

static void drop_entry(block_disk *d, int i, bool unlink_file) {
    if (unlink_file) {
        char path[4096];
        key_name(path, sizeof path, d->dir, d->e[i].key);
        unlink(path);
    }
    d->total -= d->e[i].bytes;
    d->e[i] = d->e[--d->n];
}

/* Read and check one file's header; 0 and *en, or -1 (not ours or damaged: why in d->last). */
static int read_header(block_disk *d, const kv_cache *kv, const char *path, const char *name, disk_entry *en) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    unsigned char h[HEADER_BYTES];
    int rc = -1;
    struct stat st;
    if (fread(h, 1, sizeof h, f) != sizeof h || memcmp(h, MAGIC, 8) != 0) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: not a wick KV block file; skipped", name);
        goto out;
    }
    kv_key id;
    memcpy(&id.lo, h + 8, 8);
    memcpy(&id.hi, h + 16, 8);
    if (!kv_key_eq(id, d->identity) || memcmp(h + 24, d->layout, 20) != 0) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: made for another model or KV layout; skipped", name);
        goto out;
    }
    memcpy(&en->key.lo, h + 44, 8);
    memcpy(&en->key.hi, h + 52, 8);
    memcpy(&en->parent.lo, h + 60, 8);
    memcpy(&en->parent.hi, h + 68, 8);
    int32_t hp, nt;
    memcpy(&hp, h + 76, 4);
    memcpy(&nt, h + 80, 4);
    char expect[4096];
    key_name(expect, sizeof expect, d->dir, en->key);
    if (nt < 1 || nt > KV_BLOCK_SIZE || (hp != 0 && hp != 1) || strcmp(expect, path) != 0) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: damaged header; skipped", name);
        goto out;
    }
    en->has_parent = hp;
    en->n_tok = nt;
    en->bytes = file_bytes(kv, nt);
    if (fstat(fileno(f), &st) != 0 || (uint64_t)st.st_size != en->bytes) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: truncated or padded (%lld bytes, expected %llu); skipped", name,
             (long long)st.st_size,
             (unsigned long long)en->bytes);
        goto out;
    }
    if (fread(en->tokens, 4, (size_t)nt, f) != (size_t)nt) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: truncated; skipped", name);
        goto out;
    }
    rc = 0;
out:
    fclose(f);
    return rc;
}

block_disk *disk_open(const char *dir, size_t max_bytes, kv_key identity, const kv_cache *kv, disk_warn_fn warn_fn,
                      void *warn_user, wick_error *err) {
    if (!dir || !*dir) {
        wick_fail(err, "empty cache directory name");
        return NULL;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        wick_fail(err, "cannot create the cache directory %s (%s)", dir, strerror(errno));
        return NULL;
    }
    DIR *dh = opendir(dir);
    if (!dh) {
        wick_fail(err, "cannot open the cache directory %s (%s)", dir, strerror(errno));
        return NULL;
    }
    block_disk *d = calloc(1, sizeof *d);
    if (!d || !(d->dir = strdup(dir))) {
        free(d);
        closedir(dh);
        wick_fail(err, "out of memory");
        return NULL;
    }
    d->max_bytes = max_bytes ? max_bytes : (uint64_t)10 << 30;
    d->identity = identity;
    d->warn_fn = warn_fn;
    d->warn_user = warn_user;
    for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++) atomic_init(&d->errs[k], 0);
    const int32_t layout[5] = {kv->n_layer, kv->n_kv_heads, kv->head_dim, kv->type, KV_BLOCK_SIZE};
    memcpy(d->layout, layout, sizeof layout);
    struct dirent *de;
    disk_entry *en = malloc(sizeof *en);
    while (en && (de = readdir(dh))) {
        const size_t len = strlen(de->d_name);
        if (len != 36 || strcmp(de->d_name + 32, ".wkv") != 0) continue; /* not a block file (temporary ones too) */
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        if (read_header(d, kv, path, de->d_name, en) < 0) continue;
        en->stamp = d->stamp++;
        if (add_entry(d, en) < 0) break;
    }
    free(en);
    closedir(dh);
    return d;
}

void disk_close(block_disk *d) {
    if (!d) return;
    free(d->e);
    free(d->dir);
    free(d);
}

int disk_count(const block_disk *d) { return d ? d->n : 0; }
const disk_entry *disk_at(const block_disk *d, int i) { return &d->e[i]; }
uint64_t disk_bytes(const block_disk *d) { return d ? d->total : 0; }

void disk_errors(const block_disk *d, uint64_t counts[WICK_CACHE_ERR_KINDS]) {
    for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++)
        counts[k] = d ? atomic_load_explicit(&d->errs[k], memory_order_relaxed) : 0;
}

int disk_warnings(const block_disk *d) {
    uint64_t c[WICK_CACHE_ERR_KINDS], n = 0;
    disk_errors(d, c);
    for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++) n += c[k];
    return n > INT32_MAX ? INT32_MAX : (int)n;
}

const char *disk_last_warning(const block_disk *d) { return d && disk_warnings(d) ? d->last : ""; }

int disk_find(const block_disk *d, kv_key key) {
    for (int i = 0; d && i < d->n; i++)
        if (kv_key_eq(d->e[i].key, key)) return i;
    return -1;
}

int disk_load(block_disk *d, int i, kv_cache *kv, int32_t b) {
    const disk_entry en = d->e[i];
    char path[4096];
    key_name(path, sizeof path, d->dir, en.key);
    FILE *f = fopen(path, "rb");
    const char *name = strrchr(path, '/') + 1;
    unsigned char h[HEADER_BYTES], want[HEADER_BYTES];
    header(want, d, en.key, en.parent, en.has_parent, en.n_tok);
    int32_t toks[KV_BLOCK_SIZE];
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    bool ok = f && fread(h, 1, sizeof h, f) == sizeof h && memcmp(h, want, sizeof h) == 0 &&
              fread(toks, 4, (size_t)en.n_tok, f) == (size_t)en.n_tok &&
              memcmp(toks, en.tokens, (size_t)en.n_tok * 4) == 0;
    if (ok) {
        XXH3_64bits_update(&st, h, sizeof h);
        XXH3_64bits_update(&st, toks, (size_t)en.n_tok * 4);
        const size_t rb = run_bytes(kv, en.n_tok);
        for (int r = 0; ok && r < KV_BLOCK_RUNS(kv); r++) {
            char *p = kv_block_run(kv, b, r);
            ok = fread(p, 1, rb, f) == rb;
            if (ok) XXH3_64bits_update(&st, p, rb);
        }
        uint64_t sum;
        ok = ok && fread(&sum, 8, 1, f) == 1 && sum == XXH3_64bits_digest(&st);
    }
    if (f) fclose(f);
    if (!ok) {
        if (f)
            warn(d, WICK_CACHE_ERR_CORRUPT, "%s: checksum or contents do not match; the block is computed again", name);
        else
            warn(d, WICK_CACHE_ERR_READ, "%s: gone; the block is computed again", name);
        drop_entry(d, i, true);
        return -1;
    }
    d->e[i].stamp = d->stamp++;
    return 0;
}

int disk_store(block_disk *d, const kv_cache *kv, int32_t b, kv_key key, kv_key parent, bool has_parent,
               const int32_t *tokens, int n_tok) {
    if (disk_find(d, key) >= 0) return 0;
    disk_entry en = {.key = key, .parent = parent, .has_parent = has_parent, .n_tok = n_tok};
    memcpy(en.tokens, tokens, (size_t)n_tok * 4);
    en.bytes = file_bytes(kv, n_tok);
    if (en.bytes > d->max_bytes) return 0;
    while (d->n > 0 && d->total + en.bytes > d->max_bytes) { /* make room: the oldest first */
        int old = 0;
        for (int i = 1; i < d->n; i++)
            if (d->e[i].stamp < d->e[old].stamp) old = i;
        drop_entry(d, old, true);
    }
    char path[4096], tmp[4200];
    key_name(path, sizeof path, d->dir, key);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        warn(d, WICK_CACHE_ERR_WRITE, "cannot create %s (%s); the block is not kept", strrchr(tmp, '/') + 1,
             strerror(errno));
        return -1;
    }
    unsigned char h[HEADER_BYTES];
    header(h, d, key, parent, has_parent, n_tok);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, h, sizeof h);
    XXH3_64bits_update(&st, tokens, (size_t)n_tok * 4);
    bool ok = fwrite(h, 1, sizeof h, f) == sizeof h && fwrite(tokens, 4, (size_t)n_tok, f) == (size_t)n_tok;
    const size_t rb = run_bytes(kv, n_tok);
    for (int r = 0; ok && r < KV_BLOCK_RUNS(kv); r++) {
        const char *p = kv_block_run(kv, b, r);
        ok = fwrite(p, 1, rb, f) == rb;
        XXH3_64bits_update(&st, p, rb);
    }
    uint64_t sum = XXH3_64bits_digest(&st);
    ok = ok && fwrite(&sum, 8, 1, f) == 1;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlink(tmp);
        warn(d, WICK_CACHE_ERR_WRITE, "cannot write %s (%s); the block is not kept", strrchr(path, '/') + 1,
             strerror(e));
        return -1;
    }
    en.stamp = d->stamp++;
    if (add_entry(d, &en) < 0) {
        unlink(path);
        warn(d, WICK_CACHE_ERR_WRITE, "no memory to index %s; the block is not kept", strrchr(path, '/') + 1);
        return -1;
    }
    return 0;
}
