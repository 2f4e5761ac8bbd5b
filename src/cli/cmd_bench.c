/* cmd_bench.c — `wick bench`: llama-bench-like speed table for one model.
 *
 * Tests, each repeated -r times (median ± standard deviation reported):
 *   pp<P>   prefill of P random prompt tokens from an empty sequence, in
 *           chunks of --prefill-chunk, logits for the last one; TTFT = that
 *           plus the argmax of the first token.
 *   tg<N>   N decode steps of one token each (greedy argmax) from an empty
 *           sequence, as llama-bench's tg test; with --depth D after D
 *           random tokens prefilled first (not timed; llama-bench's -d).
 *   sweep   with --chunk LIST: pp<P> again for each prefill chunk size.
 * Also: memory read bandwidth (a streaming read of --membw-mib MiB by -t
 * threads, best of 4 passes, plain and with the decode kernels' software
 * prefetches in turn (engine/bench.c), in a child process forked once,
 * before the model is loaded, so that its buffer does not count in peak RSS
 * and it shares no pages with decode), read before the first repeat and
 * then after every --probe-every decode steps and at the end of each tg
 * run, so every segment of decode lies between two readings. On a shared
 * machine the bandwidth drifts from second to second, so decode is
 * compared with what the memory gave at the time: a repeat's ceiling is the
 * tokens the readings allowed in its decode time (Σ over segments of time ×
 * the mean of the two readings around it ÷ the weight bytes one decode step
 * reads), decode's share of it is its tokens ÷ that; the figures reported
 * are medians (bandwidth over all readings; ceiling and share over
 * repeats). Decode times leave the probes out. Also the process's peak RSS
 * with weights + KV cache for comparison. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "core/clock.h"
#include "cli/cli.h"
#include "cli/spec_args.h"
#include "cli/bench_measure.h"
#include "engine/context.h"
#include "engine/sampler.h"

#define MAX_REPEATS 64
#define MAX_CHUNKS 16

typedef struct bench {
    wick_model *m;
    const bool *none; /* n_prompt false entries */
    int n_vocab, n_tok_vocab;
    double sample_ms;
    int n_sampled;
    uint64_t rng;
} bench;

static int32_t rand_token(bench *b) {
    b->rng = b->rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int32_t)((b->rng >> 33) % (uint64_t)b->n_tok_vocab);
}

static int32_t sample(bench *b, wick_context *c) {
    double t0 = wick_now_ms();
    int32_t t = sampler_argmax(wick_logits(c, 0), b->n_vocab);
    b->sample_ms += wick_now_ms() - t0;
    b->n_sampled++;
    return t;
}

/* Prefill n random tokens into an empty sequence 0; returns ms to the first
 * sampled token (TTFT), -1 on error. *prefill_ms gets the prefill alone. */
static double run_prefill(bench *b, wick_context *c, int n, int32_t *toks, int32_t *pos, int32_t *seq,
                          double *prefill_ms) {
    wick_seq_truncate(c, 0, 0);
    for (int i = 0; i < n; i++) toks[i] = rand_token(b), pos[i] = i, seq[i] = 0;
    const int chunk = c->prefill_chunk > 0 ? c->prefill_chunk : n;
    wick_error err;
    double t0 = wick_now_ms();
    for (int i = 0; i < n; i += chunk) {
        /* logits for the last token only: want_logits all false before the last chunk */
        wick_batch bt = {.n = n - i < chunk ? n - i : chunk, .tokens = toks + i, .pos = pos + i, .seq = seq + i,
                         .want_logits = i + chunk < n ? b->none : NULL};
        if (wick_decode(c, &bt, &err) < 0) return cli_error("bench: %s", err.msg), -1;
    }
    *prefill_ms = wick_now_ms() - t0;
    sample(b, c);
    return wick_now_ms() - t0;
}

/* The bandwidth probe runs in a child process forked once, so that its
 * buffer does not count in this process's peak RSS and is mapped and
 * filled only once: each request (one byte on `req`) answers one reading
 * (a double on `resp`); the child exits when `req` closes. */
typedef struct prober {
    pid_t pid;
    int req, resp;
} prober;

static int prober_start(prober *pr, size_t bytes, int threads) {
    int rq[2], rs[2];
    pr->pid = -1;
    if (pipe(rq) < 0) return -1;
    if (pipe(rs) < 0) {
        close(rq[0]), close(rq[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(rq[0]), close(rq[1]), close(rs[0]), close(rs[1]);
        return -1;
    }
    if (pid == 0) {
        close(rq[1]), close(rs[0]);
        wick_error err;
        bench_membw_buf *buf = bench_membw_new(bytes, threads, &err);
        char cmd;
        while (read(rq[0], &cmd, 1) == 1) {
            double gbs = buf ? bench_membw_read(buf, 4) : -1;
            if (write(rs[1], &gbs, sizeof gbs) != (ssize_t)sizeof gbs) break;
        }
        bench_membw_free(buf);
        _exit(0);
    }
    close(rq[0]), close(rs[1]);
    pr->pid = pid, pr->req = rq[1], pr->resp = rs[0];
    return 0;
}

/* One reading in GB/s; -1 if the probe failed. */
static double prober_read(prober *pr) {
    double gbs = -1;
    if (pr->pid < 0 || write(pr->req, "p", 1) != 1 || read(pr->resp, &gbs, sizeof gbs) != (ssize_t)sizeof gbs)
        return -1;
    return gbs;
}

static void prober_stop(prober *pr) {
    if (pr->pid < 0) return;
    close(pr->req), close(pr->resp);
    waitpid(pr->pid, NULL, 0);
    pr->pid = -1;
}

/* Probe readings in run order, and what decode compares with them. */
typedef struct probes {
    prober pr;
    double *gbs;
    int n, cap;
    double bytes_per_token; /* weight bytes one decode step reads */
    double kv_bytes_per_pos; /* KV cache bytes a decode step reads per position it attends to */
} probes;

static double probe(probes *p) {
    double g = prober_read(&p->pr);
    if (g <= 0 || p->n == p->cap) return -1;
    return p->gbs[p->n++] = g;
}

/* n decode steps after `depth` prefilled tokens (prefill not timed) of
 * sequence 0; returns their ms (probes not counted), -1 on error. With
 * probes (p non-NULL, a reading already taken): after every `every` steps
 * (and at the end) the bandwidth is read again, and allowed[0] gets the
 * tokens the ceiling allowed in the decode time: Σ over segments of its ms
 * × the mean of the readings around it ÷ the weight bytes per token;
 * allowed[1] the same with the KV cache bytes the segment's steps read
 * added to the weights'. */
static double run_decode(bench *b, wick_context *c, int depth, int32_t *toks, int32_t *pos, int32_t *seq, int n,
                         probes *p, int every, double allowed[2]) {
    double ms;
    if (depth > 0 ? run_prefill(b, c, depth, toks, pos, seq, &ms) < 0 : (wick_seq_truncate(c, 0, 0), false))
        return -1;
    int32_t tok = rand_token(b), sq = 0;
    wick_error err;
    double total = 0, seg_t0 = wick_now_ms();
    int seg_first = 0;
    if (allowed) allowed[0] = allowed[1] = 0;
    for (int i = 0; i < n; i++) {
        int32_t ps = depth + i;
        wick_batch bt = {.n = 1, .tokens = &tok, .pos = &ps, .seq = &sq};
        if (wick_decode(c, &bt, &err) < 0) return cli_error("bench: %s", err.msg), -1;
        tok = sample(b, c);
        if (p && (i + 1 == n || (every > 0 && (i + 1) % every == 0))) {
            const double seg = wick_now_ms() - seg_t0, before = p->gbs[p->n - 1], after = probe(p);
            if (after <= 0) return cli_error("bench: the memory bandwidth probe failed"), -1;
            /* steps seg_first..i attend to depth + j + 1 positions each */
            const double mean_pos = depth + (seg_first + i) / 2.0 + 1;
            const double bytes = seg / 1e3 * (before + after) / 2 * 1e9;
            total += seg;
            allowed[0] += bytes / p->bytes_per_token;
            allowed[1] += bytes / (p->bytes_per_token + p->kv_bytes_per_pos * mean_pos);
            seg_t0 = wick_now_ms();
            seg_first = i + 1;
        }
    }
    return p ? total : wick_now_ms() - seg_t0;
}

static int parse_chunks(const char *s, int *out) {
    int n = 0;
    while (s && *s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > (1 << 20) || n == MAX_CHUNKS) return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return -1;
    }
    return n;
}

int cmd_bench(int argc, char **argv) {
    const char *model = NULL, *chunks_s = NULL, *kv_s = NULL, *dtype = NULL;
    int n_prompt = 512, n_gen = 128, threads = 0, repeats = 3, ctx = 0, chunk = -1, membw_mib = 1024, every = 32,
        depth = 0;
    bool json = false, prefix_cache = false, spans = false, span_quality = false;
    int n_suffix = 16, trials = 8, docs = 3, doc_tokens = 64, quality_gen = 32;
    const char *cache_dir = NULL, *span_words = "10,100,500,1000", *spec_prompt = NULL;
    bool verify_cost = false;
    float spec_temp = 0;
    cli_spec_args spa;
    cli_opt opts[48] = {
        {"--verify-cost", NULL, OPT_FLAG, &verify_cost, NULL},
        {"--spec-prompt", NULL, OPT_STR, &spec_prompt, NULL},
        {"--temp", NULL, OPT_FLOAT, &spec_temp, NULL},
        {"--prefix-cache", NULL, OPT_FLAG, &prefix_cache, NULL},
        {"--spans", NULL, OPT_FLAG, &spans, NULL},
        {"--span-words", NULL, OPT_STR, &span_words, NULL},
        {"--span-quality", NULL, OPT_FLAG, &span_quality, NULL},
        {"--trials", NULL, OPT_INT, &trials, NULL},
        {"--docs", NULL, OPT_INT, &docs, NULL},
        {"--doc-tokens", NULL, OPT_INT, &doc_tokens, NULL},
        {"--quality-gen", NULL, OPT_INT, &quality_gen, NULL},
        {"--suffix", NULL, OPT_INT, &n_suffix, NULL},
        {"--cache-dir", NULL, OPT_STR, &cache_dir, NULL},
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--n-prompt", "-p", OPT_INT, &n_prompt, NULL},
        {"--n-gen", "-n", OPT_INT, &n_gen, NULL},
        {"--depth", "-d", OPT_INT, &depth, NULL},
        {"--threads", "-t", OPT_INT, &threads, NULL},
        {"--repeats", "-r", OPT_INT, &repeats, NULL},
        {"--chunk", NULL, OPT_STR, &chunks_s, NULL},
        {"--prefill-chunk", NULL, OPT_INT, &chunk, NULL},
        {"--ctx", "-c", OPT_INT, &ctx, NULL},
        {"--kv-type", NULL, OPT_STR, &kv_s, NULL},
        {"--dtype", NULL, OPT_STR, &dtype, NULL},
        {"--membw-mib", NULL, OPT_INT, &membw_mib, NULL},
        {"--probe-every", NULL, OPT_INT, &every, NULL},
        {"--json", NULL, OPT_FLAG, &json, NULL},
    };
    int n_opts = 0;
    while (opts[n_opts].name) n_opts++;
    n_opts = cli_spec_opts(opts, n_opts, &spa);
    const int prc = cli_parse("bench", argc, argv, opts, n_opts);
    if (prc) return prc < 0;
    if (!model) model = cli_default_model();
    if (n_prompt < 1 || n_gen < 0 || depth < 0 || threads < 0 || ctx < 0 || chunk < -1 || membw_mib < 0 ||
        every < 0)
        return cli_error("bench: -p must be >= 1; -n, -d, -t, --ctx, --prefill-chunk, --membw-mib, --probe-every "
                         "must not be negative");
    if (repeats < 1 || repeats > MAX_REPEATS) return cli_error("bench: -r must be in [1, %d]", MAX_REPEATS);
    int chunks[MAX_CHUNKS], n_chunks = chunks_s ? parse_chunks(chunks_s, chunks) : 0;
    if (n_chunks < 0) return cli_error("bench: --chunk wants a list like 0,128,256,512 (at most %d)", MAX_CHUNKS);
    int kv_type = cli_kv_type("bench", kv_s);
    if (kv_type < 0) return 1;
    if (!threads) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > 0 ? (int)cores : 1;
    }
    if (verify_cost || cli_spec_given(&spa) || spa.draft_max != -1) {
        if (n_gen < 2 || repeats > 32) return cli_error("bench: speculative runs need -n >= 2 and -r <= 32");
        wick_model *pm = cli_load_model_dtype("bench", model, dtype);
        if (!pm) return 1;
        int prc = 1;
        if (verify_cost) prc = bench_verify_cost(pm, depth, threads, repeats, json);
        else if (cli_spec_build("bench", &spa, pm, dtype) == 0)
            prc = bench_spec(pm, &spa.v, spec_prompt, n_gen, spec_temp, threads, repeats, json);
        cli_spec_free(&spa);
        wick_model_free(pm);
        return prc;
    }
    if (span_quality) {
        wick_model *pm = cli_load_model_dtype("bench", model, dtype);
        if (!pm) return 1;
        int prc = bench_span_quality(pm, trials, docs, doc_tokens, quality_gen, threads, json);
        wick_model_free(pm);
        return prc;
    }
    if (spans) {
        wick_model *pm = cli_load_model_dtype("bench", model, dtype);
        if (!pm) return 1;
        int prc = bench_spans(pm, span_words, threads, kv_type, ctx ? ctx : 8192, json);
        wick_model_free(pm);
        return prc;
    }
    if (prefix_cache) {
        if (n_suffix < 1 || n_prompt + n_suffix > (1 << 20)) return cli_error("bench: --suffix must be at least 1");
        wick_model *pm = cli_load_model_dtype("bench", model, dtype);
        if (!pm) return 1;
        int prc = bench_prefix_cache(pm, n_prompt, n_suffix, threads, repeats, kv_type, cache_dir, json);
        wick_model_free(pm);
        return prc;
    }
    if (!ctx) ctx = (n_prompt > depth + n_gen ? n_prompt : depth + n_gen) + 1;
    const int n_buf = n_prompt > depth ? n_prompt : depth; /* token buffers: prefill and the depth prefix */

    double ceil_r[MAX_REPEATS], pct_r[MAX_REPEATS], pct_kv_r[MAX_REPEATS];
    probes pb = {.pr = {.pid = -1}};
    /* The prober is forked before the model exists: forked later, it would
     * share the model's and the context's pages copy-on-write, and decode's
     * first writes to each (KV cache, activations) would fault. */
    if (membw_mib > 0 && prober_start(&pb.pr, (size_t)membw_mib << 20, threads) < 0)
        return cli_error("bench: cannot start the memory bandwidth probe (--membw-mib 0 skips it)");
    double t_load = wick_now_ms();
    wick_model *m = cli_load_model_dtype("bench", model, dtype);
    if (!m) {
        prober_stop(&pb.pr);
        return 1;
    }
    t_load = wick_now_ms() - t_load;
    wick_model_info info;
    wick_model_get_info(m, &info);
    bench b = {.m = m, .n_vocab = info.n_vocab, .n_tok_vocab = info.tokenizer_vocab, .rng = 42};
    if (b.n_tok_vocab <= 0 || b.n_tok_vocab > b.n_vocab) b.n_tok_vocab = b.n_vocab;

    int rc = 1;
    wick_context *c = NULL;
    int32_t *toks = malloc(sizeof(int32_t) * (size_t)n_buf), *pos = malloc(sizeof(int32_t) * (size_t)n_buf),
            *seq = malloc(sizeof(int32_t) * (size_t)n_buf);
    bool *none = calloc((size_t)n_buf, sizeof *none);
    b.none = none;
    double pp[MAX_REPEATS], ttft[MAX_REPEATS], tg[MAX_REPEATS];
    cli_stat sw[MAX_CHUNKS];
    wick_error err;
    wick_context_params cp = {.n_ctx = ctx, .n_seq = 1, .n_threads = threads, .prefill_chunk = chunk, .kv_type = kv_type};
    if (!toks || !pos || !seq || !none) {
        cli_error("out of memory");
        goto done;
    }
    if (!(c = wick_context_new(m, &cp, &err))) {
        cli_error("%s", err.msg);
        goto done;
    }
    const int used_chunk = c->prefill_chunk;
    /* Warm-up: one decode step touches every weight once. */
    if (run_decode(&b, c, 0, toks, pos, seq, 1, NULL, 0, NULL) < 0) goto done;
    wick_context_profile_reset(c);
    b.sample_ms = 0, b.n_sampled = 0;
    const bool probing = membw_mib > 0 && info.decode_bytes > 0;
    if (probing) {
        const int segs = n_gen > 0 ? (every > 0 ? (n_gen + every - 1) / every : 1) : 1;
        pb.cap = 1 + repeats * segs;
        pb.bytes_per_token = (double)info.decode_bytes;
        pb.kv_bytes_per_pos = 2.0 * info.n_layer * info.n_head_kv * info.head_dim * (kv_type ? 2 : 4);
        if (!(pb.gbs = malloc(sizeof *pb.gbs * (size_t)pb.cap))) {
            cli_error("out of memory");
            goto done;
        }
        if (probe(&pb) <= 0) goto probe_failed;
    }
    for (int r = 0; r < repeats; r++) {
        if (n_gen > 0) {
            double allowed[2] = {0, 0};
            const double ms = run_decode(&b, c, depth, toks, pos, seq, n_gen, probing ? &pb : NULL, every, allowed);
            if (ms < 0) goto done;
            tg[r] = n_gen * 1000.0 / ms;
            if (probing) {
                ceil_r[r] = allowed[0] * 1000.0 / ms; /* the ceiling's mean over the run */
                pct_r[r] = 100.0 * n_gen / allowed[0];
                pct_kv_r[r] = 100.0 * n_gen / allowed[1];
            }
        } else if (probing) {
            if (probe(&pb) <= 0) goto probe_failed;
            ceil_r[r] = (pb.gbs[r] + pb.gbs[r + 1]) / 2 * 1e9 / pb.bytes_per_token;
            pct_r[r] = pct_kv_r[r] = 0;
        }
        double pms;
        if ((ttft[r] = run_prefill(&b, c, n_prompt, toks, pos, seq, &pms)) < 0) goto done;
        pp[r] = n_prompt * 1000.0 / pms;
    }
    cli_print_profile(c, b.sample_ms, b.n_sampled);
    const bool prof = wick_context_profiling(c);
    wick_context_free(c);
    c = NULL;
    for (int k = 0; k < n_chunks; k++) {
        wick_context_params sp = cp;
        sp.n_ctx = n_prompt;
        sp.prefill_chunk = chunks[k];
        if (!(c = wick_context_new(m, &sp, &err))) {
            cli_error("%s", err.msg);
            goto done;
        }
        if (!prof) wick_context_set_profiling(c, false);
        double v[MAX_REPEATS], pms;
        for (int r = 0; r < repeats; r++) {
            if (run_prefill(&b, c, n_prompt, toks, pos, seq, &pms) < 0) goto done;
            v[r] = n_prompt * 1000.0 / pms;
        }
        sw[k] = cli_stats(v, repeats);
        wick_context_free(c);
        c = NULL;
    }

    const cli_stat spp = cli_stats(pp, repeats), sttft = cli_stats(ttft, repeats), stg = cli_stats(tg, n_gen > 0 ? repeats : 0);
    const int n_bw = pb.n;
    const cli_stat sbw = cli_stats(pb.gbs, n_bw), sceil = cli_stats(ceil_r, n_bw ? repeats : 0), spct = cli_stats(pct_r, n_bw ? repeats : 0);
    const cli_stat spct_kv = cli_stats(pct_kv_r, n_bw ? repeats : 0);
    /* KV cache bytes a decode step reads on average over the tg run */
    const double kv_tok_mb = pb.kv_bytes_per_pos * (depth + (n_gen + 1) / 2.0) / 1048576.0;
    const double membw = n_bw ? sbw.med : -1, ceiling = sceil.med;
    const double rss_mb = bench_peak_rss() / 1048576.0;
    const int kv_dim = info.n_head_kv * info.head_dim;
    const double kv_mb = 2.0 * info.n_layer * (double)ctx * kv_dim * (kv_type ? 2 : 4) / 1048576.0;
    const double w_mb = info.decode_bytes / 1048576.0;
    const double res_mb = info.resident_bytes / 1048576.0; /* with a mixture of experts' idle experts */
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "model", model);
        cJSON_AddStringToObject(o, "arch", info.arch);
        if (info.converted_to) cJSON_AddStringToObject(o, "dtype", info.converted_to);
        cJSON_AddNumberToObject(o, "threads", threads);
        cJSON_AddNumberToObject(o, "n_prompt", n_prompt);
        cJSON_AddNumberToObject(o, "n_gen", n_gen);
        cJSON_AddNumberToObject(o, "depth", depth);
        cJSON_AddNumberToObject(o, "repeats", repeats);
        cJSON_AddNumberToObject(o, "prefill_chunk", used_chunk);
        cJSON_AddStringToObject(o, "kv_type", kv_type ? "f16" : "f32");
        cJSON_AddNumberToObject(o, "prefill_tok_s", spp.med);
        cJSON_AddNumberToObject(o, "prefill_tok_s_sd", spp.sd);
        cJSON_AddNumberToObject(o, "decode_tok_s", stg.med);
        cJSON_AddNumberToObject(o, "decode_tok_s_sd", stg.sd);
        cJSON_AddNumberToObject(o, "ttft_ms", sttft.med);
        cJSON_AddNumberToObject(o, "ttft_ms_sd", sttft.sd);
        cJSON_AddNumberToObject(o, "membw_gb_s", membw);
        cJSON_AddNumberToObject(o, "membw_gb_s_sd", sbw.sd);
        cJSON_AddNumberToObject(o, "weight_bytes_per_token", (double)info.decode_bytes);
        cJSON_AddNumberToObject(o, "weight_bytes_resident", (double)info.resident_bytes);
        cJSON_AddNumberToObject(o, "decode_ceiling_tok_s", ceiling);
        cJSON_AddNumberToObject(o, "decode_pct_of_ceiling", spct.med);
        /* the same with the KV cache reads counted: their bytes per token on average over the run */
        cJSON_AddNumberToObject(o, "kv_bytes_per_token", kv_tok_mb * 1048576.0);
        cJSON_AddNumberToObject(o, "decode_pct_of_ceiling_with_kv", spct_kv.med);
        /* per repeat, in run order, to show the drift the medians smooth */
        cJSON_AddItemToObject(o, "decode_tok_s_runs", cJSON_CreateDoubleArray(tg, n_gen > 0 ? repeats : 0));
        cJSON_AddNumberToObject(o, "probe_every", every);
        cJSON_AddItemToObject(o, "membw_probes_gb_s", cJSON_CreateDoubleArray(pb.gbs, n_bw));
        cJSON_AddItemToObject(o, "decode_pct_runs", cJSON_CreateDoubleArray(pct_r, n_bw ? repeats : 0));
        cJSON_AddNumberToObject(o, "peak_rss_mb", rss_mb);
        cJSON_AddNumberToObject(o, "weights_mb", res_mb);
        cJSON_AddNumberToObject(o, "kv_cache_mb", kv_mb);
        cJSON_AddNumberToObject(o, "load_ms", t_load);
        cJSON *a = cJSON_AddArrayToObject(o, "chunk_sweep");
        for (int k = 0; k < n_chunks; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "chunk", chunks[k]);
            cJSON_AddNumberToObject(e, "prefill_tok_s", sw[k].med);
            cJSON_AddNumberToObject(e, "prefill_tok_s_sd", sw[k].sd);
            cJSON_AddItemToArray(a, e);
        }
        cli_print_json(o);
    } else {
        printf("model: %s (%s%s%s), %d threads, KV %s, prefill chunk %d, %d repeats\n", model, info.arch,
               info.converted_to ? ", converted to " : "", info.converted_to ? info.converted_to : "", threads,
               kv_type ? "f16" : "f32", used_chunk, repeats);
        printf("| %-12s | %12s | %10s |\n", "test", "value", "±");
        printf("| %-12s | %12s | %10s |\n", "------------", "------------", "----------");
        char name[32];
        snprintf(name, sizeof name, "pp%d tok/s", n_prompt);
        printf("| %-12s | %12.2f | %10.2f |\n", name, spp.med, spp.sd);
        if (n_gen > 0) {
            if (depth) snprintf(name, sizeof name, "tg%d@d%d", n_gen, depth);
            else snprintf(name, sizeof name, "tg%d tok/s", n_gen);
            printf("| %-12s | %12.2f | %10.2f |\n", name, stg.med, stg.sd);
        }
        printf("| %-12s | %12.1f | %10.1f |\n", "ttft ms", sttft.med, sttft.sd);
        for (int k = 0; k < n_chunks; k++) {
            snprintf(name, sizeof name, "chunk %d", chunks[k]);
            printf("| %-12s | %12.2f | %10.2f |  pp%d tok/s\n", name, sw[k].med, sw[k].sd, n_prompt);
        }
        if (membw > 0) {
            printf("memory read bandwidth: %.1f ± %.1f GB/s (%d threads, %d probes); weights read per token: "
                   "%.1f MiB; decode ceiling %.1f tok/s",
                   membw, sbw.sd, threads, n_bw, w_mb, ceiling);
            if (n_gen > 0)
                printf("; decode at %.0f%% of it (median over repeats); counting the KV cache reads too (%.1f MiB "
                       "per token on average at depth %d), at %.0f%%",
                       spct.med, kv_tok_mb, depth, spct_kv.med);
            printf("\n");
        }
        printf("peak RSS: %.1f MiB (weights %.1f MiB + KV cache %.1f MiB for %d positions = %.1f MiB)\n",
               rss_mb, res_mb, kv_mb, ctx, res_mb + kv_mb);
    }
    rc = 0;
    goto done;
probe_failed:
    cli_error("bench: the memory bandwidth probe failed (%d MiB; --membw-mib 0 skips it)", membw_mib);
done:
    prober_stop(&pb.pr);
    free(pb.gbs);
    wick_context_free(c);
    free(toks), free(pos), free(seq), free(none);
    wick_model_free(m);
    return rc;
}
