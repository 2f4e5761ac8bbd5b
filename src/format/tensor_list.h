/* tensor_list.h — the tensors a file writer (gguf_writer, st_writer)
 * collects before it writes; see tensor_list.c. */
#ifndef WICK_FORMAT_TENSOR_LIST_H
#define WICK_FORMAT_TENSOR_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/tensor.h"

/* Writes a deferred tensor's nbytes bytes into dst when the file is
 * written; returns -1 with err on failure. */
typedef int (*tlist_fill_fn)(void *ctx, void *dst, size_t nbytes, wick_error *err);

typedef struct tlist_tensor {
    char *name;
    int type, n_dims;
    int64_t ne[WICK_MAX_DIMS];
    void *data; /* NULL for a deferred tensor */
    size_t nbytes;
    tlist_fill_fn fill; /* deferred: produces the bytes at write time */
    void *fill_ctx;
} tlist_tensor;

typedef struct tensor_list {
    tlist_tensor *t;
    size_t n, cap;
} tensor_list;

/* Append a tensor of t's type, n_dims and ne (t's name, data and nbytes are
 * ignored) with copies of name and the nbytes at data (data may be NULL when
 * nbytes is 0). Fails, leaving the list as it was, on a name already in the
 * list or out of memory. */
int tlist_add(tensor_list *l, const tlist_tensor *t, const char *name, const void *data,
              size_t nbytes, wick_error *err);

/* Append a deferred tensor: no bytes now; fill(ctx, ...) produces them when
 * the file is written (so a writer holds one tensor at a time, not all). */
int tlist_add_deferred(tensor_list *l, const tlist_tensor *t, const char *name, size_t nbytes,
                       tlist_fill_fn fill, void *ctx, wick_error *err);

/* The bytes of entry t: its copy, or for a deferred entry a buffer filled
 * now that *tmp points to and the caller frees (NULL with err on failure). */
const void *tlist_data(const tlist_tensor *t, void **tmp, wick_error *err);

/* Free every entry's copies and the array; the list is empty afterwards. */
void tlist_free(tensor_list *l);

#endif
