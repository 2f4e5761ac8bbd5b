/* bench_spans.c — `wick bench --spans`: spnl's protocol for the span cache.
 * For each document size (words): 4 fresh documents of that many words, a
 * short system prefix and a ~40-word question; every request generates one
 * token and TTFT is submit -> first token as the scheduler measures it.
 *   cold   the first span request that sees the documents (every span is
 *          computed in isolation, then placed);
 *   warm   5 reuses, each with the documents shuffled and a new question
 *          (spans come from the span cache and are placed);
 *   floor  the same text as each warm request, sent as an ordinary prompt
 *          whose part before the question is already a prefix-cache hit
 *          (primed first, not timed): only the question is computed.
 * Reported: p50s, cold / warm, warm / floor. Text is drawn from a fixed word
 * list by a seeded PRNG, so runs are repeatable. The KV pool's pages are
 * committed before the first request (wick_context_prefault): steady state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "cli/cli.h"
#include "wick.h"

#define N_DOCS 4
#define N_REUSE 5
#define MAX_SIZES 8

static const char *const WORDS[] = {
    "the", "river", "city", "north", "council", "voted", "to", "build", "a", "new", "bridge", "after", "years",
    "of", "debate", "about", "cost", "and", "traffic", "engineers", "said", "steel", "would", "arrive", "in",
    "spring", "while", "local", "shops", "expect", "more", "visitors", "during", "summer", "festival", "season",
    "farmers", "near", "valley", "reported", "strong", "harvest", "despite", "late", "rain", "prices", "for",
    "wheat", "fell", "slightly", "market", "analysts", "noted", "that", "exports", "grew", "by", "eight",
    "percent", "last", "quarter", "school", "opened", "library", "with", "two", "thousand", "books", "donated",
    "families", "teachers", "plan", "evening", "classes", "adults", "who", "want", "learn", "languages", "museum",
    "will", "display", "old", "maps", "showing", "how", "coast", "changed", "over", "centuries", "storm", "damaged",
    "roofs", "east", "district", "crews", "worked", "through", "night", "restore", "power", "hospital", "hired",
    "nurses", "added", "beds", "children", "ward", "mayor", "promised", "lower", "taxes", "next", "year",
    "company", "announced", "factory", "jobs", "training", "young", "workers", "railway", "line", "connects",
    "port", "mountain", "towns", "tourists", "often", "visit", "lake", "boats", "fish", "birds", "forest",
}; /* 160 words */

static uint64_t next(uint64_t *x) {
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
    return *x;
}

/* w words of text (capitalized sentences of ~12 words); malloc'd. */
static char *words(int w, uint64_t *x) {
    char *s = malloc((size_t)w * 12 + 16), *p = s;
    if (!s) return NULL;
    const int nw = (int)(sizeof WORDS / sizeof WORDS[0]);
    for (int i = 0; i < w; i++) {
        const char *t = WORDS[next(x) % (uint64_t)nw];
        const bool start = i % 12 == 0;
        p += sprintf(p, "%s%c%s", i ? " " : "", start ? (char)(t[0] - 32) : t[0], t + 1);
        if (i % 12 == 11 || i == w - 1) *p++ = '.';
    }
    *p = 0;
    return s;
}

/* One request (a span request, or the ordinary prompt) through a scheduler on c. */
static int run_one(wick_context *c, const wick_spans *sp, const int32_t *prompt, int n, cli_done *o) {
    wick_request r = {.prompt = prompt, .n_prompt = n, .n_predict = 1, .logprobs = -1, .user = o, .ignore_eos = true,
                      .spans = sp};
    return cli_run_request(c, &r);
}

typedef struct seg {
    int32_t *ids;
    int n;
} seg;

static int tok(const wick_model *m, const char *text, bool bos, seg *s) {
    return cli_tokenize(m, text, strlen(text), bos, &s->ids, &s->n);
}

int bench_spans(wick_model *m, const char *sizes_s, int threads, int kv_type, int ctx, bool json) {
    int sizes[MAX_SIZES], n_sizes = 0;
    for (const char *p = sizes_s; *p && n_sizes < MAX_SIZES;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 100000) return cli_error("bench: --span-words wants a list like 10,100,500,1000");
        sizes[n_sizes++] = (int)v;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return cli_error("bench: --span-words wants a list like 10,100,500,1000");
    }
    wick_error err;
    wick_context_params cp = {.n_ctx = ctx, .n_seq = 1, .n_threads = threads, .prefill_chunk = -1, .kv_type = kv_type};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) return cli_error("bench: %s", err.msg);
    /* Steady state: the pool's pages committed first, as a server's are
     * once it has run a while (faulting fresh pages is slow on VMs). */
    double t_fault = wick_now_ms();
    wick_context_prefault(c);
    t_fault = wick_now_ms() - t_fault;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    seg prefix = {0};
    int rc = tok(m, "You are a helpful assistant. Answer the question using only the documents below.", true, &prefix);
    double cold[MAX_SIZES], warm[MAX_SIZES], floor_[MAX_SIZES];
    int toks[MAX_SIZES], span_cached[MAX_SIZES];
    int32_t *flat = malloc((size_t)ctx * sizeof *flat);
    if (!flat) rc = cli_error("bench: out of memory");
    for (int si = 0; si < n_sizes && rc == 0; si++) {
        seg docs[N_DOCS] = {{0}}, q = {0};
        for (int d = 0; d < N_DOCS && rc == 0; d++) {
            char *t = words(sizes[si], &x);
            rc = t ? tok(m, t, false, &docs[d]) : cli_error("bench: out of memory");
            free(t);
        }
        int order[N_DOCS] = {0, 1, 2, 3};
        double w[N_REUSE], f[N_REUSE];
        for (int r = -1; r < N_REUSE && rc == 0; r++) {
            free(q.ids);
            q = (seg){0};
            char *qt = words(40, &x), qbuf[700];
            if (!qt) {
                rc = cli_error("bench: out of memory");
                break;
            }
            snprintf(qbuf, sizeof qbuf, " Question: %s Answer:", qt);
            free(qt);
            if ((rc = tok(m, qbuf, false, &q)) != 0) break;
            if (r >= 0)
                for (int i = N_DOCS - 1; i > 0; i--) { /* shuffle */
                    int j = (int)(next(&x) % (uint64_t)(i + 1)), t = order[i];
                    order[i] = order[j], order[j] = t;
                }
            const int32_t *sp[N_DOCS];
            int sl[N_DOCS], n = prefix.n;
            memcpy(flat, prefix.ids, (size_t)prefix.n * sizeof *flat);
            for (int d = 0; d < N_DOCS; d++) {
                sp[d] = docs[order[d]].ids, sl[d] = docs[order[d]].n;
                if (n + sl[d] + q.n > ctx) {
                    rc = cli_error("bench: %d-word documents need a context over %d (--ctx)", sizes[si], ctx);
                    break;
                }
                memcpy(flat + n, sp[d], (size_t)sl[d] * sizeof *flat), n += sl[d];
            }
            if (rc != 0) break;
            wick_spans spans = {.prefix = prefix.ids, .n_prefix = prefix.n, .spans = sp, .span_len = sl, .n_spans = N_DOCS,
                                .suffix = q.ids, .n_suffix = q.n};
            cli_done o;
            if ((rc = run_one(c, &spans, NULL, 0, &o)) != 0) break;
            if (r < 0) {
                cold[si] = o.res.ttft_ms;
                toks[si] = n + q.n;
                continue;
            }
            w[r] = o.res.ttft_ms;
            span_cached[si] = o.res.span_cached_tokens;
            /* the floor: prime P ++ docs as an ordinary prefix, then P ++ docs ++ Q */
            if ((rc = run_one(c, NULL, flat, n, &o)) != 0) break;
            memcpy(flat + n, q.ids, (size_t)q.n * sizeof *flat);
            if ((rc = run_one(c, NULL, flat, n + q.n, &o)) != 0) break;
            f[r] = o.res.ttft_ms;
        }
        if (rc == 0) {
            warm[si] = cli_stats(w, N_REUSE).med;
            floor_[si] = cli_stats(f, N_REUSE).med;
        }
        for (int d = 0; d < N_DOCS; d++) free(docs[d].ids);
        free(q.ids);
    }
    free(flat);
    free(prefix.ids);
    wick_context_free(c);
    if (rc != 0) return 1;
    if (json) {
        printf("[");
        for (int i = 0; i < n_sizes; i++)
            printf("%s{\"words\":%d,\"docs\":%d,\"prompt_tokens\":%d,\"ttft_cold_ms\":%.2f,\"ttft_warm_ms\":%.2f,"
                   "\"ttft_floor_ms\":%.2f,\"cold_over_warm\":%.2f,\"warm_over_floor\":%.3f,\"span_cached_tokens\":%d}",
                   i ? "," : "", sizes[i], N_DOCS, toks[i], cold[i], warm[i], floor_[i], cold[i] / warm[i],
                   warm[i] / floor_[i], span_cached[i]);
        printf("]\n");
        return 0;
    }
    printf("span cache: %d documents per request, ~40-word question, 1 token, %d threads; warm and floor: p50 of %d "
           "reuses (documents shuffled, new question); KV pool committed first (%.0f ms)\n",
           N_DOCS, threads, N_REUSE, t_fault);
    printf("| words per doc | prompt tokens | TTFT cold ms | TTFT warm ms | cold / warm | floor ms (prefix hit) | warm / floor |\n"
           "|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n_sizes; i++)
        printf("| %d | %d | %.1f | %.1f | %.2fx | %.1f | %.2f |\n", sizes[i], toks[i], cold[i], warm[i],
               cold[i] / warm[i], floor_[i], warm[i] / floor_[i]);
    return 0;
}
