/* safetensors.h — Hugging Face safetensors files: memory-mapped reading of a
 * single file or a sharded set (model.safetensors.index.json), and writing.
 *
 * Reader invariants (checked at open): the 8-byte header length and the JSON
 * header lie inside the file; every tensor's data_offsets lie inside the data
 * section and match dtype × shape; names are unique across shards.
 * Shapes are reported in GGML order (ne[0] innermost = the last safetensors
 * dim). dtypes F32/F16/BF16 map to WICK_F32/F16/BF16; I8/I16/I32/I64/F64 map
 * to the matching wick ids; anything else (e.g. F8_E4M3, BOOL, U8) gets
 * type = -1 and `st_dtype_name` keeps the original string so the model
 * loader can name it in an error. */
#ifndef WICK_FORMAT_SAFETENSORS_H
#define WICK_FORMAT_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"
#include "wick.h"

typedef struct st_set st_set;

/* Open one .safetensors file. */
st_set *st_open_file(const char *path, wick_error *err);
/* Open a model directory: model.safetensors.index.json (all shards it names)
 * if present, else model.safetensors, else the only *.safetensors file. */
st_set *st_open_dir(const char *dir, wick_error *err);
void st_close(st_set *s);

int st_n_tensors(const st_set *s);
const wick_tensor *st_tensor(const st_set *s, int i);
const wick_tensor *st_find_tensor(const st_set *s, const char *name);
/* The index i of a tensor st_tensor / st_find_tensor returned (st_tensor(s, i) == t); -1 if not one of s's. */
int st_tensor_index(const st_set *s, const wick_tensor *t);
/* The dtype string from the header for tensor i ("BF16", "F8_E4M3", ...). */
const char *st_dtype_name(const st_set *s, int i);

/* ---- writer ---- */
typedef struct st_writer st_writer;

st_writer *st_writer_new(void);
void st_writer_free(st_writer *w);
/* type must be F32, F16 or BF16; ne[0] innermost. data is copied. */
int st_add_tensor(st_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                  const void *data, size_t nbytes, wick_error *err);
/* The same with the bytes produced by fill(ctx, dst, nbytes, err) when the
 * file is written (one tensor in memory at a time; ctx must live until then). */
int st_add_tensor_deferred(st_writer *w, const char *name, int type, int n_dims, const int64_t *ne,
                           size_t nbytes, int (*fill)(void *ctx, void *dst, size_t nbytes, wick_error *err),
                           void *ctx, wick_error *err);
/* Write one file with __metadata__ {"format":"pt"}. */
int st_write(st_writer *w, const char *path, wick_error *err);
/* Write shards of at most max_shard_bytes each plus model.safetensors.index.json
 * into dir (file names model-0000i-of-0000n.safetensors). */
int st_write_sharded(st_writer *w, const char *dir, size_t max_shard_bytes, wick_error *err);

#endif
