/* name_index.c — sorted name → position index (see name_index.h). */
#include "core/name_index.h"

#include <stdlib.h>
#include <string.h>

static int cmp_ref(const void *a, const void *b) {
    const name_ref *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

int index_build(name_index *ix, char *const *names, int n, int *first, int *second) {
    *first = *second = -1;
    ix->refs = malloc((size_t)(n ? n : 1) * sizeof *ix->refs);
    if (!ix->refs) return -1;
    ix->n = n;
    for (int i = 0; i < n; i++) ix->refs[i] = (name_ref){names[i], i};
    qsort(ix->refs, (size_t)n, sizeof *ix->refs, cmp_ref);
    for (int i = 1; i < n; i++)
        if (strcmp(ix->refs[i - 1].name, ix->refs[i].name) == 0) {
            *first = ix->refs[i - 1].idx;
            *second = ix->refs[i].idx;
            break;
        }
    return 0;
}

int index_find(const name_index *ix, const char *name) {
    if (!ix->refs || !name) return -1;
    int lo = 0, hi = ix->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(ix->refs[mid].name, name);
        if (c == 0) return ix->refs[mid].idx;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}
