/* bench_spec.c — `wick bench` for speculative decoding.
 *
 * With a drafter (--draft MODEL, --draft-layers N or --lookup N): the same
 * prompt generated plainly and speculatively, alternating, -r times each,
 * in one run; reported: decode tok/s of both (medians) and their ratio, the
 * acceptance rate (accepted / drafted tokens), tokens per target pass
 * (every pass emits exactly one token the target chose itself, so this is
 * generated / (generated - accepted)), and whether the greedy outputs are
 * identical (they must be).
 * With --verify-cost: the time of one forward pass over 1 + k tokens with
 * logits for each (verifying k drafts) after --depth tokens, relative to a
 * one-token decode step, k = 0..8 in turn in each of -r rounds of 16 passes
 * each, medians, and the
 * speedup it implies at a per-token acceptance rate a when drafting is free
 * (prompt lookup): (1 - a^(k+1)) / (1 - a) tokens per pass ÷ the cost. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "core/clock.h"
#include "cli/cli.h"
#include "engine/context.h"

/* A retelling: names and phrases recur, as prompt lookup likes. */
static const char DEFAULT_PROMPT[] =
    "Once upon a time, there was a little girl named Lily. Lily had a red ball. One day, Lily went to the park "
    "with her red ball. At the park, Lily saw a boy named Tom. Tom wanted to play with the red ball. Lily and Tom "
    "played with the red ball all day. They were very happy.\n"
    "Retell the story: Once upon a time, there was a little girl named Lily. Lily had a red ball. One day, Lily";

static int cmp_d(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int bench_spec(wick_model *m, const wick_spec_params *spec, const char *prompt, int n_gen, float temp, int threads,
               int repeats, bool json) {
    if (!prompt) prompt = DEFAULT_PROMPT;
    int32_t *ids = NULL, *out_p = NULL, *out_s = NULL;
    int n_ids = 0;
    if (cli_tokenize(m, prompt, strlen(prompt), true, &ids, &n_ids) < 0) return 1;
    wick_error err;
    wick_context_params cp = {.n_ctx = n_ids + n_gen + 8, .n_seq = 1, .n_threads = threads, .prefill_chunk = -1};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c) {
        free(ids);
        return cli_error("bench: %s", err.msg);
    }
    double tp[64], ts[64];
    long drafted = 0, accepted = 0, generated = 0, passes = 0;
    int n_p = 0, n_s = 0, rc = 1;
    bool identical = true;
    for (int r = 0; r < repeats; r++)
        for (int mode = 0; mode < 2; mode++) {
            wick_generate_params gp = {.n_predict = n_gen, .spec = mode ? spec : NULL};
            gp.sampling.temperature = temp;
            gp.sampling.seed = 1 + (uint64_t)r;
            wick_timings tm;
            wick_finish fin;
            int32_t *out = NULL;
            int n_out = 0;
            wick_seq_truncate(c, 0, 0); /* the prompt from the prefix cache; decode is what is timed */
            if (wick_generate(c, ids, n_ids, &gp, &out, &n_out, &fin, &tm, &err) < 0) {
                cli_error("bench: %s", err.msg);
                goto done;
            }
            const double tok_s = tm.decode_ms > 0 ? (n_out - 1) * 1000.0 / tm.decode_ms : 0;
            if (mode == 0) {
                tp[n_p++] = tok_s;
                free(out_p);
                out_p = out;
            } else {
                ts[n_s++] = tok_s;
                drafted += tm.draft_tokens;
                accepted += tm.accepted_tokens;
                generated += n_out;
                passes += tm.spec_passes;
                if (temp <= 0 && (n_out != n_gen || memcmp(out, out_p, sizeof *out * (size_t)n_out) != 0))
                    identical = false;
                free(out_s);
                out_s = out;
            }
        }
    {
        const double plain = median(tp, n_p), sp = median(ts, n_s);
        const double rate = drafted ? (double)accepted / (double)drafted : 0;
        const double per_pass = generated > accepted ? (double)generated / (double)(generated - accepted) : 0;
        if (json) {
            cJSON *o = cJSON_CreateObject();
            cJSON_AddNumberToObject(o, "prompt_tokens", n_ids);
            cJSON_AddNumberToObject(o, "n_gen", n_gen);
            cJSON_AddNumberToObject(o, "repeats", repeats);
            cJSON_AddNumberToObject(o, "temperature", temp);
            cJSON_AddNumberToObject(o, "plain_tok_s", plain);
            cJSON_AddNumberToObject(o, "spec_tok_s", sp);
            cJSON_AddNumberToObject(o, "speedup", plain > 0 ? sp / plain : 0);
            cJSON_AddNumberToObject(o, "draft_tokens", (double)drafted);
            cJSON_AddNumberToObject(o, "accepted_tokens", (double)accepted);
            cJSON_AddNumberToObject(o, "acceptance_rate", rate);
            cJSON_AddNumberToObject(o, "verify_passes", (double)passes);
            cJSON_AddNumberToObject(o, "tokens_per_pass", per_pass);
            if (temp <= 0) cJSON_AddBoolToObject(o, "greedy_identical", identical);
            cli_print_json(o);
        } else {
            printf("speculative decoding: %d-token prompt, %d new tokens, %s, %d repeats each, alternating\n", n_ids,
                   n_gen, temp > 0 ? "sampling" : "greedy", repeats);
            printf("| %-22s | %10s |\n", "", "value");
            printf("| %-22s | %10s |\n", "----------------------", "----------");
            printf("| %-22s | %10.1f |\n", "plain decode tok/s", plain);
            printf("| %-22s | %10.1f |\n", "speculative tok/s", sp);
            printf("| %-22s | %9.2fx |\n", "speedup", plain > 0 ? sp / plain : 0);
            printf("| %-22s | %9.1f%% |\n", "acceptance rate", 100 * rate);
            printf("| %-22s | %10.2f |\n", "tokens per target pass", per_pass);
            printf("drafted %ld, accepted %ld, %ld verifying passes over %ld generated tokens", drafted, accepted,
                   passes, generated);
            if (temp <= 0) printf("; greedy output identical to plain: %s", identical ? "yes" : "NO");
            printf("\n");
        }
        rc = identical ? 0 : 1;
        if (!identical) cli_error("bench: speculative greedy output differs from plain decoding");
    }
done:
    free(ids), free(out_p), free(out_s);
    wick_context_free(c);
    return rc;
}

int bench_verify_cost(wick_model *m, int depth, int threads, int repeats, bool json) {
    wick_model_info info;
    wick_model_get_info(m, &info);
    enum { KMAX = 8, PASSES = 16 };
    wick_error err;
    wick_context_params cp = {.n_ctx = depth + KMAX + 2, .n_seq = 1, .n_threads = threads, .prefill_chunk = -1,
                              .max_batch = 512};
    wick_context *c = wick_context_new(m, &cp, &err);
    if (!c || context_reserve_logits(c, KMAX + 1, &err) < 0) {
        wick_context_free(c);
        return cli_error("bench: %s", err.msg);
    }
    int32_t tok[512], pos[512], seq[512];
    bool want[512];
    int vocab = info.tokenizer_vocab > 0 && info.tokenizer_vocab < info.n_vocab ? info.tokenizer_vocab : info.n_vocab;
    uint64_t x = 7;
    for (int i = 0; i < depth; i += 512) { /* the context: random tokens */
        const int n = depth - i < 512 ? depth - i : 512;
        for (int t = 0; t < n; t++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            tok[t] = (int32_t)((x >> 33) % (uint64_t)vocab), pos[t] = i + t, seq[t] = 0, want[t] = false;
        }
        wick_batch b = {.n = n, .tokens = tok, .pos = pos, .seq = seq, .want_logits = want};
        if (wick_decode(c, &b, &err) < 0) {
            wick_context_free(c);
            return cli_error("bench: %s", err.msg);
        }
    }
    /* logits for every row (verification wants them all); the room for them */
    /* k = 0..8 in turn within each repeat, so that drift in the machine's
     * speed touches every k alike; medians of every pass */
    double ms[KMAX + 1];
    static double v[KMAX + 1][64 * PASSES];
    int n_v = 0;
    for (int r = 0; r < repeats; r++)
        for (int k = 0; k <= KMAX; k++)
            for (int p = 0; p < PASSES + (r == 0 ? 2 : 0); p++) { /* the first ones of each k warm up */
                for (int t = 0; t <= k; t++)
                    tok[t] = (int32_t)((t * 131 + p * 7 + r) % vocab), pos[t] = depth + t, seq[t] = 0, want[t] = true;
                wick_batch b = {.n = k + 1, .tokens = tok, .pos = pos, .seq = seq, .want_logits = want};
                const double t0 = wick_now_ms();
                if (wick_decode(c, &b, &err) < 0) {
                    wick_context_free(c);
                    return cli_error("bench: %s", err.msg);
                }
                const double dt = wick_now_ms() - t0;
                wick_seq_truncate(c, 0, depth);
                if (p < PASSES) v[k][r * PASSES + p] = dt;
            }
    n_v = repeats * PASSES;
    for (int k = 0; k <= KMAX; k++) ms[k] = median(v[k], n_v);
    static const double RATES[] = {0.5, 0.7, 0.8, 0.9};
    if (json) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "depth", depth);
        cJSON_AddNumberToObject(o, "threads", threads);
        cJSON *a = cJSON_AddArrayToObject(o, "verify");
        for (int k = 0; k <= KMAX; k++) {
            cJSON *e = cJSON_CreateObject();
            cJSON_AddNumberToObject(e, "k", k);
            cJSON_AddNumberToObject(e, "ms", ms[k]);
            cJSON_AddNumberToObject(e, "cost_steps", ms[k] / ms[0]);
            cJSON *sp = cJSON_AddArrayToObject(e, "speedup_at_rate");
            for (int i = 0; i < 4; i++)
                cJSON_AddItemToArray(sp, cJSON_CreateNumber((1 - pow(RATES[i], k + 1)) / (1 - RATES[i]) / (ms[k] / ms[0])));
            cJSON_AddItemToArray(a, e);
        }
        cli_print_json(o);
    } else {
        printf("verifying k drafts = one pass over 1 + k tokens with logits for each, at depth %d, %d threads\n",
               depth, threads);
        printf("| k | ms/pass | cost (decode steps) | speedup at a=0.5 | a=0.7 | a=0.8 | a=0.9 |\n");
        printf("|---|---------|---------------------|------------------|-------|-------|-------|\n");
        for (int k = 0; k <= KMAX; k++) {
            const double cost = ms[k] / ms[0];
            printf("| %d | %7.2f | %19.2f |", k, ms[k], cost);
            for (int i = 0; i < 4; i++) printf(" %*.2f |", i ? 5 : 16, (1 - pow(RATES[i], k + 1)) / (1 - RATES[i]) / cost);
            printf("\n");
        }
    }
    wick_context_free(c);
    return 0;
}
