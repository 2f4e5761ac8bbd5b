/* fileio.h — whole-file reads and read-only memory maps. */
#ifndef WICK_CORE_FILEIO_H
#define WICK_CORE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>

#include "wick.h"

/* Read a whole file into a NUL-terminated malloc'd buffer. *len (if non-NULL)
 * gets the size without the terminator. NULL + err on failure. */
char *file_read_all(const char *path, size_t *len, wick_error *err);

/* A read-only memory map of a whole file. */
typedef struct file_map {
    const unsigned char *data;
    size_t size;
} file_map;

int file_map_open(file_map *m, const char *path, wick_error *err);
void file_map_close(file_map *m);

bool file_exists(const char *path);
bool dir_exists(const char *path);

/* Join dir and name with '/' into out (cap bytes). Returns -1 if too long. */
int path_join(char *out, size_t cap, const char *dir, const char *name);

#endif
