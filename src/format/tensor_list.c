/* tensor_list.c — owns the tensor list the GGUF and safetensors writers
 * share: each entry's name and data are the list's own copies (the caller's
 * buffers may go away once tlist_add returns), entries keep the order they
 * were added in, and no two have the same name. The array grows by doubling
 * from 16. Validating a tensor's type and shape against a format is left to
 * the writer, which calls tlist_add only once the tensor is valid. */
#include "format/tensor_list.h"

#include <stdlib.h>
#include <string.h>

int tlist_add(tensor_list *l, const tlist_tensor *t, const char *name, const void *data,
              size_t nbytes, wick_error *err) {
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->t[i].name, name) == 0)
            return wick_fail(err, "duplicate tensor name '%s'", name);
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        tlist_tensor *nt = realloc(l->t, cap * sizeof *nt);
        if (!nt) return wick_fail(err, "out of memory adding tensor '%s'", name);
        l->t = nt;
        l->cap = cap;
    }
    tlist_tensor e = *t;
    e.name = strdup(name);
    e.data = malloc(nbytes ? nbytes : 1);
    if (!e.name || !e.data) {
        free(e.name);
        free(e.data);
        return wick_fail(err, "out of memory adding tensor '%s'", name);
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
