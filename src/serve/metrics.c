/* metrics.c — histograms, counters and the Prometheus text format (see
 * metrics.h). Observations are atomic adds, so a scrape never waits on a
 * request and a request never waits on a scrape. */
#include "serve/metrics.h"

#include <stddef.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"

/* vLLM's buckets, with finer low ones for fast CPU models. */
static const double TTFT_BOUNDS[] = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75,
                                     1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
static const double ITL_BOUNDS[] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
                                    0.4,   0.5,    0.75,  1.0,  2.5,   5.0,  7.5,   10.0, 20.0, 40.0, 80.0};
static const double E2E_BOUNDS[] = {0.01, 0.05, 0.1,  0.3,  0.5,  0.8,  1.0,   1.5,   2.0,   2.5,    5.0,  10.0,
                                    15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void hist_init(metrics_hist *h, const double *b, int n) {
    memset(h, 0, sizeof *h);
    h->bounds = b;
    h->n_bounds = n;
}

void metrics_model_init(metrics_model *m) {
    memset(m, 0, sizeof *m);
    hist_init(&m->ttft, TTFT_BOUNDS, N_OF(TTFT_BOUNDS));
    hist_init(&m->itl, ITL_BOUNDS, N_OF(ITL_BOUNDS));
    hist_init(&m->e2e, E2E_BOUNDS, N_OF(E2E_BOUNDS));
    hist_init(&m->queue, E2E_BOUNDS, N_OF(E2E_BOUNDS));
}

void metrics_observe(metrics_hist *h, double s) {
    if (!(s >= 0)) s = 0;
    int i = 0;
    while (i < h->n_bounds && s > h->bounds[i]) i++;
    atomic_fetch_add_explicit(&h->counts[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_us, (uint64_t)(s * 1e6 + 0.5), memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void metrics_request_done(metrics_model *m, const wick_request_result *r) {
    if (r->finish == WICK_FINISH_STOP || r->finish == WICK_FINISH_LENGTH) {
        atomic_fetch_add(r->finish == WICK_FINISH_STOP ? &m->success_stop : &m->success_length, 1);
        metrics_observe(&m->e2e, r->total_ms / 1e3);
        metrics_observe(&m->queue, r->queue_ms / 1e3);
        if (r->generated_tokens > 0) metrics_observe(&m->ttft, r->ttft_ms / 1e3);
    } else {
        atomic_fetch_add(&m->aborted, 1);
    }
}

static void family(wbuf *o, const char *name, const char *type, const char *help) {
    wbuf_printf(o, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* model_name="<name>" with the name escaped as Prometheus label values are */
static void label(wbuf *o, const char *name) {
    wbuf_puts(o, "model_name=\"");
    for (const char *p = name; *p; p++) {
        if (*p == '"' || *p == '\\') wbuf_put(o, "\\", 1);
        if (*p == '\n') wbuf_puts(o, "\\n");
        else wbuf_put(o, p, 1);
    }
    wbuf_puts(o, "\"");
}

static void gauge_line(wbuf *o, const char *metric, const char *name, double v) {
    wbuf_printf(o, "%s{", metric);
    label(o, name);
    wbuf_printf(o, "} %.9g\n", v);
}

static void counter_line(wbuf *o, const char *metric, const char *name, uint64_t v) {
    wbuf_printf(o, "%s{", metric);
    label(o, name);
    wbuf_printf(o, "} %llu\n", (unsigned long long)v);
}

static void hist_lines(wbuf *o, const char *metric, const char *name, const metrics_hist *h) {
    uint64_t cum = 0;
    for (int i = 0; i <= h->n_bounds; i++) {
        cum += atomic_load_explicit(&h->counts[i], memory_order_relaxed);
        wbuf_printf(o, "%s_bucket{", metric);
        label(o, name);
        if (i < h->n_bounds) wbuf_printf(o, ",le=\"%g\"} %llu\n", h->bounds[i], (unsigned long long)cum);
        else wbuf_printf(o, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
    }
    wbuf_printf(o, "%s_sum{", metric);
    label(o, name);
    wbuf_printf(o, "} %.6f\n", (double)atomic_load(&h->sum_us) / 1e6);
    /* _count equals the +Inf bucket, read once above */
    wbuf_printf(o, "%s_count{", metric);
    label(o, name);
    wbuf_printf(o, "} %llu\n", (unsigned long long)cum);
}

void metrics_render(wbuf *o, const metrics_view *v, int n) {
    family(o, "vllm:num_requests_running", "gauge", "Number of requests in model execution batches.");
    for (int i = 0; i < n; i++) gauge_line(o, "vllm:num_requests_running", v[i].name, v[i].st.running);
    family(o, "vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.");
    for (int i = 0; i < n; i++) gauge_line(o, "vllm:num_requests_waiting", v[i].name, v[i].st.waiting);
    family(o, "vllm:kv_cache_usage_perc", "gauge", "KV-cache usage. 1 means 100 percent usage.");
    for (int i = 0; i < n; i++) {
        double u = v[i].st.kv_blocks_total > 0 ? (double)v[i].st.kv_blocks_used / v[i].st.kv_blocks_total : 0;
        gauge_line(o, "vllm:kv_cache_usage_perc", v[i].name, u);
    }
    family(o, "wick:kv_cache_cached_blocks", "gauge",
           "KV blocks held by no request but kept by the prefix cache (evicted on demand).");
    for (int i = 0; i < n; i++) gauge_line(o, "wick:kv_cache_cached_blocks", v[i].name, v[i].st.kv_blocks_cached);
    family(o, "wick:prefix_cache_blocks", "gauge",
           "Full KV blocks in the prefix cache (stored and not removed, as KV events report them).");
    for (int i = 0; i < n; i++) gauge_line(o, "wick:prefix_cache_blocks", v[i].name, v[i].st.prefix_blocks);
    family(o, "vllm:cache_config_info", "gauge", "Information of the LLMEngine CacheConfig.");
    for (int i = 0; i < n; i++) {
        wbuf_puts(o, "vllm:cache_config_info{");
        label(o, v[i].name);
        wbuf_printf(o,
                    ",block_size=\"%d\",num_gpu_blocks=\"%d\",num_cpu_blocks=\"0\",cache_dtype=\"%s\","
                    "enable_prefix_caching=\"True\",max_num_seqs=\"%d\"} 1\n",
                    v[i].st.kv_block_size, v[i].st.kv_blocks_total, v[i].kv_type ? v[i].kv_type : "auto",
                    v[i].st.n_seq);
    }
    double now = wick_wall_s();
    family(o, "vllm:lora_requests_info", "gauge", "Running stats on lora requests.");
    for (int i = 0; i < n; i++) {
        wbuf_puts(o, "vllm:lora_requests_info{");
        label(o, v[i].name);
        wbuf_printf(o, ",max_lora=\"0\",running_lora_adapters=\"\",waiting_lora_adapters=\"\"} %.3f\n",
                    now);
    }
    struct {
        const char *metric, *help;
        size_t off;
    } counters[] = {
        {"vllm:prompt_tokens_total", "Number of prefill tokens processed.", offsetof(wick_sched_stats, prompt_tokens)},
        {"vllm:generation_tokens_total", "Number of generation tokens processed.",
         offsetof(wick_sched_stats, generation_tokens)},
        {"vllm:num_preemptions_total", "Cumulative number of preemption from the engine.",
         offsetof(wick_sched_stats, preemptions)},
        {"vllm:prefix_cache_queries_total", "Prefix cache queries, in terms of number of queried tokens.",
         offsetof(wick_sched_stats, prefix_queries)},
        {"vllm:prefix_cache_hits_total", "Prefix cache hits, in terms of number of cached tokens.",
         offsetof(wick_sched_stats, prefix_hits)},
        {"wick:span_cache_queries_total", "Span cache queries, in terms of number of placed span tokens looked up.",
         offsetof(wick_sched_stats, span_queries)},
        {"wick:span_cache_hits_total", "Span cache hits, in terms of number of span tokens placed from the cache.",
         offsetof(wick_sched_stats, span_hits)},
        {"vllm:spec_decode_num_drafts_total",
         "Number of spec decoding drafts (target passes that verified drafted tokens).",
         offsetof(wick_sched_stats, spec_passes)},
        {"vllm:spec_decode_num_draft_tokens_total", "Number of draft tokens.",
         offsetof(wick_sched_stats, spec_draft_tokens)},
        {"vllm:spec_decode_num_accepted_tokens_total", "Number of accepted tokens.",
         offsetof(wick_sched_stats, spec_accepted_tokens)},
    };
    for (size_t k = 0; k < sizeof counters / sizeof counters[0]; k++) {
        family(o, counters[k].metric, "counter", counters[k].help);
        for (int i = 0; i < n; i++) {
            uint64_t x;
            memcpy(&x, (const char *)&v[i].st + counters[k].off, sizeof x);
            counter_line(o, counters[k].metric, v[i].name, x);
        }
    }
    family(o, "wick:cache_disk_errors_total", "counter",
           "Cache-folder failures: files skipped, blocks unreadable or corrupt at read-back, blocks not written.");
    for (int i = 0; i < n; i++)
        for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++) {
            wbuf_puts(o, "wick:cache_disk_errors_total{");
            label(o, v[i].name);
            wbuf_printf(o, ",kind=\"%s\"} %llu\n", wick_cache_error_name((wick_cache_error)k),
                        (unsigned long long)v[i].disk_errors[k]);
        }
    family(o, "vllm:request_success_total", "counter", "Count of successfully processed requests.");
    for (int i = 0; i < n; i++) {
        const char *reasons[2] = {"stop", "length"};
        uint64_t vals[2] = {atomic_load(&v[i].m->success_stop), atomic_load(&v[i].m->success_length)};
        for (int r = 0; r < 2; r++) {
            wbuf_puts(o, "vllm:request_success_total{");
            label(o, v[i].name);
            wbuf_printf(o, ",finished_reason=\"%s\"} %llu\n", reasons[r], (unsigned long long)vals[r]);
        }
    }
    struct {
        const char *metric, *help;
        size_t off;
    } hists[] = {
        {"vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
         offsetof(metrics_model, ttft)},
        {"vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
         offsetof(metrics_model, itl)},
        {"vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
         offsetof(metrics_model, e2e)},
        {"vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.",
         offsetof(metrics_model, queue)},
    };
    for (size_t k = 0; k < sizeof hists / sizeof hists[0]; k++) {
        family(o, hists[k].metric, "histogram", hists[k].help);
        for (int i = 0; i < n; i++)
            hist_lines(o, hists[k].metric, v[i].name,
                       (const metrics_hist *)((const char *)v[i].m + hists[k].off));
    }
}
