/* block_disk.c — cached KV blocks in files (see block_disk.h).
 *
 * File layout (little-endian):
 *   "WICKKVB1" | identity (2 × u64) | n_layer, n_kv_heads, head_dim, type,
 *   block size (5 × i32) | key (2 × u64) | parent (2 × u64) | has_parent,
 *   n_tok (2 × i32) | token ids (n_tok × i32) | K and V: for each layer, K
 *   then V, for each KV head, n_tok rows of head_dim values in the cache's
 *   type | XXH3-64 of everything before it (u64).
 *
 * Files are reached through the folder's descriptor (the *at calls), so the
 * folder checked at open is the one used afterwards. Only a regular file is
 * opened, without following links and without blocking (a FIFO swapped in
 * would block a plain open forever), and used only if, once open, it is
 * still a regular file owned by the effective user and not writable by group
 * or others. A block is written to a temporary file created for it alone
 * (mode 0600), synced, renamed to its name, and the folder synced. */
#include "kv/block_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#include "core/buf.h"
#include "core/error.h"

#define MAGIC "WICKKVB1"
#define HEADER_BYTES 84
#define NAME_CAP 48 /* "<32 hex>.wkv.tmp" */

struct block_disk {
    char *dir;
    int dfd; /* the folder, open */
    uint64_t max_bytes, total;
    kv_key identity;
    int32_t layout[5];
    disk_entry *e;
    int n;
    size_t cap;
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

static size_t run_bytes(const block_pool *pool, int n_tok) { return (size_t)n_tok * (size_t)pool->head_dim * pool->elem_bytes; }

static uint64_t file_bytes(const block_pool *pool, int n_tok) {
    return HEADER_BYTES + (uint64_t)n_tok * 4 + (uint64_t)BPOOL_RUNS(pool) * run_bytes(pool, n_tok) + 8;
}

/* The file name of key (with tmp: of its temporary file while it is written). */
static void key_name(char out[NAME_CAP], kv_key k, bool tmp) {
    snprintf(out, NAME_CAP, "%016llx%016llx.wkv%s", (unsigned long long)k.hi, (unsigned long long)k.lo,
             tmp ? ".tmp" : "");
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

/* Parse a header into en (key, parent, has_parent, n_tok); NULL, or what is wrong with it. */
static const char *parse_header(const block_disk *d, const unsigned char *h, disk_entry *en) {
    if (memcmp(h, MAGIC, 8) != 0) return "not a wick KV block file";
    kv_key id;
    memcpy(&id.lo, h + 8, 8);
    memcpy(&id.hi, h + 16, 8);
    if (!kv_key_eq(id, d->identity) || memcmp(h + 24, d->layout, 20) != 0) return "made for another model or KV layout";
    memcpy(&en->key.lo, h + 44, 8);
    memcpy(&en->key.hi, h + 52, 8);
    memcpy(&en->parent.lo, h + 60, 8);
    memcpy(&en->parent.hi, h + 68, 8);
    int32_t hp, nt;
    memcpy(&hp, h + 76, 4);
    memcpy(&nt, h + 80, 4);
    if (nt < 1 || nt > KV_BLOCK_SIZE || (hp != 0 && hp != 1)) return "damaged header";
    en->has_parent = hp;
    en->n_tok = nt;
    return NULL;
}

/* Read n bytes (fewer only at the end of the file or on an error). */
static size_t read_full(int fd, void *p, size_t n) {
    size_t got = 0;
    while (got < n) {
        const ssize_t r = read(fd, (char *)p + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}

/* Write n bytes; false with errno on an error. */
static bool write_full(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n > 0) {
        const ssize_t r = write(fd, c, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            if (r == 0) errno = EIO;
            return false;
        }
        c += r;
        n -= (size_t)r;
    }
    return true;
}

/* Why a file of the folder may not be used (NULL: it may). */
static const char *not_ours(const struct stat *st) {
    if (!S_ISREG(st->st_mode)) {
        if (S_ISDIR(st->st_mode)) return "a directory, not a regular file";
        if (S_ISLNK(st->st_mode)) return "a symbolic link, not a regular file";
        if (S_ISFIFO(st->st_mode)) return "a FIFO, not a regular file";
        if (S_ISSOCK(st->st_mode)) return "a socket, not a regular file";
        return "a device, not a regular file";
    }
    if (st->st_uid != geteuid()) return "owned by another user";
    if (st->st_mode & (S_IWGRP | S_IWOTH)) return "writable by its group or others";
    return NULL;
}

/* Open name in the folder for reading if it is a regular file of ours: its
 * descriptor and *st, or -1 and *why. Checked before opening (nothing but a
 * regular file is ever opened) and again on the open file (it may have been
 * replaced in between). */
static int open_block(const block_disk *d, const char *name, struct stat *st, const char **why) {
    struct stat pre;
    if (fstatat(d->dfd, name, &pre, AT_SYMLINK_NOFOLLOW) != 0) {
        *why = errno == ENOENT ? "gone" : "cannot be examined";
        return -1;
    }
    if ((*why = not_ours(&pre))) return -1;
    const int fd = openat(d->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        *why = errno == ENOENT ? "gone" : "cannot be opened";
        return -1;
    }
    if (fstat(fd, st) != 0) *why = "cannot be examined";
    else if (!(*why = not_ours(st)) && (st->st_ino != pre.st_ino || st->st_dev != pre.st_dev))
        *why = "replaced while being opened";
    if (*why) {
        close(fd);
        return -1;
    }
    return fd;
}

static int add_entry(block_disk *d, const disk_entry *en) {
    if (d->n == INT_MAX || !GROW_ARRAY(d->e, (size_t)d->n + 1, &d->cap)) return -1;
    d->e[d->n++] = *en;
    d->total += en->bytes;
    return 0;
}

/* Drop entry i (the last one takes its place), deleting its file if asked. */
static void drop_entry(block_disk *d, int i, bool unlink_file) {
    if (unlink_file) {
        char name[NAME_CAP];
        key_name(name, d->e[i].key, false);
        unlinkat(d->dfd, name, 0);
    }
    d->total -= d->e[i].bytes;
    d->e[i] = d->e[--d->n];
}

static void drop_oldest(block_disk *d) {
    int old = 0;
    for (int i = 1; i < d->n; i++)
        if (d->e[i].stamp < d->e[old].stamp) old = i;
    drop_entry(d, old, true);
}

/* Read and check one file's header and token ids: 0 and *en (stamp: its
 * modification time), or -1 (counted as skipped). */
static int read_header(block_disk *d, const block_pool *pool, const char *name, disk_entry *en) {
    struct stat st;
    const char *why = NULL;
    const int fd = open_block(d, name, &st, &why);
    if (fd < 0) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: %s; skipped", name, why);
        return -1;
    }
    unsigned char h[HEADER_BYTES];
    char expect[NAME_CAP];
    if (read_full(fd, h, sizeof h) != sizeof h) why = "not a wick KV block file";
    else why = parse_header(d, h, en);
    if (!why) {
        key_name(expect, en->key, false);
        en->bytes = file_bytes(pool, en->n_tok);
        if (strcmp(expect, name) != 0) why = "damaged header (its key is not its name's)";
        else if ((uint64_t)st.st_size != en->bytes) why = "truncated or padded";
        else if (read_full(fd, en->tokens, (size_t)en->n_tok * 4) != (size_t)en->n_tok * 4) why = "truncated";
        else if (!kv_key_eq(block_key(en->parent, en->tokens, en->n_tok), en->key))
            why = "damaged header (its key is not that of its parent and token ids)";
    }
    close(fd);
    if (why) {
        warn(d, WICK_CACHE_ERR_SKIPPED, "%s: %s; skipped", name, why);
        return -1;
    }
    en->stamp = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
    return 0;
}

static int by_stamp(const void *a, const void *b) {
    const uint64_t x = ((const disk_entry *)a)->stamp, y = ((const disk_entry *)b)->stamp;
    return (x > y) - (x < y);
}

/* Index the folder: block files of this model and layout, oldest first by
 * modification time, the oldest deleted while they exceed the budget;
 * temporary files (`*.tmp`: the folder is the cache's own) that a crash left
 * are deleted. */
static int scan(block_disk *d, const block_pool *pool, wick_error *err) {
    const int fd = fcntl(d->dfd, F_DUPFD_CLOEXEC, 0);
    DIR *dh = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dh) {
        if (fd >= 0) close(fd);
        return wick_fail_code(err, WICK_E_IO, "cannot list the cache directory %s (%s)", d->dir, strerror(errno));
    }
    disk_entry *en = malloc(sizeof *en);
    struct dirent *de;
    while (en && (de = readdir(dh))) {
        const char *name = de->d_name;
        const size_t len = strlen(name);
        if (len > 4 && strcmp(name + len - 4, ".tmp") == 0) { /* a write a crash cut short */
            if (unlinkat(d->dfd, name, 0) != 0 && errno != ENOENT)
                warn(d, WICK_CACHE_ERR_SKIPPED, "%s: a leftover temporary file that cannot be deleted (%s)", name,
                     strerror(errno));
            continue;
        }
        if (len != 36 || strcmp(name + 32, ".wkv") != 0) continue; /* not a block file */
        if (read_header(d, pool, name, en) < 0) continue;
        if (add_entry(d, en) < 0) break;
    }
    free(en);
    closedir(dh);
    if (d->n > 1) qsort(d->e, (size_t)d->n, sizeof *d->e, by_stamp);
    for (int i = 0; i < d->n; i++) d->e[i].stamp = (uint64_t)i;
    d->stamp = (uint64_t)d->n;
    while (d->n > 0 && d->total > d->max_bytes) drop_oldest(d);
    return 0;
}

block_disk *disk_open(const char *dir, size_t max_bytes, kv_key identity, const block_pool *pool, disk_warn_fn warn_fn,
                      void *warn_user, wick_error *err) {
    if (!dir || !*dir) {
        wick_fail(err, "empty cache directory name");
        return NULL;
    }
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        wick_fail_code(err, WICK_E_IO, "cannot create the cache directory %s (%s)", dir, strerror(errno));
        return NULL;
    }
    const int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        wick_fail_code(err, WICK_E_IO, "cannot open the cache directory %s (%s)", dir, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(dfd, &st) != 0) {
        wick_fail_code(err, WICK_E_IO, "cannot examine the cache directory %s (%s)", dir, strerror(errno));
        close(dfd);
        return NULL;
    }
    if (st.st_uid != geteuid()) {
        wick_fail_code(err, WICK_E_IO,
                       "the cache directory %s belongs to another user (uid %u, not %u): it holds prompts, use one of yours",
                       dir, (unsigned)st.st_uid, (unsigned)geteuid());
        close(dfd);
        return NULL;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        wick_fail_code(err, WICK_E_IO,
                       "the cache directory %s is writable by its group or others (mode %04o): make it private (chmod 700)",
                       dir, (unsigned)(st.st_mode & 07777));
        close(dfd);
        return NULL;
    }
    block_disk *d = calloc(1, sizeof *d);
    if (!d || !(d->dir = strdup(dir))) {
        free(d);
        close(dfd);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    d->dfd = dfd;
    d->max_bytes = max_bytes ? max_bytes : (uint64_t)10 << 30;
    d->identity = identity;
    d->warn_fn = warn_fn;
    d->warn_user = warn_user;
    for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++) atomic_init(&d->errs[k], 0);
    const int32_t layout[5] = {pool->n_layer, pool->n_kv_heads, pool->head_dim, pool->type, KV_BLOCK_SIZE};
    memcpy(d->layout, layout, sizeof layout);
    if (scan(d, pool, err) < 0) {
        disk_close(d);
        return NULL;
    }
    return d;
}

void disk_close(block_disk *d) {
    if (!d) return;
    close(d->dfd);
    free(d->e);
    free(d->dir);
    free(d);
}

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

void disk_touch(block_disk *d, kv_key key) {
    const int i = disk_find(d, key);
    if (i >= 0) d->e[i].stamp = d->stamp++;
}

/* Read and check the open file of key into block b and *out; NULL, or what
 * is wrong with it and its kind. */
static const char *read_block(block_disk *d, int fd, const struct stat *st, kv_key key, block_pool *pool, int32_t b,
                              disk_entry *out, wick_cache_error *kind) {
    unsigned char h[HEADER_BYTES];
    *kind = WICK_CACHE_ERR_READ;
    if (read_full(fd, h, sizeof h) != sizeof h) return "short";
    *kind = WICK_CACHE_ERR_CORRUPT;
    const char *bad = parse_header(d, h, out);
    if (bad) return bad;
    if (!kv_key_eq(out->key, key)) return "it holds another block (its stored key is not its name's)";
    const int nt = out->n_tok;
    out->bytes = file_bytes(pool, nt);
    if ((uint64_t)st->st_size > out->bytes) return "longer than its header says";
    *kind = WICK_CACHE_ERR_READ;
    if ((uint64_t)st->st_size < out->bytes || read_full(fd, out->tokens, (size_t)nt * 4) != (size_t)nt * 4)
        return "short";
    *kind = WICK_CACHE_ERR_CORRUPT;
    if (!kv_key_eq(block_key(out->parent, out->tokens, nt), key))
        return "its parent and token ids are not those its key names";
    XXH3_state_t xs;
    XXH3_64bits_reset(&xs);
    XXH3_64bits_update(&xs, h, sizeof h);
    XXH3_64bits_update(&xs, out->tokens, (size_t)nt * 4);
    const size_t rb = run_bytes(pool, nt);
    for (int r = 0; r < BPOOL_RUNS(pool); r++) {
        char *p = bpool_run(pool, b, r);
        if (read_full(fd, p, rb) != rb) {
            *kind = WICK_CACHE_ERR_READ;
            return "short";
        }
        XXH3_64bits_update(&xs, p, rb);
    }
    uint64_t sum;
    if (read_full(fd, &sum, 8) != 8) {
        *kind = WICK_CACHE_ERR_READ;
        return "short";
    }
    if (sum != XXH3_64bits_digest(&xs)) return "checksum mismatch";
    return NULL;
}

int disk_load(block_disk *d, kv_key key, block_pool *pool, int32_t b, disk_entry *out) {
    const int i = disk_find(d, key);
    if (i < 0) return -1;
    char name[NAME_CAP];
    key_name(name, key, false);
    struct stat st;
    const char *why = NULL;
    wick_cache_error kind = WICK_CACHE_ERR_READ;
    const int fd = open_block(d, name, &st, &why);
    const bool opened = fd >= 0;
    if (opened) {
        why = read_block(d, fd, &st, key, pool, b, out, &kind);
        close(fd);
    }
    if (why) {
        warn(d, kind, "%s: %s; the block is computed again", name, why);
        drop_entry(d, i, opened); /* a file that is not ours is left alone */
        return -1;
    }
    d->e[i].stamp = d->stamp++;
    return 0;
}

void disk_reject(block_disk *d, kv_key key, const char *why) {
    char name[NAME_CAP];
    key_name(name, key, false);
    warn(d, WICK_CACHE_ERR_CORRUPT, "%s: %s; the block is computed again", name, why);
    const int i = disk_find(d, key);
    if (i >= 0) drop_entry(d, i, true);
}

void disk_forget(block_disk *d, kv_key key) {
    const int i = disk_find(d, key);
    if (i >= 0) drop_entry(d, i, true);
}

int disk_store(block_disk *d, const block_pool *pool, int32_t b, kv_key key, kv_key parent, bool has_parent,
               const int32_t *tokens, int n_tok) {
    if (disk_find(d, key) >= 0) return 0;
    disk_entry en = {.key = key, .parent = parent, .has_parent = has_parent, .n_tok = n_tok};
    memcpy(en.tokens, tokens, (size_t)n_tok * 4);
    en.bytes = file_bytes(pool, n_tok);
    if (en.bytes > d->max_bytes) return 0;
    /* The file counts from the moment it is written: make room first, the oldest first. */
    while (d->n > 0 && d->total + en.bytes > d->max_bytes) drop_oldest(d);
    char name[NAME_CAP], tmp[NAME_CAP];
    key_name(name, key, false);
    key_name(tmp, key, true);
    const int flags = O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC;
    int fd = openat(d->dfd, tmp, flags, 0600);
    if (fd < 0 && errno == EEXIST && unlinkat(d->dfd, tmp, 0) == 0) fd = openat(d->dfd, tmp, flags, 0600);
    if (fd < 0) {
        warn(d, WICK_CACHE_ERR_WRITE, "cannot create %s (%s); the block is not kept", tmp, strerror(errno));
        return -1;
    }
    unsigned char h[HEADER_BYTES];
    header(h, d, key, parent, has_parent, n_tok);
    XXH3_state_t xs;
    XXH3_64bits_reset(&xs);
    XXH3_64bits_update(&xs, h, sizeof h);
    XXH3_64bits_update(&xs, tokens, (size_t)n_tok * 4);
    bool ok = write_full(fd, h, sizeof h) && write_full(fd, tokens, (size_t)n_tok * 4);
    const size_t rb = run_bytes(pool, n_tok);
    for (int r = 0; ok && r < BPOOL_RUNS(pool); r++) {
        const char *p = bpool_run(pool, b, r);
        ok = write_full(fd, p, rb);
        XXH3_64bits_update(&xs, p, rb);
    }
    const uint64_t sum = XXH3_64bits_digest(&xs);
    ok = ok && write_full(fd, &sum, 8) && fsync(fd) == 0;
    int e = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (ok && renameat(d->dfd, tmp, d->dfd, name) != 0) {
        ok = false;
        e = errno;
    }
    if (!ok) {
        unlinkat(d->dfd, tmp, 0);
        warn(d, WICK_CACHE_ERR_WRITE, "cannot write %s (%s); the block is not kept", name, strerror(e));
        return -1;
    }
    /* The rename lasts once the folder is synced (some file systems cannot: EINVAL). */
    if (fsync(d->dfd) != 0 && errno != EINVAL) {
        e = errno;
        unlinkat(d->dfd, name, 0);
        warn(d, WICK_CACHE_ERR_WRITE, "cannot sync the folder after writing %s (%s); the block is not kept", name,
             strerror(e));
        return -1;
    }
    en.stamp = d->stamp++;
    if (add_entry(d, &en) < 0) {
        unlinkat(d->dfd, name, 0);
        warn(d, WICK_CACHE_ERR_WRITE, "no memory to index %s; the block is not kept", name);
        return -1;
    }
    return 0;
}

/* ---- the tier below the pool's cache ---- */

void disk_evicted(void *user, const block_pool *pool, int32_t b) {
    block_disk *d = user;
    const block_meta *m = bpool_meta(pool, b);
    if (m->cached) disk_store(d, pool, b, m->key, m->parent, m->has_parent, bpool_tokens(pool, b), m->n_tok);
}

void disk_store_all(block_disk *d, const block_pool *pool) {
    for (int32_t b = 0; b < pool->n_blocks; b++) disk_evicted(d, pool, b);
}

/* Taking a block may evict one, and writing that one out (disk_evicted) may
 * delete the oldest files to make room and reorder the entries: nothing here
 * holds an entry across it. The entry is made the most recent first, so that
 * it is not the one deleted, and looked up by key afterwards; what enters the
 * cache (parent, token ids) is what the file holds, checked against key. */
int32_t disk_read_back(block_disk *d, block_pool *pool, kv_key key, kv_key parent, bool has_parent, bool silent) {
    if (disk_find(d, key) < 0) return -1;
    disk_touch(d, key);
    const int32_t b = bpool_take(pool);
    if (b < 0) return -1;
    disk_entry en;
    if (disk_load(d, key, pool, b, &en) < 0) {
        bpool_give_back(pool, b);
        return -1;
    }
    if (en.has_parent != has_parent || !kv_key_eq(en.parent, parent)) {
        disk_reject(d, key, "its parent is not the one its chain names");
        bpool_give_back(pool, b);
        return -1;
    }
    bpool_cache(pool, b, key, en.parent, en.has_parent, en.tokens, en.n_tok, silent);
    return b;
}

int disk_best_child(const block_disk *d, const block_pool *pool, kv_key parent, bool has_parent, const int32_t *want,
                    int n_want, int min_n, kv_key *out) {
    int best = min_n;
    for (int i = 0; d && i < d->n; i++) {
        const disk_entry *en = &d->e[i];
        if (!kv_key_eq(en->parent, parent) || en->has_parent != has_parent || bpool_find(pool, en->key) >= 0) continue;
        const int n = block_lcp(en->tokens, en->n_tok, want, n_want);
        if (n > best) {
            *out = en->key;
            best = n;
        }
    }
    return best;
}
