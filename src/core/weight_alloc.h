/* weight_alloc.h — buffers for weight matrices the engine streams in decode
 * (converted or repacked tensors), shared by the loader and the benchmarks
 * that time the kernels on such buffers. */
#ifndef WICK_CORE_WEIGHT_ALLOC_H
#define WICK_CORE_WEIGHT_ALLOC_H

#include <stddef.h>

/* `bytes` of memory, 2 MiB-aligned and marked for transparent huge pages
 * when 2 MiB or more (64-byte aligned otherwise), so streaming it walks few
 * TLB entries; NULL on failure. Freed with free(). */
void *weight_alloc(size_t bytes);

#endif
