/* quantize.c — owns writing a model source as a new GGUF file with chosen
 * tensor types (see quantize.h): the type plan of wick quantize (mix rules)
 * and of wick convert (float types), and the streamed, threaded conversion. */
#include "tools/quantize.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/threadpool.h"
#include "format/gguf.h"
#include "kernels/convert.h"
#include "tools/model_source.h"
#include "tools/quant_mix.h"

/* Output bytes per chunk of rows converted at once (one write each). */
#define CHUNK_BYTES ((size_t)16 << 20)
/* Bytes per write when a tensor is copied as it is. */
#define COPY_BYTES ((size_t)64 << 20)

/* llama_ftype values for the float files wick convert writes */
enum { FT_ALL_F32 = 0, FT_MOSTLY_F16 = 1, FT_MOSTLY_BF16 = 32 };

/* ---- the conversion of one chunk of rows, split over the pool ---- */

typedef struct chunk_job {
    const src_tensor *t;
    int type;
    int64_t r0, nrows, cols;
    size_t out_rb;
    char *dst;
    float **row;    /* per thread: cols floats */
    void **scratch; /* per thread: one source row */
} chunk_job;

static void chunk_task(void *arg, int ith, int nth) {
    const chunk_job *j = arg;
    int64_t lo, hi;
    pool_split(j->nrows, ith, nth, 1, &lo, &hi);
    for (int64_t r = lo; r < hi; r++) {
        source_row_f32(j->t, j->r0 + r, j->row[ith], j->scratch[ith]);
        quantize_row(j->type, j->row[ith], j->dst + (size_t)r * j->out_rb, j->cols);
    }
}

/* Drop the pages of a source tensor from memory (they stay in the file). */
static void release_pages(const void *data, size_t n) {
    const long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0 || !data) return;
    const uintptr_t a = ((uintptr_t)data + (uintptr_t)pg - 1) & ~((uintptr_t)pg - 1);
    const uintptr_t b = ((uintptr_t)data + n) & ~((uintptr_t)pg - 1);
    if (b > a) madvise((void *)a, b - a, MADV_DONTNEED);
}

typedef struct writer_ctx {
    wick_pool *pool;
    int n_threads;
    float **row;
    void **scratch;
    int64_t max_cols;
    gguf_stream *stream;
    char *buf;
    size_t buf_bytes;
} writer_ctx;

static int write_tensor(writer_ctx *c, const src_tensor *t, int type, wick_error *err) {
    const size_t part_bytes = src_part_bytes(t);
    if (t->type == type && src_verbatim(t)) { /* as it is */
        for (int p = 0; p < src_n_parts(t); p++) {
            const char *data = src_part(t, p);
            for (size_t off = 0; off < part_bytes; off += COPY_BYTES) {
                const size_t k = part_bytes - off < COPY_BYTES ? part_bytes - off : COPY_BYTES;
                if (gguf_write_data(c->stream, data + off, k, err) < 0) return -1;
            }
            release_pages(data, part_bytes);
        }
        return 0;
    }
    if (!dtype_supported(t->type))
        return wick_fail(err, "cannot convert tensor '%s' from %s (wick reads F32, F16, BF16 and its quantized types)",
                         t->name, dtype_name(t->type));
    const int64_t cols = t->ne[0], rows = src_rows(t);
    const size_t out_rb = dtype_row_bytes(type, cols);
    int64_t per_chunk = (int64_t)(CHUNK_BYTES / out_rb);
    if (per_chunk < 1) per_chunk = 1;
    if (per_chunk > rows) per_chunk = rows;
    const size_t need = (size_t)per_chunk * out_rb;
    if (need > c->buf_bytes) {
        char *b = realloc(c->buf, need);
        if (!b) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory converting '%s'", t->name);
        c->buf = b;
        c->buf_bytes = need;
    }
    if (cols > c->max_cols) {
        for (int i = 0; i < c->n_threads; i++) {
            free(c->row[i]);
            free(c->scratch[i]);
            c->row[i] = aligned_alloc(64, ((size_t)cols * sizeof(float) + 63) & ~(size_t)63);
            c->scratch[i] = aligned_alloc(64, ((size_t)cols * sizeof(float) + 63) & ~(size_t)63);
            if (!c->row[i] || !c->scratch[i]) {
                c->max_cols = 0;
                return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory converting '%s'", t->name);
            }
        }
        c->max_cols = cols;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += per_chunk) {
        const int64_t n = rows - r0 < per_chunk ? rows - r0 : per_chunk;
        chunk_job j = {t, type, r0, n, cols, out_rb, c->buf, c->row, c->scratch};
        pool_run(c->pool, chunk_task, &j);
        if (gguf_write_data(c->stream, c->buf, (size_t)n * out_rb, err) < 0) return -1;
    }
    for (int p = 0; p < src_n_parts(t); p++) release_pages(src_part(t, p), part_bytes);
    return 0;
}

/* The same file as `out` (a GGUF input, or a file of an HF input directory):
 * writing it would destroy what is being read. */
static bool overwrites_input(const model_source *s, const char *out) {
    struct stat so, si;
    if (stat(out, &so) != 0) return false;
    if (!s->hf) return stat(s->path, &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino;
    DIR *d = opendir(s->path);
    if (!d) return false;
    bool same = false;
    char p[4096];
    for (struct dirent *e; !same && (e = readdir(d));)
        if (path_join(p, sizeof p, s->path, e->d_name) == 0 && stat(p, &si) == 0)
            same = si.st_dev == so.st_dev && si.st_ino == so.st_ino;
    closedir(d);
    return same;
}

/* Write s to out with tensor i in types[i]. */
static int write_model(model_source *s, const int *types, int ftype, const char *out, int n_threads,
                       quantize_progress_fn progress, void *ud, quantize_report *r, wick_error *err) {
    if (overwrites_input(s, out)) return wick_fail(err, "the output %s would overwrite the input", out);
    gguf_writer *w = gguf_writer_new();
    if (!w) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    int rc = source_write_metadata(s, w, err);
    if (rc == 0) {
        gguf_set_u32(w, "general.quantization_version", 2);
        gguf_set_u32(w, "general.file_type", (uint32_t)ftype);
    }
    memset(r, 0, sizeof *r);
    r->ftype = ftype;
    for (int i = 0; i < s->n && rc == 0; i++) {
        rc = gguf_add_tensor_info(w, s->t[i].name, types[i], s->t[i].n_dims, s->t[i].ne, err);
        r->n_tensors++;
        r->n_by_type[types[i]]++;
        r->bytes_in += s->t[i].nbytes;
        r->bytes_out += dtype_row_bytes(types[i], s->t[i].ne[0]) * (uint64_t)src_rows(&s->t[i]);
    }
    if (n_threads <= 0) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        n_threads = cores > 0 ? (int)cores : 1;
    }
    writer_ctx c = {.n_threads = n_threads};
    c.row = calloc((size_t)n_threads, sizeof *c.row);
    c.scratch = calloc((size_t)n_threads, sizeof *c.scratch);
    if (rc == 0 && (!c.row || !c.scratch)) rc = wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    if (rc == 0 && !(c.pool = pool_new(n_threads, err))) rc = -1;
    if (rc == 0 && !(c.stream = gguf_write_begin(w, out, err))) rc = -1;
    for (int i = 0; i < s->n && rc == 0; i++) {
        if (progress) progress(ud, s->t[i].name, s->t[i].type, types[i], i, s->n);
        rc = write_tensor(&c, &s->t[i], types[i], err);
    }
    if (c.stream) {
        if (rc == 0) rc = gguf_write_end(c.stream, err);
        else gguf_write_abort(c.stream);
    }
    pool_free(c.pool);
    for (int i = 0; i < n_threads && c.row; i++) free(c.row[i]);
    for (int i = 0; i < n_threads && c.scratch; i++) free(c.scratch[i]);
    free(c.row);
    free(c.scratch);
    free(c.buf);
    gguf_writer_free(w);
    return rc;
}

/* ---- wick quantize ---- */

/* A type named by --output-type / --embd-type (any type wick writes); -1 for NULL. */
static int override_type(const char *name, const char *what, wick_error *err, int *out) {
    *out = -1;
    if (!name) return 0;
    const int t = dtype_from_name(name);
    if (t < 0 || !quantize_row_supported(t))
        return wick_fail(err, "unknown %s \"%s\"; choose one of %s", what, name, quantize_row_type_names());
    *out = t;
    return 0;
}

int model_quantize(const char *in, const char *out, const quantize_params *p, quantize_report *r, wick_error *err) {
    quantize_report local;
    if (!r) r = &local;
    quant_choice c = {.mix = quant_mix_find(p->type), .pure = p->pure};
    if (!c.mix) return wick_fail(err, "unknown type \"%s\"; choose one of %s", p->type ? p->type : "", quant_mix_names());
    if (override_type(p->output_type, "--output-type", err, &c.output_type) < 0 ||
        override_type(p->embd_type, "--embd-type", err, &c.embd_type) < 0)
        return -1;
    model_source s;
    if (source_open(&s, in, err) < 0) return -1;
    const quant_model m = {s.n_layer, s.n_head, s.n_head_kv, s.n_expert, s.has_output};
    int *types = malloc((size_t)(s.n ? s.n : 1) * sizeof *types);
    int rc = types ? 0 : wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    int n_fallback = 0;
    for (int i = 0; i < s.n && rc == 0; i++) {
        const src_tensor *t = &s.t[i];
        if (quant_tensor_is_matrix(t->name, t->n_dims)) {
            int wanted;
            types[i] = quant_tensor_type(&c, &m, t->name, t->ne[0], &wanted);
            n_fallback += types[i] != wanted;
        } else {
            types[i] = s.hf ? WICK_F32 : t->type; /* norms, biases, routers: as llama.cpp keeps them */
        }
    }
    if (rc == 0) rc = write_model(&s, types, c.mix->ftype, out, p->n_threads, p->progress, p->progress_ud, r, err);
    r->n_fallback = n_fallback;
    free(types);
    source_close(&s);
    return rc;
}

/* ---- wick convert ---- */

int model_convert(const char *hf_dir, const char *out, const char *outtype, int n_threads, quantize_progress_fn progress,
                  void *progress_ud, quantize_report *r, wick_error *err) {
    quantize_report local;
    if (!r) r = &local;
    if (!outtype) outtype = "auto";
    int want = -1;
    if (strcmp(outtype, "f32") == 0) want = WICK_F32;
    else if (strcmp(outtype, "f16") == 0) want = WICK_F16;
    else if (strcmp(outtype, "bf16") == 0) want = WICK_BF16;
    else if (strcmp(outtype, "auto") != 0)
        return wick_fail(err, "unknown --outtype \"%s\"; choose f32, f16, bf16 or auto", outtype);
    if (!dir_exists(hf_dir))
        return wick_fail(err, "%s is not a Hugging Face model directory (wick convert reads config.json + *.safetensors)",
                         hf_dir);
    model_source s;
    if (source_open(&s, hf_dir, err) < 0) return -1;
    int *types = malloc((size_t)(s.n ? s.n : 1) * sizeof *types);
    int rc = types ? 0 : wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    int count[3] = {0}; /* matrices in F32, F16, BF16 */
    for (int i = 0; i < s.n && rc == 0; i++) {
        const src_tensor *t = &s.t[i];
        const bool matrix = quant_tensor_is_matrix(t->name, t->n_dims);
        types[i] = !matrix || want == WICK_F32 ? WICK_F32 : want >= 0 ? want : t->type;
        if (matrix) count[types[i] == WICK_F32 ? 0 : types[i] == WICK_F16 ? 1 : 2]++;
    }
    /* the file type of most matrices */
    const int ftype = count[2] > count[1] && count[2] > count[0] ? FT_MOSTLY_BF16
                      : count[1] > count[0]                        ? FT_MOSTLY_F16
                                                                   : FT_ALL_F32;
    if (rc == 0) rc = write_model(&s, types, ftype, out, n_threads, progress, progress_ud, r, err);
    free(types);
    source_close(&s);
    return rc;
}
