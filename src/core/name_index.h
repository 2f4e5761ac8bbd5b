/* name_index.h — a sorted index from names to positions, for tensor lookup in
 * GGUF and safetensors files. Built once by sorting (O(n log n) worst case, so
 * hostile names cannot slow it down the way colliding hash keys could);
 * lookups are binary searches. */
#ifndef WICK_CORE_NAME_INDEX_H
#define WICK_CORE_NAME_INDEX_H

typedef struct name_ref {
    const char *name;
    int idx;
} name_ref;

typedef struct name_index {
    name_ref *refs;
    int n;
} name_index;

/* Sort names[0..n) (the strings must outlive the index). Returns -1 on out
 * of memory; *first and *second get the positions of two equal names
 * (first < second), or -1 if all are unique. */
int index_build(name_index *ix, char *const *names, int n, int *first, int *second);
/* Position of name, or -1. */
int index_find(const name_index *ix, const char *name);

#endif
