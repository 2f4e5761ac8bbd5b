/* fileio.c — whole-file reads and read-only memory maps (see fileio.h). */
#include "core/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/error.h"

char *file_read_all(const char *path, size_t *len, wick_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        wick_fail_code(err, WICK_E_IO, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    wbuf b = {0};
    for (;;) {
        /* room for as much again as is read so far (64 KiB at first): the buffer doubles */
        if (!wbuf_reserve(&b, b.len ? b.len : (size_t)1 << 16)) {
            wbuf_free(&b);
            fclose(f);
            wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory reading %s", path);
            return NULL;
        }
        size_t room = b.cap - 1 - b.len, got = fread(b.data + b.len, 1, room, f);
        b.len += got;
        if (got < room) break;
    }
    if (ferror(f)) {
        wbuf_free(&b);
        fclose(f);
        wick_fail_code(err, WICK_E_IO, "read error on %s", path);
        return NULL;
    }
    fclose(f);
    return wbuf_take(&b, len); /* NUL-terminated; not NULL, as the memory is there */
}

int file_map_open(file_map *m, const char *path, wick_error *err) {
    m->data = NULL;
    m->size = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return wick_fail_code(err, WICK_E_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return wick_fail_code(err, WICK_E_IO, "cannot stat %s: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return wick_fail_code(err, WICK_E_IO, "%s is not a regular file", path);
    }
    if (st.st_size == 0) {
        close(fd);
        return wick_fail_code(err, WICK_E_FORMAT, "%s is empty", path);
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return wick_fail_code(err, WICK_E_IO, "cannot map %s: %s", path, strerror(errno));
    m->data = p;
    m->size = (size_t)st.st_size;
    return 0;
}

void file_map_close(file_map *m) {
    if (m->data) munmap((void *)m->data, m->size);
    m->data = NULL;
    m->size = 0;
}

bool file_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool dir_exists(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int path_join(char *out, size_t cap, const char *dir, const char *name) {
    int n = snprintf(out, cap, "%s/%s", dir, name);
    return (n < 0 || (size_t)n >= cap) ? -1 : 0;
}
