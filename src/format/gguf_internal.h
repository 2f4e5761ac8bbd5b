/* gguf_internal.h — what the GGUF reader (gguf_read.c) and writer
 * (gguf_write.c) share. Not a public header. */
#ifndef WICK_FORMAT_GGUF_INTERNAL_H
#define WICK_FORMAT_GGUF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Both files read and write the little-endian fields straight from memory. */
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GGUF reader and writer assume a little-endian host"
#endif

#define GGUF_DEFAULT_ALIGNMENT 32u

/* Bytes of one scalar of value type t; 0 for STRING, ARRAY and unknown types. */
size_t gguf_vtype_size(uint32_t t);

#endif
