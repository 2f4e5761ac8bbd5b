/* model_source.c — owns reading a model as the tensors and keys of a GGUF
 * file (see model_source.h): a GGUF file as it is, the dispatch to an HF
 * directory (hf_source.c), and the rows of any source tensor as f32. */
#include "tools/model_source.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "kernels/convert.h"

/* ---- GGUF ---- */

/* An integer hyperparameter "<arch>.<suffix>"; a per-layer array gives its first
 * element. 0 when absent or of another type. */
static int gguf_arch_int(const gguf_file *f, const char *arch, const char *suffix) {
    char key[160];
    snprintf(key, sizeof key, "%s.%s", arch, suffix);
    const gguf_value *v = gguf_get(f, key);
    if (!v) return 0;
    wick_error e;
    int64_t x = 0;
    if (v->type == GGUF_ARRAY) {
        if (v->arr.n == 0 || !v->arr.data) return 0;
        x = gguf_arr_int(v, 0);
    } else if (gguf_get_int(f, key, &x, &e) != 1) {
        return 0;
    }
    return x > 0 && x < (1 << 30) ? (int)x : 0;
}

static int open_gguf(model_source *s, const char *path, wick_error *err) {
    s->gguf = gguf_open(path, err);
    if (!s->gguf) return -1;
    char *arch = NULL;
    const int found = gguf_get_string(s->gguf, "general.architecture", &arch, err);
    if (found < 0) return -1;
    if (found == 0) return wick_fail(err, "missing GGUF key general.architecture (%s)", path);
    snprintf(s->arch_name, sizeof s->arch_name, "%s", arch);
    free(arch);
    s->arch = arch_by_gguf(s->arch_name);
    s->n_layer = gguf_arch_int(s->gguf, s->arch_name, "block_count");
    s->n_head = gguf_arch_int(s->gguf, s->arch_name, "attention.head_count");
    s->n_head_kv = gguf_arch_int(s->gguf, s->arch_name, "attention.head_count_kv");
    if (!s->n_head_kv) s->n_head_kv = s->n_head;
    s->n_expert = gguf_arch_int(s->gguf, s->arch_name, "expert_count");
    s->n = gguf_n_tensors(s->gguf);
    s->t = calloc((size_t)(s->n ? s->n : 1), sizeof *s->t);
    if (!s->t) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    for (int i = 0; i < s->n; i++) {
        const wick_tensor *g = gguf_tensor(s->gguf, i);
        src_tensor *t = &s->t[i];
        if (strlen(g->name) >= sizeof t->name)
            return wick_fail(err, "tensor name '%.40s...' is too long (%s)", g->name, path);
        snprintf(t->name, sizeof t->name, "%s", g->name);
        t->type = g->type;
        t->n_dims = g->n_dims;
        memcpy(t->ne, g->ne, sizeof t->ne);
        t->data = g->data;
        t->nbytes = g->nbytes;
        if (strcmp(t->name, "output.weight") == 0) s->has_output = true;
    }
    return 0;
}

int source_open(model_source *s, const char *path, wick_error *err) {
    memset(s, 0, sizeof *s);
    s->path = path;
    int rc;
    if (dir_exists(path)) rc = source_open_hf(s, path, err);
    else if (file_exists(path)) rc = open_gguf(s, path, err);
    else rc = wick_fail(err, "model not found: %s", path);
    if (rc < 0) source_close(s);
    return rc;
}

void source_close(model_source *s) {
    if (s->gguf) gguf_close(s->gguf);
    if (s->st) st_close(s->st);
    if (s->tok) tok_free(s->tok);
    if (s->gen_config) cJSON_Delete(s->gen_config);
    for (int i = 0; s->t && i < s->n; i++) free(s->t[i].parts);
    free(s->t);
    free(s->rope_freqs);
    free(s->longrope);
    const char *path = s->path;
    memset(s, 0, sizeof *s);
    s->path = path;
}

/* ---- metadata ---- */

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

int source_write_metadata(const model_source *s, gguf_writer *w, wick_error *err) {
    if (!s->hf) {
        for (int i = 0; i < gguf_n_kv(s->gguf); i++) {
            const char *key = gguf_kv_key(s->gguf, i);
            const bool skip = strcmp(key, "general.file_type") == 0 ||
                              strcmp(key, "general.quantization_version") == 0 || starts_with(key, "split.");
            if (!skip && gguf_set_value(w, key, gguf_kv_value(s->gguf, i), err) < 0) return wick_fail_prefix(err, "%s: ", s->path);
        }
        return 0;
    }
    return source_write_hf_metadata(s, w, err);
}

/* ---- rows ---- */

void source_row_f32(const src_tensor *t, int64_t r, float *out, void *scratch) {
    const int64_t cols = t->ne[0];
    const size_t rb = dtype_row_bytes(t->type, cols);
    if (t->permute_heads > 0 && t->n_dims == 1) { /* a bias: its elements are the rows */
        const size_t eb = dtype_block_bytes(t->type);
        const int hd = t->head_dim, half = hd / 2;
        for (int64_t k = 0; k < cols; k++) {
            const int64_t h = k / hd, i = (k % hd) / 2, j = k % 2;
            memcpy(scratch, (const char *)t->data + (size_t)(h * hd + j * half + i) * eb, eb);
            dequantize_row(t->type, scratch, out + k, 1);
        }
        return;
    }
    if (t->permute_heads > 0) { /* GGUF row h·hd + 2i + j holds HF row h·hd + j·hd/2 + i */
        const int64_t hd = t->head_dim, h = r / hd, i = (r % hd) / 2, j = r % 2;
        r = h * hd + j * (hd / 2) + i;
    }
    const int64_t part_rows = src_rows(t) / src_n_parts(t);
    const char *row = (const char *)src_part(t, (int)(r / part_rows)) + (size_t)(r % part_rows) * rb;
    memcpy(scratch, row, rb); /* the map may be unaligned (safetensors) */
    dequantize_row(t->type, scratch, out, cols);
    if (t->add != 0.0f)
        for (int64_t k = 0; k < cols; k++) out[k] += t->add;
}
