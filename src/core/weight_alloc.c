/* weight_alloc.c — owns the allocation of weight buffers (weight_alloc.h). */
#include "core/weight_alloc.h"

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
