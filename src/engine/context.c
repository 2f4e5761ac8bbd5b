/* context.c — creating contexts and running batches (wick_decode): batch
 * validation, KV block reservation, then the forward pass. */
#include "engine/context.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "kernels/matmul_float_r16.h"
#include "kernels/tuning_env.h"

/* Prefill chunk (tokens a forward pass): chosen by `wick bench --chunk`
 * sweeps on the Qwen2.5-0.5B shape (figures in docs/performance.md). Float
 * weights take longer chunks (their interleaved kernels gain from more rows
 * per weight read). `wick serve` keeps 128 (its step is the chunk: the
 * running streams' inter-token latency). */
#define DEFAULT_PREFILL_CHUNK 256
#define DEFAULT_PREFILL_CHUNK_FLOAT 512
#define DEFAULT_MAX_CTX 4096

/* The default chunk for m: float weights (F32/F16/BF16) take longer chunks. */
static int default_prefill_chunk(const wick_model *m) {
    const int t = m->layers[0].wq->type;
    const bool flt = t == WICK_F32 || t == WICK_F16 || t == WICK_BF16 || mm_float_r16_base(t) >= 0;
    return flt ? DEFAULT_PREFILL_CHUNK_FLOAT : DEFAULT_PREFILL_CHUNK;
}

wick_context *wick_context_new(wick_model *m, const wick_context_params *p, wick_error *err) {
    wick_context_params def = {.prefill_chunk = -1};
    if (!p) p = &def;
    if (p->kv_type != 0 && p->kv_type != 1) {
        wick_fail(err, "KV cache type must be f32 (0) or f16 (1), not %d", p->kv_type);
        return NULL;
    }
    if (p->n_ctx < 0 || p->n_seq < 0 || p->n_threads < 0 || p->prefill_chunk < -1 || p->kv_blocks < 0 ||
        p->max_batch < 0 || p->cache_blocks < 0) {
        wick_fail(err, "context parameters must not be negative");
        return NULL;
    }
    wick_context *c = calloc(1, sizeof *c);
    if (!c) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    c->m = m;
    c->n_ctx = p->n_ctx ? p->n_ctx : (m->hp.n_ctx_train < DEFAULT_MAX_CTX ? m->hp.n_ctx_train : DEFAULT_MAX_CTX);
    c->n_seq = p->n_seq ? p->n_seq : 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    c->n_threads = p->n_threads ? p->n_threads : (cores > 0 ? (int)cores : 1);
    c->prefill_chunk = p->prefill_chunk < 0 ? default_prefill_chunk(m) : p->prefill_chunk;
    if (c->n_ctx > (1 << 22)) {
        wick_fail(err, "context of %d tokens is too large", c->n_ctx);
        free(c);
        return NULL;
    }
    /* A batch holds one prefill chunk (or a whole prompt when chunking is
     * off) or one decode token per sequence. */
    int max_tokens = c->prefill_chunk > 0 && c->prefill_chunk < c->n_ctx ? c->prefill_chunk : c->n_ctx;
    if (p->max_batch > 0) max_tokens = p->max_batch;
    if (max_tokens < c->n_seq) max_tokens = c->n_seq;
    if (c->n_seq > 4096 || max_tokens > (1 << 20)) {
        wick_fail(err, "%d sequences / a batch of %d tokens is too many", c->n_seq, max_tokens);
        free(c);
        return NULL;
    }
    /* Three sequences more than the caller's, for span requests (engine/spans.c). */
    c->span_iso = c->n_seq;
    c->span_pre = c->n_seq + 1;
    c->span_look = c->n_seq + 2;
    c->no_span_cache = p->no_span_cache;
    /* A LongRoPE context longer than the original one rotates by other
     * frequencies: its cached KV is another model's. */
    const bool rope_long = m->inv_freq_long && c->n_ctx > m->hp.rope_orig_ctx;
    const kv_key identity = {m->identity[0] ^ (rope_long ? 0x4c4f4e47524f5045ull : 0), m->identity[1]};
    if (kv_cache_init_pool(&c->kv, m->hp.n_layer, m->hp.n_head_kv, m->hp.head_dim, c->n_ctx, c->n_seq + 3,
                           p->kv_blocks, p->kv_type == 1 ? WICK_F16 : WICK_F32, err) < 0 ||
        (!p->no_prefix_cache &&
         kv_enable_prefix_cache(&c->kv, identity, p->cache_blocks, err) < 0) ||
        (!p->no_prefix_cache && p->cache_dir &&
         kv_set_cache_dir(&c->kv, p->cache_dir, p->cache_dir_bytes, p->on_cache_warning, p->cache_warning_user,
                          err) < 0) ||
        forward_scratch_init(&c->fs, m, max_tokens, c->n_seq, err) < 0 ||
        sampler_init(&c->smp, m->hp.n_vocab, m->tuning.isa, err) < 0 ||
        !(c->pool = pool_new(c->n_threads, err))) {
        wick_context_free(c);
        return NULL;
    }
    forward_scratch_set_ctx(&c->fs, m, c->n_ctx);
    wick_context_set_profiling(c, env_profiling());
    return c;
}

/* ---- profiling ---- */

const char *wick_op_name(int op) {
    static const char *const NAMES[WICK_OP_COUNT] = {"matmul", "attention", "norm", "rope", "elementwise", "sampling"};
    return op >= 0 && op < WICK_OP_COUNT ? NAMES[op] : "?";
}

void wick_context_set_profiling(wick_context *c, bool on) { c->profiling = on; }
bool wick_context_profiling(const wick_context *c) { return c->profiling; }
void wick_context_profile(const wick_context *c, wick_profile *out) { *out = c->prof; }
void wick_context_profile_reset(wick_context *c) { memset(&c->prof, 0, sizeof c->prof); }

void wick_context_free(wick_context *c) {
    if (!c) return;
    pool_free(c->pool);
    kv_cache_free(&c->kv);
    forward_scratch_free(&c->fs);
    sampler_free(&c->smp);
    free(c);
}

int wick_context_n_ctx(const wick_context *c) { return c->n_ctx; }

int context_reserve_logits(wick_context *c, int rows, wick_error *err) {
    if (rows <= c->fs.max_logits) return 0;
    forward_scratch fs;
    if (forward_scratch_init(&fs, c->m, c->fs.max_tokens, rows, err) < 0) return -1;
    forward_scratch_free(&c->fs);
    c->fs = fs;
    forward_scratch_set_ctx(&c->fs, c->m, c->n_ctx);
    c->n_logits = 0;
    return 0;
}

static void prefault_task(void *arg, int ith, int nth) {
    block_pool *kv = arg;
    const int64_t pages = (int64_t)(kv->map_bytes / 4096);
    int64_t lo, hi;
    pool_split(pages, ith, nth, 512, &lo, &hi); /* 2 MiB runs: whole huge pages per thread */
    volatile char *b = kv->base;
    for (int64_t p = lo; p < hi; p++) b[p * 4096] = b[p * 4096];
}

void wick_context_prefault(wick_context *c) {
    if (c->kv.pool.base) pool_run(c->pool, prefault_task, &c->kv.pool);
}

int wick_context_cache_warnings(const wick_context *c, const char **last) { return kv_disk_warnings(&c->kv, last); }

const char *wick_cache_error_name(wick_cache_error k) {
    static const char *const NAMES[WICK_CACHE_ERR_KINDS] = {"skipped", "read", "corrupt", "write"};
    return (int)k >= 0 && k < WICK_CACHE_ERR_KINDS ? NAMES[k] : "?";
}

void wick_context_cache_errors(const wick_context *c, uint64_t counts[WICK_CACHE_ERR_KINDS]) {
    kv_disk_errors(&c->kv, counts);
}

/* Batch rules: ids in range, each sequence's tokens contiguous and at
 * consecutive positions starting at its current length. */
static int validate_batch(const wick_context *c, const wick_batch *b, int n_seq, wick_error *err) {
    if (!b || b->n <= 0 || !b->tokens || !b->pos || !b->seq)
        return wick_fail(err, "empty or incomplete batch");
    if (b->n > c->fs.max_tokens)
        return wick_fail(err, "batch of %d tokens exceeds the context's batch capacity %d", b->n,
                         c->fs.max_tokens);
    int n_logits = 0;
    for (int t = 0; t < b->n; t++) {
        if (b->tokens[t] < 0 || b->tokens[t] >= c->m->hp.n_vocab)
            return wick_fail(err, "token id %d out of range [0, %d)", b->tokens[t], c->m->hp.n_vocab);
        int s = b->seq[t];
        if (s < 0 || s >= n_seq) return wick_fail(err, "sequence id %d out of range [0, %d)", s, n_seq);
        bool first = t == 0 || b->seq[t - 1] != s;
        if (first) {
            for (int u = 0; u < t; u++)
                if (b->seq[u] == s) return wick_fail(err, "tokens of sequence %d are not contiguous in the batch", s);
            if (b->pos[t] != kv_seq_len(&c->kv, s))
                return wick_fail(err, "sequence %d continues at position %d, not %d", s, kv_seq_len(&c->kv, s), b->pos[t]);
        } else if (b->pos[t] != b->pos[t - 1] + 1) {
            return wick_fail(err, "positions of sequence %d are not consecutive", s);
        }
        if (b->pos[t] >= c->n_ctx)
            return wick_fail(err, "position %d is past the context size %d", b->pos[t], c->n_ctx);
        if (b->rope_pos && (b->rope_pos[t] < 0 || b->rope_pos[t] >= c->n_ctx))
            return wick_fail(err, "RoPE position %d is outside the context [0, %d)", b->rope_pos[t], c->n_ctx);
        if (b->want_logits ? b->want_logits[t] : t == b->n - 1) n_logits++;
    }
    if (n_logits > c->fs.max_logits)
        return wick_fail(err, "batch asks for %d logit rows; the context has room for %d", n_logits,
                         c->fs.max_logits);
    return 0;
}

static int decode(wick_context *c, const wick_batch *b, int n_seq, const fwd_capture *capture, wick_error *err) {
    c->n_logits = 0;
    if (validate_batch(c, b, n_seq, err) < 0) return -1;
    for (int t = 0; t < b->n; t++)
        if (t == b->n - 1 || b->seq[t + 1] != b->seq[t])
            if (kv_reserve(&c->kv, b->seq[t], b->pos[t] + 1, err) < 0) return -1;
    const fwd_opts o = {.prof = c->profiling ? &c->prof : NULL, .capture = capture};
    int n = forward(c->m, &c->kv, &c->fs, c->pool, b, &o, err);
    if (n < 0) return -1;
    c->n_logits = n;
    return 0;
}

int wick_decode(wick_context *c, const wick_batch *b, wick_error *err) { return decode(c, b, c->n_seq, NULL, err); }

int context_decode_any(wick_context *c, const wick_batch *b, const fwd_capture *capture, wick_error *err) {
    return decode(c, b, c->kv.tab.n_seq, capture, err);
}

const float *wick_logits(const wick_context *c, int i) {
    if (i < 0 || i >= c->n_logits) return NULL;
    return c->fs.logits + (size_t)i * c->m->hp.n_vocab;
}

int wick_seq_len(const wick_context *c, int seq) {
    return seq >= 0 && seq < c->n_seq ? kv_seq_len(&c->kv, seq) : 0;
}

void wick_seq_truncate(wick_context *c, int seq, int from) {
    if (seq >= 0 && seq < c->n_seq) kv_truncate(&c->kv, seq, from);
}

int wick_kv_block_size(void) { return KV_BLOCK_SIZE; }
int wick_kv_blocks_total(const wick_context *c) { return kv_blocks_total(&c->kv); }
int wick_kv_blocks_used(const wick_context *c) { return kv_blocks_used(&c->kv); }
size_t wick_kv_bytes_per_token(const wick_context *c) {
    return (size_t)c->kv.pool.n_layer * 2 * (size_t)c->kv.pool.row_elems * c->kv.pool.elem_bytes;
}
