/* thread_pairs.c — decode's 2-thread ÷ 1-thread speed, measured in pairs of
 * short stretches close enough in time to share the memory's state.
 *
 * On a shared machine the bandwidth two cores can draw switches between
 * levels within seconds (a neighbour's traffic comes and goes), while one
 * core's is steady; separate 1- and 2-thread runs (thread_scaling.sh) then
 * often land in different states. Here one process holds a 2-thread context
 * and, for each pair, reads the memory's bandwidth with 1 and 2 threads,
 * decodes `tokens` steps with 1 thread and `tokens` with 2 (the order
 * alternating between pairs), and reads both bandwidths again. A pair is
 * "steady" when its two 2-thread readings agree within 10%. Prints each pair
 * and, for the steady pairs grouped by the memory's own 2t/1t ratio (at
 * least 1.6 or not), the median decode ratio and each thread count's decode
 * rate as a share of its ceiling (bandwidth ÷ bytes per token: the weights
 * and the KV cache rows at the stretch's mean depth, 16 to 128 positions).
 * Usage: build/bench/thread_pairs MODEL [pairs 40] [tokens 16] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/bench_measure.h"
#include "engine/context.h"
#include "engine/sampler.h"
#include "wick.h"
#include "bench_util.h"

#define PROBE_BYTES ((size_t)256 << 20)
#define MAX_PAIRS 400

typedef struct pair {
    double tg1, tg2;      /* decode tok/s */
    double by1, by2;      /* bytes read per token: weights + KV at the mean depth */
    double bw1, bw2;      /* GB/s, mean of the readings before and after */
    bool steady;
} pair;

/* Decode n greedy steps of sequence 0 from *pos on; tok/s, or -1. */
static double decode(wick_context *c, int n, int32_t *tok, int32_t *pos, int n_vocab, double *mean_pos) {
    *mean_pos = *pos + (n - 1) / 2.0;
    wick_error err;
    const int32_t seq = 0;
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        wick_batch b = {.n = 1, .tokens = tok, .pos = pos, .seq = &seq};
        if (wick_decode(c, &b, &err) < 0) {
            fprintf(stderr, "thread_pairs: %s\n", err.msg);
            return -1;
        }
        *tok = sampler_argmax(wick_logits(c, 0), n_vocab);
        (*pos)++;
    }
    return n / (now_s() - t0);
}

static void summary(const char *name, const pair *p, int n, bool high) {
    double r[MAX_PAIRS], e1[MAX_PAIRS], e2[MAX_PAIRS], m[MAX_PAIRS];
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!p[i].steady || (p[i].bw2 / p[i].bw1 >= 1.6) != high) continue;
        r[k] = p[i].tg2 / p[i].tg1;
        m[k] = p[i].bw2 / p[i].bw1;
        e1[k] = p[i].tg1 * p[i].by1 / (p[i].bw1 * 1e9) * 100;
        e2[k] = p[i].tg2 * p[i].by2 / (p[i].bw2 * 1e9) * 100;
        k++;
    }
    if (!k) {
        printf("  %s: no steady pair\n", name);
        return;
    }
    printf("  %s: %d steady pairs, median decode ratio %.2fx (memory %.2fx); decode at %.0f%% (1t) and "
           "%.0f%% (2t) of the ceiling\n",
           name, k, median(r, k), median(m, k), median(e1, k), median(e2, k));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL [pairs] [tokens]\n", argv[0]);
        return 2;
    }
    const int n_pairs = arg_int(argc, argv, 2, 40), n_tok = arg_int(argc, argv, 3, 16);
    if (n_pairs < 1 || n_pairs > MAX_PAIRS || n_tok < 1 || n_tok > 56) {
        fprintf(stderr, "thread_pairs: pairs must be 1..%d and tokens 1..56\n", MAX_PAIRS);
        return 2;
    }
    wick_error err;
    /* The probes' buffers and threads first: pages the model has not touched. */
    bench_membw_buf *b1 = bench_membw_new(PROBE_BYTES, 1, &err);
    bench_membw_buf *b2 = b1 ? bench_membw_new(PROBE_BYTES, 2, &err) : NULL;
    wick_model *m = b2 ? wick_model_load(argv[1], NULL, &err) : NULL;
    const wick_context_params cp = {.n_ctx = 256, .n_seq = 1, .n_threads = 2, .prefill_chunk = -1};
    wick_context *c = m ? wick_context_new(m, &cp, &err) : NULL;
    if (!c) {
        fprintf(stderr, "thread_pairs: %s\n", err.msg);
        return 1;
    }
    wick_model_info info;
    wick_model_get_info(m, &info);
    const double kv_per_pos = 2.0 * info.n_layer * info.n_head_kv * info.head_dim * sizeof(float);
    wick_pool *pool2 = c->pool;
    int32_t tok = 1, pos = 0;
    double mp;
    if (decode(c, 16, &tok, &pos, info.n_vocab, &mp) < 0) return 1; /* warm-up: every weight read once */
    pair p[MAX_PAIRS];
    printf("%s: %d pairs of %d decode steps (1 and 2 threads), bandwidth read around each pair\n", argv[1],
           n_pairs, n_tok);
    printf("  pair  tg 1t  tg 2t  ratio | bw 1t  bw 2t  ratio | steady\n");
    for (int i = 0; i < n_pairs; i++) {
        if (pos + 2 * n_tok > 128) { /* keep the depth small, as tg128 */
            wick_seq_truncate(c, 0, 16);
            pos = 16;
        }
        const double a1 = bench_membw_read(b1, 2), a2 = bench_membw_read(b2, 2);
        for (int k = 0; k < 2; k++) {
            const bool one = (k == 0) == (i % 2 == 0);
            c->pool = one ? NULL : pool2;
            const double r = decode(c, n_tok, &tok, &pos, info.n_vocab, &mp);
            if (r < 0) return 1;
            const double by = (double)info.decode_bytes + kv_per_pos * mp;
            if (one) p[i].tg1 = r, p[i].by1 = by;
            else p[i].tg2 = r, p[i].by2 = by;
        }
        c->pool = pool2;
        const double z2 = bench_membw_read(b2, 2), z1 = bench_membw_read(b1, 2);
        p[i].bw1 = (a1 + z1) / 2, p[i].bw2 = (a2 + z2) / 2;
        const double lo = a2 < z2 ? a2 : z2, hi = a2 < z2 ? z2 : a2;
        p[i].steady = hi <= lo * 1.1;
        printf("  %4d %6.1f %6.1f %5.2fx | %5.1f %6.1f %5.2fx | %s\n", i, p[i].tg1, p[i].tg2, p[i].tg2 / p[i].tg1,
               p[i].bw1, p[i].bw2, p[i].bw2 / p[i].bw1, p[i].steady ? "yes" : "no");
    }
    summary("memory ratio >= 1.6", p, n_pairs, true);
    summary("memory ratio < 1.6", p, n_pairs, false);
    wick_context_free(c);
    wick_model_free(m);
    bench_membw_free(b2);
    bench_membw_free(b1);
    return 0;
}
