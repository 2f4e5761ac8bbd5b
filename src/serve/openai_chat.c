/* openai_chat.c — /v1/chat/completions: each choice's turn runs in
 * chat_run.c; this writes them in OpenAI's shapes. Whole: message {content,
 * reasoning_content, tool_calls: [{id, type, function: {name, arguments}}]}
 * with finish_reason "tool_calls" after calls. Streamed (SSE): the role
 * first, then delta.content, delta.reasoning_content and delta.tool_calls
 * chunks ({index, id, type, function: {name, arguments: ""}} when a call
 * starts, then {index, function: {arguments}} pieces), finish_reason last,
 * usage when asked. n > 1: the prompt is computed once (a prefill run whose
 * KV the prefix cache keeps), then each choice i runs with seed base + i,
 * so it equals the same request run alone with that seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "serve/chat_run.h"
#include "serve/json_out.h"
#include "serve/openai.h"

typedef struct oc_call {
    char id[48];
    char *name;
    wbuf args;
} oc_call;

/* One choice. */
typedef struct oc_choice {
    struct oc_resp *r;
    int index;
    chat_run *run;
    const job_result *res; /* at its end */
    bool ended;
    wbuf content, reasoning; /* whole: the text; stream: pieces not yet sent */
    oc_call *calls;
    int n_calls;
    int completion_tokens;   /* streamed so far (continuous usage) */
} oc_choice;

typedef struct oc_resp {
    serve_server *s;
    char id[48];
    long long created;
    bool continuous_usage;
    int phase;      /* stream: 0 = nothing sent, 1 = streaming, 2 = ended */
    bool role_chunk; /* the role chunks are being written (they carry no timings) */
    wbuf *out;      /* stream: where this pull's chunks go */
    int n;
    oc_choice *ch;
    int prompt_tokens, cached_tokens, span_cached_tokens; /* of the request (the prefill run's when n > 1) */
} oc_resp;

static const chat_run_info *info(const oc_resp *r) { return chat_run_get_info(r->ch[0].run); }

static void head(wbuf *o, const oc_resp *r, bool whole) {
    const char *model = info(r)->model;
    wbuf_printf(o, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", r->id,
                whole ? "chat.completion" : "chat.completion.chunk", r->created);
    json_put_str(o, model, strlen(model));
    wbuf_printf(o, ",\"system_fingerprint\":\"%s\"", wick_fingerprint());
}

/* span_cached_tokens (span requests only): the cached tokens that were
 * spans placed from the span cache */
static void usage_json(wbuf *o, const oc_resp *r) {
    int gen = 0;
    for (int i = 0; i < r->n; i++) gen += r->ch[i].res ? r->ch[i].res->generated_tokens : 0;
    wbuf_printf(o,
                "{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                "\"prompt_tokens_details\":{\"cached_tokens\":%d",
                r->prompt_tokens, gen, r->prompt_tokens + gen, r->cached_tokens);
    if (info(r)->spans) wbuf_printf(o, ",\"span_cached_tokens\":%d", r->span_cached_tokens);
    wbuf_puts(o, "}}");
}

/* The request's prompt counts from its first run to end (the prefill run
 * when n > 1, else the one choice). */
static void take_prompt_counts(oc_resp *r, const job_result *res) {
    r->prompt_tokens = res->prompt_tokens;
    r->cached_tokens = res->cached_tokens;
    r->span_cached_tokens = res->span_cached_tokens;
}

/* --verbose: llama-server's __verbose object, the prompt as text (special
 * tokens written out) and the first choice's content. */
static void verbose_json(wbuf *o, const oc_resp *r) {
    const struct span_req *spans;
    int n_ids = 0;
    const int32_t *ids = chat_run_prompt(r->ch[0].run, &n_ids, &spans);
    size_t len = 0;
    wick_error err;
    char *text = ids ? wick_tokenizer_decode(wick_model_tokenizer(chat_run_model(r->ch[0].run)), ids, (size_t)n_ids,
                                             false, &len, &err)
                     : NULL;
    wbuf_puts(o, ",\"__verbose\":{\"prompt\":");
    json_put_str(o, text ? text : "", text ? len : 0);
    wbuf_puts(o, ",\"content\":");
    json_put_str(o, r->ch[0].content.data ? r->ch[0].content.data : "", r->ch[0].content.len);
    wbuf_puts(o, "}");
    free(text);
}

/* ---- streamed ---- */

/* llama.cpp's timings of choice k (timings_per_token): the result's once it
 * ended, else the prompt's from its progress records and the tokens so far. */
static void timings_json(wbuf *o, const oc_choice *k) {
    int cache_n, prompt_n, predicted_n;
    double prompt_ms, predicted_ms;
    if (k->res) {
        cache_n = k->res->cached_tokens;
        prompt_n = k->res->prompt_tokens - cache_n;
        prompt_ms = k->res->prefill_ms;
        predicted_n = k->res->generated_tokens;
        predicted_ms = k->res->decode_ms;
    } else {
        const job_progress *p = chat_run_progress(k->run);
        cache_n = p->cache;
        prompt_n = p->total - p->cache;
        prompt_ms = p->time_ms;
        predicted_n = k->completion_tokens;
        predicted_ms = predicted_n ? chat_run_elapsed_ms(k->run) - prompt_ms : 0;
        if (predicted_ms < 0) predicted_ms = 0;
    }
    wbuf_printf(o,
                ",\"timings\":{\"cache_n\":%d,\"prompt_n\":%d,\"prompt_ms\":%.3f,\"prompt_per_token_ms\":%.3f,"
                "\"prompt_per_second\":%.3f,\"predicted_n\":%d,\"predicted_ms\":%.3f,\"predicted_per_token_ms\":%.3f,"
                "\"predicted_per_second\":%.3f}",
                cache_n, prompt_n, prompt_ms, prompt_n > 0 ? prompt_ms / prompt_n : 0.0,
                prompt_ms > 0 ? 1e3 * prompt_n / prompt_ms : 0.0, predicted_n, predicted_ms,
                predicted_n > 0 ? predicted_ms / predicted_n : 0.0, predicted_ms > 0 ? 1e3 * predicted_n / predicted_ms : 0.0);
}

/* return_progress: one chunk per progress record of choice k's last batch
 * (llama-server's shape: the role delta and prompt_progress). */
static void progress_chunks(oc_choice *k) {
    oc_resp *r = k->r;
    const job_batch *b = chat_run_last_batch(k->run);
    for (size_t i = 0; i < b->n_prog; i++) {
        const job_progress *p = &b->prog[i];
        wbuf_puts(r->out, "data: ");
        head(r->out, r, false);
        wbuf_printf(r->out,
                    ",\"choices\":[{\"index\":%d,\"delta\":{\"role\":\"assistant\",\"content\":null},\"logprobs\":null,"
                    "\"finish_reason\":null}],\"prompt_progress\":{\"total\":%d,\"cache\":%d,\"processed\":%d,"
                    "\"time_ms\":%.3f}}\n\n",
                    k->index, p->total, p->cache, p->processed, p->time_ms);
    }
}

/* One chunk of choice k: delta is the inside of {"delta":{...}}; logprobs of its last batch's tokens when asked. */
static void chunk(oc_choice *k, const char *delta, size_t len, bool with_logprobs, const char *finish) {
    oc_resp *r = k->r;
    wbuf *o = r->out;
    wbuf_puts(o, "data: ");
    head(o, r, false);
    wbuf_printf(o, ",\"choices\":[{\"index\":%d,\"delta\":{", k->index);
    wbuf_put(o, delta, len);
    wbuf_puts(o, "},\"logprobs\":");
    const job_batch *b = chat_run_last_batch(k->run);
    if (with_logprobs && chat_run_logprobs(k->run) >= 0 && b->n)
        oai_chat_logprobs(o, chat_run_model(k->run), b->ev, b->n);
    else wbuf_puts(o, "null");
    if (finish) wbuf_printf(o, ",\"finish_reason\":\"%s\"}]", finish);
    else wbuf_puts(o, ",\"finish_reason\":null}]");
    const chat_run_info *in = info(r);
    if (r->continuous_usage && !finish) {
        wbuf_printf(o, ",\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}", in->n_prompt,
                    k->completion_tokens, in->n_prompt + k->completion_tokens);
    } else if (in->include_usage) {
        wbuf_puts(o, ",\"usage\":null");
    }
    if (in->timings && !r->role_chunk) timings_json(o, k);
    wbuf_puts(o, "}\n\n");
}

/* Send the text gathered (reasoning first: it came first). */
static void flush_text(oc_choice *k, bool with_logprobs) {
    wbuf d = {0};
    if (k->reasoning.len) {
        wbuf_puts(&d, "\"reasoning_content\":");
        json_put_str(&d, k->reasoning.data, k->reasoning.len);
        chunk(k, d.data, d.len, false, NULL);
        wbuf_reset(&d);
        wbuf_reset(&k->reasoning);
    }
    if (k->content.len || with_logprobs) {
        wbuf_puts(&d, "\"content\":");
        json_put_str(&d, k->content.data ? k->content.data : "", k->content.len);
        chunk(k, d.data, d.len, with_logprobs, NULL);
        wbuf_reset(&k->content);
    }
    wbuf_free(&d);
}

static int stream_ev(void *user, const tool_ev *ev) {
    oc_choice *k = user;
    wbuf d = {0};
    switch (ev->kind) {
    case TOOL_EV_CONTENT: wbuf_put(&k->content, ev->text, ev->len); break;
    case TOOL_EV_REASONING:
        if (k->content.len) flush_text(k, false);
        wbuf_put(&k->reasoning, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_BEGIN:
        flush_text(k, false);
        wbuf_printf(&d, "\"tool_calls\":[{\"index\":%d,\"id\":", ev->index);
        json_put_str(&d, ev->id, strlen(ev->id));
        wbuf_puts(&d, ",\"type\":\"function\",\"function\":{\"name\":");
        json_put_str(&d, ev->name, strlen(ev->name));
        wbuf_puts(&d, ",\"arguments\":\"\"}}]");
        chunk(k, d.data, d.len, false, NULL);
        break;
    case TOOL_EV_CALL_ARGS:
        if (!ev->len) break;
        wbuf_printf(&d, "\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":", ev->index);
        json_put_str(&d, ev->text, ev->len);
        wbuf_puts(&d, "}}]");
        chunk(k, d.data, d.len, false, NULL);
        break;
    case TOOL_EV_CALL_END: break;
    }
    wbuf_free(&d);
    return 0;
}

static void error_event(wbuf *o, const fld_error *e) {
    wbuf_puts(o, "data: {\"error\":{\"message\":");
    json_put_str(o, e->msg, strlen(e->msg));
    wbuf_printf(o, ",\"type\":\"%s\",\"param\":null,\"code\":%d}}\n\n", e->status >= 500 ? "server_error" : "invalid_request_error",
                e->status);
}

static int stream_pull(void *ctx, wbuf *o, int timeout_ms) {
    oc_resp *r = ctx;
    if (r->phase == 2) return 0;
    r->out = o;
    if (r->phase == 0) {
        r->phase = 1;
        static const char role[] = "\"role\":\"assistant\",\"content\":null";
        r->role_chunk = true;
        for (int i = 0; i < r->n; i++) chunk(&r->ch[i], role, sizeof role - 1, false, NULL);
        r->role_chunk = false;
        return 1;
    }
    bool waited = false, all_ended = true;
    for (int i = 0; i < r->n; i++) {
        oc_choice *k = &r->ch[i];
        if (k->ended) continue;
        fld_error e = {0};
        const int rc = chat_run_pull(k->run, waited ? 0 : timeout_ms, stream_ev, k, &k->res, &e);
        waited = true;
        const job_batch *b = chat_run_last_batch(k->run);
        k->completion_tokens += (int)b->n;
        const bool lp = chat_run_logprobs(k->run) >= 0 && b->n;
        if (info(r)->progress) progress_chunks(k);
        if (rc == 1) {
            flush_text(k, lp);
            all_ended = false;
            continue;
        }
        k->ended = true;
        if (rc < 0) { /* the stream ends with the error */
            flush_text(k, false);
            error_event(o, &e);
            r->phase = 2;
            wbuf_puts(o, "data: [DONE]\n\n");
            return 0;
        }
        if (r->n == 1) take_prompt_counts(r, k->res);
        flush_text(k, lp);
        chunk(k, "", 0, false, chat_run_finish_reason(k->run, k->res));
    }
    if (!all_ended) return 1;
    r->phase = 2;
    if (info(r)->include_usage) {
        wbuf_puts(o, "data: ");
        head(o, r, false);
        wbuf_puts(o, ",\"choices\":[],\"usage\":");
        usage_json(o, r);
        if (info(r)->timings) timings_json(o, &r->ch[0]);
        wbuf_puts(o, "}\n\n");
    }
    wbuf_puts(o, "data: [DONE]\n\n");
    return 0;
}

static void resp_free(oc_resp *r) {
    for (int i = 0; i < r->n; i++) {
        oc_choice *k = &r->ch[i];
        chat_run_free(k->run);
        wbuf_free(&k->content);
        wbuf_free(&k->reasoning);
        for (int j = 0; j < k->n_calls; j++) {
            free(k->calls[j].name);
            wbuf_free(&k->calls[j].args);
        }
        free(k->calls);
    }
    free(r->ch);
    free(r);
}

static void stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    resp_free(ctx);
}

/* ---- whole ---- */

static int whole_ev(void *user, const tool_ev *ev) {
    oc_choice *k = user;
    switch (ev->kind) {
    case TOOL_EV_CONTENT: wbuf_put(&k->content, ev->text, ev->len); break;
    case TOOL_EV_REASONING: wbuf_put(&k->reasoning, ev->text, ev->len); break;
    case TOOL_EV_CALL_BEGIN: {
        oc_call *c = realloc(k->calls, sizeof *c * (size_t)(k->n_calls + 1));
        if (!c) return 1;
        k->calls = c;
        c = &k->calls[k->n_calls++];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "%s", ev->id);
        c->name = strdup(ev->name);
        break;
    }
    case TOOL_EV_CALL_ARGS: break;
    case TOOL_EV_CALL_END:
        if (ev->index < k->n_calls) {
            wbuf_reset(&k->calls[ev->index].args);
            wbuf_put(&k->calls[ev->index].args, ev->text, ev->len);
        }
        break;
    }
    return 0;
}

static void choice_json(const oc_choice *k, const job_batch *acc, wbuf *o) {
    wbuf_printf(o, "%s{\"index\":%d,\"message\":{\"role\":\"assistant\",\"content\":", k->index ? "," : "", k->index);
    if (k->n_calls && !k->content.len) wbuf_puts(o, "null");
    else json_put_str(o, k->content.data ? k->content.data : "", k->content.len);
    if (k->reasoning.len) {
        wbuf_puts(o, ",\"reasoning_content\":");
        json_put_str(o, k->reasoning.data, k->reasoning.len);
    }
    if (k->n_calls) {
        wbuf_puts(o, ",\"tool_calls\":[");
        for (int i = 0; i < k->n_calls; i++) {
            const oc_call *c = &k->calls[i];
            wbuf_puts(o, i ? ",{\"id\":" : "{\"id\":");
            json_put_str(o, c->id, strlen(c->id));
            wbuf_puts(o, ",\"type\":\"function\",\"function\":{\"name\":");
            json_put_str(o, c->name ? c->name : "", c->name ? strlen(c->name) : 0);
            wbuf_puts(o, ",\"arguments\":");
            json_put_str(o, c->args.len ? c->args.data : "{}", c->args.len ? c->args.len : 2);
            wbuf_puts(o, "}}");
        }
        wbuf_puts(o, "]");
    }
    wbuf_puts(o, "},\"logprobs\":");
    if (acc) oai_chat_logprobs(o, chat_run_model(k->run), acc->ev, acc->n);
    else wbuf_puts(o, "null");
    wbuf_printf(o, ",\"finish_reason\":\"%s\"}", chat_run_finish_reason(k->run, k->res));
}

/* Run choice k to its end (its tokens into acc when logprobs are asked). */
static int run_whole(oc_choice *k, http_call *c, job_batch *acc, fld_error *e) {
    if (chat_run_logprobs(k->run) < 0) return chat_run_collect(k->run, c, whole_ev, k, &k->res, e);
    int rc;
    while ((rc = chat_run_pull(k->run, 200, whole_ev, k, &k->res, e)) == 1) {
        gen_append(acc, chat_run_last_batch(k->run));
        if (http_client_gone(c)) return fld_fail(e, 499, NULL, "client closed the connection");
    }
    if (rc == 0) gen_append(acc, chat_run_last_batch(k->run));
    return rc;
}

/* n > 1: the prompt once, its KV left in the prefix cache for the choices;
 * *seed gets the request's seed (the body's, or the one drawn). */
static int prefill_once(serve_server *s, http_call *c, const cJSON *b, oc_resp *r, unsigned long long *seed,
                        fld_error *e) {
    chat_run *pre = NULL;
    const chat_run_opts po = {.prefill_only = true};
    if (chat_run_start_opts(s, b, &po, &pre, e) < 0) return -1;
    *seed = chat_run_get_info(pre)->seed;
    const job_result *res = NULL;
    int rc = chat_run_collect(pre, c, NULL, NULL, &res, e);
    if (rc == 0) take_prompt_counts(r, res);
    chat_run_free(pre);
    return rc;
}

void oai_chat_run(serve_server *s, http_call *c, cJSON *b, bool prefill_only) {
    fld_error e = {0};
    oc_resp *r = calloc(1, sizeof *r);
    const cJSON *nj = cJSON_GetObjectItemCaseSensitive(b, "n");
    const int n = cJSON_IsNumber(nj) && nj->valuedouble >= 2 && nj->valuedouble <= 4096 && !prefill_only ? (int)nj->valuedouble : 1;
    if (!r || !(r->ch = calloc((size_t)n, sizeof *r->ch))) {
        free(r);
        fld_fail(&e, 500, NULL, "out of memory");
        reply_openai_error(c, &e);
        return;
    }
    r->s = s;
    r->n = n;
    r->created = (long long)time(NULL);
    unsigned long long seed = 0;
    int rc = n > 1 ? prefill_once(s, c, b, r, &seed, &e) : 0;
    for (int i = 0; i < n && rc == 0; i++) {
        oc_choice *k = &r->ch[i];
        k->r = r;
        k->index = i;
        const chat_run_opts o = {.prefill_only = prefill_only, .seed_set = n > 1, .seed = seed + (unsigned long long)i,
                                 .prompt_shared = n > 1};
        rc = chat_run_start_opts(s, b, &o, &k->run, &e);
    }
    if (rc < 0) {
        r->n = 0;
        for (int i = 0; i < n; i++) chat_run_free(r->ch[i].run);
        resp_free(r);
        reply_openai_error(c, &e);
        return;
    }
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(b, "stream_options");
    r->continuous_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(so, "continuous_usage_stats"));
    reply_new_id(s, "chatcmpl-", r->id, sizeof r->id);
    const chat_run_info *in = info(r);
    http_note(c, "model=%s prompt=%d n=%d", in->model, in->n_prompt, n);
    if (in->stream) {
        http_reply_stream(c, 200, "text/event-stream", stream_pull, stream_fin, r);
        return;
    }
    job_batch *acc = calloc((size_t)n, sizeof *acc);
    for (int i = 0; i < n && rc == 0; i++) {
        if (!acc) rc = fld_fail(&e, 500, NULL, "out of memory");
        else rc = run_whole(&r->ch[i], c, &acc[i], &e);
        if (rc == 0 && n == 1) take_prompt_counts(r, r->ch[i].res);
    }
    if (rc < 0) {
        reply_openai_error(c, &e);
    } else {
        wbuf o = {0};
        head(&o, r, true);
        wbuf_puts(&o, ",\"choices\":[");
        for (int i = 0; i < n; i++) choice_json(&r->ch[i], chat_run_logprobs(r->ch[i].run) >= 0 ? &acc[i] : NULL, &o);
        wbuf_puts(&o, "],\"usage\":");
        usage_json(&o, r);
        if (r->s->cfg.verbose) verbose_json(&o, r);
        wbuf_puts(&o, "}");
        http_note(c, "model=%s prompt=%d cached=%d n=%d", in->model, r->prompt_tokens, r->cached_tokens, n);
        http_reply_wbuf(c, 200, "application/json", &o);
    }
    for (int i = 0; acc && i < n; i++) job_batch_free(&acc[i]);
    free(acc);
    resp_free(r);
}

void oai_chat(serve_server *s, http_call *c, cJSON *b) { oai_chat_run(s, c, b, false); }
