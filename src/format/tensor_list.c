/* tensor_list.c — owns the tensor list the GGUF and safetensors writers
 * share: each entry's name and data are the list's own copies (the caller's
 * buffers may go away once tlist_add returns), entries keep the order they
 * were added in, and no two have the same name. A deferred entry holds no
 * bytes, only the callback that produces them when the file is written. The
 * array grows by doubling from 16. Validating a tensor's type and shape against a format is left to
 * the writer, which calls tlist_add only once the tensor is valid. */
#include "format/tensor_list.h"

#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

static int make_room(tensor_list *l, const char *name, wick_error *err) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->t[i].name, name) == 0)
            return wick_fail(err, "duplicate tensor name '%s'", name);
    if (!GROW_ARRAY(l->t, l->n + 1, &l->cap))
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory adding tensor '%s'", name);
    return 0;
}

int tlist_add_deferred(tensor_list *l, const tlist_tensor *t, const char *name, size_t nbytes,
                       tlist_fill_fn fill, void *ctx, wick_error *err) {
    if (make_room(l, name, err) < 0) return -1;
    tlist_tensor e = *t;
    e.name = strdup(name);
    if (!e.name) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory adding tensor '%s'", name);
    e.data = NULL;
    e.nbytes = nbytes;
    e.fill = fill;
    e.fill_ctx = ctx;
    l->t[l->n++] = e;
    return 0;
}

const void *tlist_data(const tlist_tensor *t, void **tmp, wick_error *err) {
    *tmp = NULL;
    if (!t->fill) return t->data;
    void *buf = malloc(t->nbytes ? t->nbytes : 1);
    if (!buf) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory writing tensor '%s' (%zu MiB)", t->name, t->nbytes >> 20);
        return NULL;
    }
    if (t->fill(t->fill_ctx, buf, t->nbytes, err) < 0) {
        free(buf);
        return NULL;
    }
    *tmp = buf;
    return buf;
}

int tlist_add(tensor_list *l, const tlist_tensor *t, const char *name, const void *data,
              size_t nbytes, wick_error *err) {
    if (make_room(l, name, err) < 0) return -1;
    tlist_tensor e = *t;
    e.fill = NULL;
    e.fill_ctx = NULL;
    e.name = strdup(name);
    e.data = malloc(nbytes ? nbytes : 1);
    if (!e.name || !e.data) {
        free(e.name);
        free(e.data);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory adding tensor '%s'", name);
    }
    if (nbytes) memcpy(e.data, data, nbytes);
    e.nbytes = nbytes;
    l->t[l->n++] = e;
    return 0;
}

void tlist_free(tensor_list *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->t[i].name);
        free(l->t[i].data);
    }
    free(l->t);
    l->t = NULL;
    l->n = l->cap = 0;
}
