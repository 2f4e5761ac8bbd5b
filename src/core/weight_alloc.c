/* weight_alloc.c — owns the allocation of weight buffers and arenas (weight_alloc.h). */
#include "core/weight_alloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

void *weight_alloc(size_t bytes) {
    const size_t huge = (size_t)2 << 20;
    /* C11: the size is a multiple of the alignment (ASan checks it); only the
     * whole huge pages of what is used are marked, so the rounding's tail is
     * never touched (no RSS) */
    const size_t align = bytes >= huge ? huge : 64;
    void *p = aligned_alloc(align, (bytes + align - 1) & ~(align - 1));
    if (p && align == huge) madvise(p, bytes & ~(huge - 1), MADV_HUGEPAGE);
    return p;
}

size_t weight_arena_bytes(size_t bytes) { return (bytes + 63) & ~(size_t)63; }

bool weight_arena_init(weight_arena *a, size_t bytes) {
    *a = (weight_arena){0};
    if (bytes == 0) return true;
    if (!(a->base = weight_alloc(bytes))) return false;
    a->size = bytes;
    return true;
}

void *weight_arena_take(weight_arena *a, size_t bytes) {
    const size_t n = weight_arena_bytes(bytes);
    if (!a->base || n > a->size - a->used) return NULL;
    void *p = a->base + a->used;
    a->used += n;
    return p;
}

bool weight_arena_holds(const weight_arena *a, const void *p) {
    const uintptr_t b = (uintptr_t)a->base, q = (uintptr_t)p;
    return a->base && q >= b && q < b + a->size;
}
