/* cmd_generate.c — `wick generate`: prompt in, generated text streamed out
 * (or one JSON object with --json). */
#include <cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "core/clock.h"
#include "cli/cli.h"
#include "cli/span_args.h"
#include "cli/grammar_args.h"
#include "cli/spec_args.h"

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
    if (len > SIZE_MAX - 1 - b->len || !GROW_ARRAY(b->data, b->len + len + 1, &b->cap)) return false;
    memcpy(b->data + b->len, text, len);
    b->len += len;
    b->data[b->len] = 0;
    return true;
}

static double rate(int n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; }

static void print_json(const text_buf *b, const int32_t *out, int n_out, wick_finish finish,
                       const wick_timings *tm, double load_ms, const cli_span_req *spans) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "text", b->data ? b->data : "");
    cJSON *toks = cJSON_AddArrayToObject(o, "tokens");
    for (int i = 0; i < n_out; i++) cJSON_AddItemToArray(toks, cJSON_CreateNumber(out[i]));
    cJSON_AddNumberToObject(o, "prompt_tokens", tm->prompt_tokens);
    if (spans) {
        cJSON_AddNumberToObject(o, "cached_tokens", tm->cached_tokens);
        cJSON_AddNumberToObject(o, "span_cached_tokens", tm->span_cached_tokens);
        cli_span_segments_json(o, spans);
    }
    cJSON_AddStringToObject(o, "finish_reason", finish == WICK_FINISH_STOP ? "stop" : "length");
    cJSON *t = cJSON_AddObjectToObject(o, "timings");
    cJSON_AddNumberToObject(t, "load_ms", load_ms);
    cJSON_AddNumberToObject(t, "prefill_ms", tm->prefill_ms);
    cJSON_AddNumberToObject(t, "ttft_ms", tm->ttft_ms);
    cJSON_AddNumberToObject(t, "decode_ms", tm->decode_ms);
    cJSON_AddNumberToObject(t, "prefill_tok_s", rate(tm->prefill_tokens, tm->prefill_ms));
    cJSON_AddNumberToObject(t, "decode_tok_s", rate(tm->generated_tokens, tm->decode_ms));
    if (tm->spec_passes) {
        cJSON *sp = cJSON_AddObjectToObject(o, "speculative");
        cJSON_AddNumberToObject(sp, "draft_tokens", tm->draft_tokens);
        cJSON_AddNumberToObject(sp, "accepted_tokens", tm->accepted_tokens);
        cJSON_AddNumberToObject(sp, "verify_passes", tm->spec_passes);
        cJSON_AddNumberToObject(sp, "acceptance_rate", tm->draft_tokens ? (double)tm->accepted_tokens / tm->draft_tokens : 0);
    }
    cli_print_json(o);
}

int cmd_generate(int argc, char **argv) {
    const char *model = NULL, *prompt = NULL, *file = NULL;
    int n_predict = 128, stream_every = 1;
    cli_sampling sf;
    cli_sampling_init(&sf);
    cli_runtime rt;
    cli_runtime_init(&rt);
    bool json = false, chat = false;
    const char *system = NULL, *template_name = NULL;
    cli_list stops = {.n = 0};
    cli_opt opts[64] = {
        {"--model", "-m", OPT_STR, &model, NULL},
        {"--prompt", "-p", OPT_STR, &prompt, NULL},
        {"--file", "-f", OPT_STR, &file, NULL},
        {"--n-predict", "-n", OPT_INT, &n_predict, NULL},
        {"--stop", NULL, OPT_LIST, &stops, NULL},
        {"--stream-every", NULL, OPT_INT, &stream_every, NULL},
        {"--json", NULL, OPT_FLAG, &json, NULL},
        {"--chat", NULL, OPT_FLAG, &chat, NULL},
        {"--system", NULL, OPT_STR, &system, NULL},
        {"--template", NULL, OPT_STR, &template_name, NULL},
    };
    cli_span_args sa;
    cli_spec_args spa;
    cli_grammar_args ga;
    int n_opts = cli_spec_opts(opts, cli_span_opts(opts, cli_runtime_opts(opts, cli_sampling_opts(opts, 10, &sf), &rt), &sa), &spa);
    n_opts = cli_grammar_opts(opts, n_opts, &ga);
    const int prc = cli_parse("generate", argc, argv, opts, n_opts);
    if (prc) return prc < 0;
    if (cli_runtime_check("generate", &rt) < 0 || cli_sampling_check("generate", &sf) < 0) return 1;
    if (cli_span_check("generate", &sa) < 0 || cli_grammar_check("generate", &ga) < 0) return 1;
    const bool spans = cli_span_given(&sa);
    if (spans && chat) return cli_error("generate: span requests (--span) do not combine with --chat; put the template's text in --prefix and -p");
    rt.no_span_cache = sa.no_cache;
    if (n_predict < -1) return cli_error("generate: -n must be >= 0 (or -1 for the rest of the context)");
    if (stream_every < 1) return cli_error("generate: --stream-every must be >= 1");
    if ((system || template_name) && !chat) return cli_error("generate: --system and --template need --chat");
    for (int i = 0; i < stops.n; i++)
        if (!*stops.v[i]) return cli_error("generate: --stop needs a non-empty string");
    size_t len;
    char *text = cli_prompt("generate", prompt, file, &len);
    if (!text) return 1;

    double t0 = wick_now_ms();
    wick_model *m = cli_runtime_model("generate", model, &rt);
    if (!m) {
        free(text);
        return 1;
    }
    int rc = 1;
    int32_t *ids = NULL, *out = NULL;
    int n_ids = 0, n_out = 0;
    cli_span_req sr = {0};
    wick_context *c = NULL;
    text_buf buf = {.json = json};
    wick_error err;
    if (cli_spec_build("generate", &spa, m, rt.dtype) < 0 || cli_grammar_build("generate", &ga, m) < 0) goto done;
    if (!(c = cli_runtime_context(m, &rt))) goto done;
    if (chat) {
        /* The prompt is one user message rendered with the chat template, whose
         * text already holds any BOS the model wants. */
        wick_chat *conv = wick_chat_new(c, system, template_name, -1, &err);
        char *rendered = conv ? wick_chat_prompt(conv, text, &err) : NULL;
        wick_chat_free(conv);
        if (!rendered) {
            cli_error("%s", err.msg);
            goto done;
        }
        free(text);
        text = rendered;
        len = strlen(text);
    }
    if (spans ? cli_span_build("generate", m, &sa, text, len, &sr) < 0 : cli_tokenize(m, text, len, !chat, &ids, &n_ids) < 0)
        goto done;
    double load_ms = wick_now_ms() - t0;
    cli_sampling_apply_model(&sf, m);
    wick_generate_params gp = {.n_predict = n_predict, .sampling = sf.v, .on_token = on_token, .user = &buf,
                               .stop = stops.v, .n_stop = stops.n, .stream_every = stream_every,
                               .new_message = chat, .spans = spans ? &sr.v : NULL,
                               .spec = cli_spec_given(&spa) ? &spa.v : NULL, .grammar = ga.g};
    wick_finish finish;
    wick_timings tm;
    if (wick_generate(c, ids, n_ids, &gp, &out, &n_out, &finish, &tm, &err) < 0) {
        cli_error("%s", err.msg);
        goto done;
    }
    cli_print_profile(c, 0, n_out); /* WICK_PROFILE=1 */
    if (json)
        print_json(&buf, out, n_out, finish, &tm, load_ms, spans ? &sr : NULL);
    else if (isatty(STDOUT_FILENO))
        fputc('\n', stdout); /* piped output is exactly the generated text */
    rc = 0;
done:
    free(buf.data);
    free(out);
    free(ids);
    free(text);
    cli_span_free(&sr);
    wick_context_free(c);
    cli_spec_free(&spa);
    cli_grammar_free(&ga);
    wick_model_free(m);
    return rc;
}
