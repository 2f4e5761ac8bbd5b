/* metrics.h — Prometheus metrics of `wick serve`: lock-free latency
 * histograms and request counters per model, and the text exposition of the
 * vLLM series the llm-d router and dashboards read. */
#ifndef WICK_SERVE_METRICS_H
#define WICK_SERVE_METRICS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/buf.h"
#include "wick.h"

#define METRICS_MAX_BUCKETS 32

typedef struct metrics_hist {
    const double *bounds; /* upper bounds in seconds, ascending; +Inf implied */
    int n_bounds;
    _Atomic uint64_t counts[METRICS_MAX_BUCKETS + 1]; /* per bucket, not cumulative */
    _Atomic uint64_t sum_us, count;
} metrics_hist;

/* Per model, for the server's whole life (survives unloads). */
typedef struct metrics_model {
    metrics_hist ttft, itl, e2e, queue;
    _Atomic uint64_t success_stop, success_length, aborted;
} metrics_model;

void metrics_model_init(metrics_model *m);
void metrics_observe(metrics_hist *h, double seconds);
/* Count a finished request and its latencies. */
void metrics_request_done(metrics_model *m, const wick_request_result *r);

/* What /metrics shows for one model: the scheduler counters (carried over
 * reloads by the pool), its gauges and its histograms. */
typedef struct metrics_view {
    const char *name;
    bool loaded;
    wick_sched_stats st; /* gauges zero when not loaded */
    const char *kv_type;
    const metrics_model *m;
    uint64_t disk_errors[WICK_CACHE_ERR_KINDS]; /* cache-folder failures by kind, all loads */
} metrics_view;

void metrics_render(wbuf *out, const metrics_view *v, int n);

#endif
