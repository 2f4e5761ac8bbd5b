/* bench_prefix.c — `wick bench --prefix-cache`: time to first token of a
 * request whose long prefix is cached, against the same request cold.
 * Each repeat draws a fresh random prefix (so the cold run is cold) and
 * three 16-token suffixes, then on one context with the prefix cache:
 *   cold     prefix + suffix 1 (nothing cached),
 *   warm     prefix + suffix 2 (the prefix is cached, to the token),
 *   restart  (with --cache-dir) the context is freed, which writes its cache
 *            to the folder, a new one indexes the folder, and prefix +
 *            suffix 3 runs: the prefix comes back from disk.
 * Each request generates one token; TTFT is submit -> first token as the
 * scheduler measures it. Medians over the repeats. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "cli/cli.h"
#include "wick.h"

/* One request through a scheduler on c: o->res has its TTFT and cached tokens. */
static int run_one(wick_context *c, const int32_t *prompt, int n, cli_done *o) {
    wick_request r = {.prompt = prompt, .n_prompt = n, .n_predict = 1, .logprobs = -1, .user = o, .ignore_eos = true};
    return cli_run_request(c, &r);
}

int bench_prefix_cache(wick_model *m, int n_prefix, int n_suffix, int threads, int repeats, int kv_type,
                       const char *cache_dir, bool json) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    const int n_vocab = info.tokenizer_vocab > 3 && info.tokenizer_vocab <= info.n_vocab ? info.tokenizer_vocab : info.n_vocab;
    const int n = n_prefix + n_suffix;
    int32_t *p = malloc((size_t)n * sizeof *p);
    double cold[16], warm[16], rest[16], write_ms[16], open_ms[16];
    int cached_warm = 0, cached_rest = 0;
    uint64_t x = 0x243F6A8885A308D3ull;
    int rc = 0;
    if (!p) return cli_error("bench: out of memory");
    if (repeats > 16) repeats = 16;
    wick_context_params cp = {.n_ctx = n + 8, .n_seq = 1, .n_threads = threads, .prefill_chunk = -1,
                              .kv_type = kv_type, .cache_dir = cache_dir};
    for (int r = 0; r < repeats && rc == 0; r++) {
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            p[i] = 3 + (int32_t)(x % (uint64_t)(n_vocab - 3));
        }
        wick_error err;
        wick_context *c = wick_context_new(m, &cp, &err);
        if (!c) {
            rc = cli_error("bench: %s", err.msg);
            break;
        }
        cli_done o;
        if ((rc = run_one(c, p, n, &o)) != 0) break;
        cold[r] = o.res.ttft_ms;
        for (int i = n_prefix; i < n; i++) p[i] = 3 + (p[i] + 7) % (n_vocab - 3); /* suffix 2 */
        if ((rc = run_one(c, p, n, &o)) != 0) break;
        warm[r] = o.res.ttft_ms;
        cached_warm = o.res.cached_tokens;
        if (cache_dir) {
            double t0 = wick_now_ms();
            wick_context_free(c);
            write_ms[r] = wick_now_ms() - t0;
            t0 = wick_now_ms();
            c = wick_context_new(m, &cp, &err);
            open_ms[r] = wick_now_ms() - t0;
            if (!c) {
                rc = cli_error("bench: %s", err.msg);
                break;
            }
            for (int i = n_prefix; i < n; i++) p[i] = 3 + (p[i] + 11) % (n_vocab - 3); /* suffix 3 */
            if ((rc = run_one(c, p, n, &o)) != 0) {
                wick_context_free(c);
                break;
            }
            rest[r] = o.res.ttft_ms;
            cached_rest = o.res.cached_tokens;
        }
        wick_context_free(c);
    }
    free(p);
    if (rc != 0) return 1;
    const double mc = cli_stats(cold, repeats).med, mw = cli_stats(warm, repeats).med;
    const double mr = cache_dir ? cli_stats(rest, repeats).med : 0, mwr = cache_dir ? cli_stats(write_ms, repeats).med : 0,
                 mo = cache_dir ? cli_stats(open_ms, repeats).med : 0;
    if (json) {
        printf("{\"prefix\":%d,\"suffix\":%d,\"threads\":%d,\"repeats\":%d,\"ttft_cold_ms\":%.2f,\"ttft_warm_ms\":%.2f,"
               "\"warm_pct_of_cold\":%.2f,\"cached_warm\":%d",
               n_prefix, n_suffix, threads, repeats, mc, mw, 100 * mw / mc, cached_warm);
        if (cache_dir)
            printf(",\"ttft_restart_ms\":%.2f,\"restart_pct_of_cold\":%.2f,\"cached_restart\":%d,\"write_ms\":%.1f,"
                   "\"open_ms\":%.1f",
                   mr, 100 * mr / mc, cached_rest, mwr, mo);
        printf("}\n");
        return 0;
    }
    printf("prefix cache: %d-token prefix + %d new tokens, %d threads, median of %d\n", n_prefix, n_suffix, threads,
           repeats);
    printf("| run | TTFT ms | of cold | cached tokens |\n|---|---|---|---|\n");
    printf("| cold | %.1f | 100%% | 0 |\n", mc);
    printf("| warm (cached prefix) | %.1f | %.1f%% | %d |\n", mw, 100 * mw / mc, cached_warm);
    if (cache_dir)
        printf("| after restart (--cache-dir) | %.1f | %.1f%% | %d |\n(freeing the context wrote the cache in %.0f ms; "
               "the new one indexed the folder in %.1f ms)\n",
               mr, 100 * mr / mc, cached_rest, mwr, mo);
    return 0;
}
