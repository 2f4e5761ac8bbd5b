/* cmd_generate.c — `wick generate`: prompt in, generated text streamed out
 * (or one JSON object with --json). */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

typedef struct text_buf {
    char *data;
    size_t len, cap;
    bool json;
} text_buf;

static bool on_token(int32_t token, const char *text, size_t len, void *user) {
    (void)token;
    text_buf *b = user;
    if (!b->json) {
        fwrite(text, 1, len, stdout);
        fflush(stdout);
        return true;
    }
    if (b->len + len + 1 > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 4096) + len;
        char *d = realloc(b->data, cap);
        if (!d) return false;
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = 0;
    return true;
}

static double ms_since(const struct timespec *t0) {
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static double rate(int n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; }

static void print_json(const text_buf *b, const int32_t *out, int n_out, wick_finish finish,
                       const wick_timings *tm, double load_ms) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", b->data ? b->data : "");
    cJSON *toks = cJSON_AddArrayToObject(o, "tokens");
    for (int i = 0; i < n_out; i++) cJSON_AddItemToArray(toks, cJSON_CreateNumber(out[i]));
    cJSON_AddNumberToObject(o, "prompt_tokens", tm->prompt_tokens);
    cJSON_AddStringToObject(o, "finish_reason", finish == WICK_FINISH_STOP ? "stop" : "length");
    cJSON *t = cJSON_AddObjectToObject(o, "timings");
    cJSON_AddNumberToObject(t, "load_ms", load_ms);
    cJSON_AddNumberToObject(t, "prefill_ms", tm->prefill_ms);
    cJSON_AddNumberToObject(t, "ttft_ms", tm->ttft_ms);
    cJSON_AddNumberToObject(t, "decode_ms", tm->decode_ms);
    cJSON_AddNumberToObject(t, "prefill_tok_s", rate(tm->prefill_tokens, tm->prefill_ms));
    cJSON_AddNumberToObject(t, "decode_tok_s", rate(tm->generated_tokens, tm->decode_ms));
    char *s = cJSON_PrintUnformatted(o);
    if (s) puts(s);
    free(s);
    cJSON_Delete(o);
}

/* Sampling: library defaults, then generation_config.json, then flags. */
typedef struct sampling_flags {
    wick_sampling v;
    bool temp, top_k, top_p, min_p, rep, rep_n, pres, freq;
} sampling_flags;

static void apply_model_defaults(const wick_model *m, sampling_flags *f) {
    wick_sampling d;
    if (!wick_model_sampling_defaults(m, &d)) return;
    if (!f->temp) f->v.temperature = d.temperature;
    if (!f->top_k) f->v.top_k = d.top_k;
    if (!f->top_p) f->v.top_p = d.top_p;
    if (!f->min_p) f->v.min_p = d.min_p;
    if (!f->rep) f->v.repeat_penalty = d.repeat_penalty;
}

int cmd_generate(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *file = NULL;
    int n_predict = 128, threads = 0, ctx = 0, chunk = -1, stream_every = 1;
    sampling_flags sf = {.v = wick_sampling_default()};
    sf.v.seed = (uint64_t)time(NULL);
    bool json = false, chunk_set = false;
    cli_list stops = {.n = 0};
    const cli_opt opts[] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--prompt", "-p", OPT_STR, &prompt, NULL},
        {"--file", "-f", OPT_STR, &file, NULL},
        {"--n-predict", "-n", OPT_INT, &n_predict, NULL},
        {"--temp", NULL, OPT_FLOAT, &sf.v.temperature, &sf.temp},
        {"--top-k", NULL, OPT_INT, &sf.v.top_k, &sf.top_k},
        {"--top-p", NULL, OPT_FLOAT, &sf.v.top_p, &sf.top_p},
        {"--min-p", NULL, OPT_FLOAT, &sf.v.min_p, &sf.min_p},
        {"--repeat-penalty", NULL, OPT_FLOAT, &sf.v.repeat_penalty, &sf.rep},
        {"--repeat-last-n", NULL, OPT_INT, &sf.v.repeat_last_n, &sf.rep_n},
        {"--presence-penalty", NULL, OPT_FLOAT, &sf.v.presence_penalty, &sf.pres},
        {"--frequency-penalty", NULL, OPT_FLOAT, &sf.v.frequency_penalty, &sf.freq},
        {"--seed", NULL, OPT_U64, &sf.v.seed, NULL},
        {"--stop", NULL, OPT_LIST, &stops, NULL},
        {"--stream-every", NULL, OPT_INT, &stream_every, NULL},
        {"--threads", "-t", OPT_INT, &threads, NULL},
        {"--ctx", "-c", OPT_INT, &ctx, NULL},
        {"--prefill-chunk", NULL, OPT_INT, &chunk, &chunk_set},
        {"--json", NULL, OPT_FLAG, &json, NULL},
    };
    if (cli_parse("generate", argc, argv, opts, sizeof opts / sizeof opts[0]) < 0) return 1;
    if (!chunk_set && getenv("WICK_PREFILL_CHUNK")) {
        char *end;
        long v = strtol(getenv("WICK_PREFILL_CHUNK"), &end, 10);
        if (*end || v < 0 || v > 1 << 20) return cli_error("generate: invalid WICK_PREFILL_CHUNK \"%s\"", getenv("WICK_PREFILL_CHUNK"));
        chunk = (int)v;
    }
    if (n_predict < -1) return cli_error("generate: -n must be >= 0 (or -1 for the rest of the context)");
    if (threads < 0 || ctx < 0 || chunk < -1 || stream_every < 1)
        return cli_error("generate: -t, --ctx, --prefill-chunk must not be negative and --stream-every must be >= 1");
    const wick_sampling *v = &sf.v;
    if (v->temperature < 0 || v->top_k < 0 || v->top_p < 0 || v->top_p > 1 || v->min_p < 0 || v->min_p > 1 ||
        v->repeat_penalty < 0 || v->repeat_last_n < -1)
        return cli_error("generate: sampling values out of range (--temp, --top-k, --repeat-penalty >= 0; --top-p, --min-p in [0, 1]; --repeat-last-n >= -1)");
    for (int i = 0; i < stops.n; i++)
        if (!*stops.v[i]) return cli_error("generate: --stop needs a non-empty string");
    size_t len;
    char *text = cli_prompt("generate", prompt, file, &len);
    if (!text) return 1;

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    wick_model *m = cli_load_model("generate", model);
    if (!m) {
        free(text);
        return 1;
    }
    int rc = 1;
    int32_t *ids = NULL, *out = NULL;
    int n_ids = 0, n_out = 0;
    wick_context *c = NULL;
    text_buf buf = {.json = json};
    if (cli_tokenize(m, text, len, true, &ids, &n_ids) < 0) goto done;
    wick_error err;
    wick_context_params cp = {.n_ctx = ctx, .n_seq = 1, .n_threads = threads, .prefill_chunk = chunk};
    c = wick_context_new(m, &cp, &err);
    if (!c) {
        cli_error("%s", err.msg);
        goto done;
    }
    double load_ms = ms_since(&t0);
    apply_model_defaults(m, &sf);
    wick_generate_params gp = {.n_predict = n_predict, .sampling = sf.v, .on_token = on_token, .user = &buf,
                               .stop = stops.v, .n_stop = stops.n, .stream_every = stream_every};
    wick_finish finish;
    wick_timings tm;
    if (wick_generate(c, ids, n_ids, &gp, &out, &n_out, &finish, &tm, &err) < 0) {
        cli_error("%s", err.msg);
        goto done;
    }
    if (json)
        print_json(&buf, out, n_out, finish, &tm, load_ms);
    else if (isatty(STDOUT_FILENO))
        fputc('\n', stdout); /* piped output is exactly the generated text */
    rc = 0;
done:
    free(buf.data);
    free(out);
    free(ids);
    free(text);
    wick_context_free(c);
    wick_model_free(m);
    return rc;
}
