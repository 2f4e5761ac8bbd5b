/* weight_alloc.h — buffers for weight matrices the engine streams in decode
 * (converted or repacked tensors), shared by the loader and the benchmarks
 * that time the kernels on such buffers. */
#ifndef WICK_CORE_WEIGHT_ALLOC_H
#define WICK_CORE_WEIGHT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* `bytes` of memory, 2 MiB-aligned and marked for transparent huge pages
 * when 2 MiB or more (64-byte aligned otherwise), so streaming it walks few
 * TLB entries; NULL on failure. Freed with free(). */
void *weight_alloc(size_t bytes);

/* Many matrices carved from one weight_alloc buffer, back to back, so that
 * the small ones (a Qwen2.5-0.5B layer's attention projections: 70-550
 * KiB each, which alone would sit on 4 KiB pages) share its huge pages:
 * a decode step then meets one TLB entry per 2 MiB, and the hardware
 * prefetchers' streams are not cut at every 4 KiB. Only the pages written
 * count in RSS. The buffer is `base`, freed with free() by its owner. */
typedef struct weight_arena {
    char *base;
    size_t size, used;
} weight_arena;

/* The arena bytes one take of `bytes` uses (64-byte granules). */
size_t weight_arena_bytes(size_t bytes);
/* Reserve `bytes` (the sum of weight_arena_bytes of what will be taken);
 * false on OOM. bytes == 0 reserves nothing (every take then fails). */
bool weight_arena_init(weight_arena *a, size_t bytes);
/* The next `bytes`, 64-byte aligned, or NULL when they do not fit. */
void *weight_arena_take(weight_arena *a, size_t bytes);
/* Whether p lies in the arena's buffer. */
bool weight_arena_holds(const weight_arena *a, const void *p);

#endif
