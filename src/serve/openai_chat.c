/* openai_chat.c — /v1/chat/completions: the turn runs in chat_run.c; this
 * writes it in OpenAI's shapes. Whole: message {content, reasoning_content,
 * tool_calls: [{id, type, function: {name, arguments}}]} with finish_reason
 * "tool_calls" after calls. Streamed (SSE): the role first, then
 * delta.content, delta.reasoning_content and delta.tool_calls chunks ({index,
 * id, type, function: {name, arguments: ""}} when a call starts, then
 * {index, function: {arguments}} pieces), finish_reason last, usage when
 * asked. */
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

typedef struct oc_resp {
    serve_server *s;
    chat_run *run;
    char id[48];
    long long created;
    bool continuous_usage;
    int phase; /* stream: 0 = nothing sent, 1 = streaming, 2 = ended */
    wbuf *out; /* stream: where this pull's chunks go */
    wbuf content, reasoning; /* whole: the text; stream: this pull's pieces not yet sent */
    oc_call *calls;
    int n_calls;
    int completion_tokens; /* streamed so far (continuous usage) */
} oc_resp;

static void head(wbuf *o, const oc_resp *r, bool whole) {
    const chat_run_info *in = chat_run_get_info(r->run);
    wbuf_printf(o, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", r->id,
                whole ? "chat.completion" : "chat.completion.chunk", r->created);
    json_put_str(o, in->model, strlen(in->model));
    wbuf_puts(o, ",\"system_fingerprint\":\"wick\"");
}

/* span_cached_tokens (span requests only): the cached tokens that were
 * spans placed from the span cache */
static void usage_json(wbuf *o, const oc_resp *r, const job_result *res) {
    wbuf_printf(o,
                "{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                "\"prompt_tokens_details\":{\"cached_tokens\":%d",
                res->prompt_tokens, res->generated_tokens, res->prompt_tokens + res->generated_tokens,
                res->cached_tokens);
    if (chat_run_get_info(r->run)->spans) wbuf_printf(o, ",\"span_cached_tokens\":%d", res->span_cached_tokens);
    wbuf_puts(o, "}}");
}

/* ---- streamed ---- */

/* One chunk: delta is the inside of {"delta":{...}}; logprobs of the pull's tokens when asked. */
static void chunk(oc_resp *r, const char *delta, size_t len, bool with_logprobs, const char *finish) {
    wbuf *o = r->out;
    wbuf_puts(o, "data: ");
    head(o, r, false);
    wbuf_puts(o, ",\"choices\":[{\"index\":0,\"delta\":{");
    wbuf_put(o, delta, len);
    wbuf_puts(o, "},\"logprobs\":");
    const job_batch *b = chat_run_last_batch(r->run);
    if (with_logprobs && chat_run_logprobs(r->run) >= 0 && b->n)
        oai_chat_logprobs(o, chat_run_model(r->run), b->ev, b->n);
    else wbuf_puts(o, "null");
    if (finish) wbuf_printf(o, ",\"finish_reason\":\"%s\"}]", finish);
    else wbuf_puts(o, ",\"finish_reason\":null}]");
    const chat_run_info *in = chat_run_get_info(r->run);
    if (r->continuous_usage && !finish) {
        wbuf_printf(o, ",\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}", in->n_prompt,
                    r->completion_tokens, in->n_prompt + r->completion_tokens);
    } else if (in->include_usage) {
        wbuf_puts(o, ",\"usage\":null");
    }
    wbuf_puts(o, "}\n\n");
}

/* Send the text gathered (reasoning first: it came first). */
static void flush_text(oc_resp *r, bool with_logprobs) {
    wbuf d = {0};
    if (r->reasoning.len) {
        wbuf_puts(&d, "\"reasoning_content\":");
        json_put_str(&d, r->reasoning.data, r->reasoning.len);
        chunk(r, d.data, d.len, false, NULL);
        wbuf_reset(&d);
        wbuf_reset(&r->reasoning);
    }
    if (r->content.len || with_logprobs) {
        wbuf_puts(&d, "\"content\":");
        json_put_str(&d, r->content.data ? r->content.data : "", r->content.len);
        chunk(r, d.data, d.len, with_logprobs, NULL);
        wbuf_reset(&r->content);
    }
    wbuf_free(&d);
}

static int stream_ev(void *user, const tool_ev *ev) {
    oc_resp *r = user;
    wbuf d = {0};
    switch (ev->kind) {
    case TOOL_EV_CONTENT: wbuf_put(&r->content, ev->text, ev->len); break;
    case TOOL_EV_REASONING:
        if (r->content.len) flush_text(r, false);
        wbuf_put(&r->reasoning, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_BEGIN:
        flush_text(r, false);
        wbuf_printf(&d, "\"tool_calls\":[{\"index\":%d,\"id\":", ev->index);
        json_put_str(&d, ev->id, strlen(ev->id));
        wbuf_puts(&d, ",\"type\":\"function\",\"function\":{\"name\":");
        json_put_str(&d, ev->name, strlen(ev->name));
        wbuf_puts(&d, ",\"arguments\":\"\"}}]");
        chunk(r, d.data, d.len, false, NULL);
        break;
    case TOOL_EV_CALL_ARGS:
        if (!ev->len) break;
        wbuf_printf(&d, "\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":", ev->index);
        json_put_str(&d, ev->text, ev->len);
        wbuf_puts(&d, "}}]");
        chunk(r, d.data, d.len, false, NULL);
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
        static const char role[] = "\"role\":\"assistant\",\"content\":\"\"";
        chunk(r, role, sizeof role - 1, false, NULL);
        return 1;
    }
    const job_result *res = NULL;
    fld_error e = {0};
    const int rc = chat_run_pull(r->run, timeout_ms, stream_ev, r, &res, &e);
    const job_batch *b = chat_run_last_batch(r->run);
    r->completion_tokens += (int)b->n;
    const bool lp = chat_run_logprobs(r->run) >= 0 && b->n;
    if (rc == 1) {
        flush_text(r, lp);
        return 1;
    }
    r->phase = 2;
    if (rc < 0) {
        flush_text(r, false);
        error_event(o, &e);
    } else {
        flush_text(r, lp);
        chunk(r, "", 0, false, chat_run_finish_reason(r->run, res));
        if (chat_run_get_info(r->run)->include_usage) {
            wbuf_puts(o, "data: ");
            head(o, r, false);
            wbuf_puts(o, ",\"choices\":[],\"usage\":");
            usage_json(o, r, res);
            wbuf_puts(o, "}\n\n");
        }
    }
    wbuf_puts(o, "data: [DONE]\n\n");
    return 0;
}

static void resp_free(oc_resp *r) {
    chat_run_free(r->run);
    wbuf_free(&r->content);
    wbuf_free(&r->reasoning);
    for (int i = 0; i < r->n_calls; i++) {
        free(r->calls[i].name);
        wbuf_free(&r->calls[i].args);
    }
    free(r->calls);
    free(r);
}

static void stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    resp_free(ctx);
}

/* ---- whole ---- */

static int whole_ev(void *user, const tool_ev *ev) {
    oc_resp *r = user;
    switch (ev->kind) {
    case TOOL_EV_CONTENT: wbuf_put(&r->content, ev->text, ev->len); break;
    case TOOL_EV_REASONING: wbuf_put(&r->reasoning, ev->text, ev->len); break;
    case TOOL_EV_CALL_BEGIN: {
        oc_call *c = realloc(r->calls, sizeof *c * (size_t)(r->n_calls + 1));
        if (!c) return 1;
        r->calls = c;
        c = &r->calls[r->n_calls++];
        memset(c, 0, sizeof *c);
        snprintf(c->id, sizeof c->id, "%s", ev->id);
        c->name = strdup(ev->name);
        break;
    }
    case TOOL_EV_CALL_ARGS:
        if (ev->index < r->n_calls) wbuf_put(&r->calls[ev->index].args, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_END:
        if (ev->index < r->n_calls) {
            wbuf_reset(&r->calls[ev->index].args);
            wbuf_put(&r->calls[ev->index].args, ev->text, ev->len);
        }
        break;
    }
    return 0;
}

static void whole_json(oc_resp *r, const job_result *res, const job_batch *acc, wbuf *o) {
    head(o, r, true);
    wbuf_puts(o, ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":");
    if (r->n_calls && !r->content.len) wbuf_puts(o, "null");
    else json_put_str(o, r->content.data ? r->content.data : "", r->content.len);
    if (r->reasoning.len) {
        wbuf_puts(o, ",\"reasoning_content\":");
        json_put_str(o, r->reasoning.data, r->reasoning.len);
    }
    if (r->n_calls) {
        wbuf_puts(o, ",\"tool_calls\":[");
        for (int i = 0; i < r->n_calls; i++) {
            const oc_call *c = &r->calls[i];
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
    if (acc) oai_chat_logprobs(o, chat_run_model(r->run), acc->ev, acc->n);
    else wbuf_puts(o, "null");
    wbuf_printf(o, ",\"finish_reason\":\"%s\"}],\"usage\":", chat_run_finish_reason(r->run, res));
    usage_json(o, r, res);
    wbuf_puts(o, "}");
}

void oai_chat_run(serve_server *s, http_call *c, cJSON *b, bool prefill_only) {
    fld_error e = {0};
    chat_run *run = NULL;
    if ((prefill_only ? chat_run_start_prefill(s, b, &run, &e) : chat_run_start(s, b, &run, &e)) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    oc_resp *r = calloc(1, sizeof *r);
    if (!r) {
        chat_run_free(run);
        fld_fail(&e, 500, NULL, "out of memory");
        reply_openai_error(c, &e);
        return;
    }
    r->s = s;
    r->run = run;
    r->created = (long long)time(NULL);
    const cJSON *so = cJSON_GetObjectItemCaseSensitive(b, "stream_options");
    r->continuous_usage = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(so, "continuous_usage_stats"));
    reply_new_id(s, "chatcmpl-", r->id, sizeof r->id);
    const chat_run_info *in = chat_run_get_info(run);
    http_note(c, "model=%s prompt=%d", in->model, in->n_prompt);
    if (in->stream) {
        http_reply_stream(c, 200, "text/event-stream", stream_pull, stream_fin, r);
        return;
    }
    const job_result *res = NULL;
    job_batch acc = {0};
    int rc;
    const bool lp = chat_run_logprobs(run) >= 0;
    if (lp) { /* gather the tokens too */
        while ((rc = chat_run_pull(run, 200, whole_ev, r, &res, &e)) == 1) {
            gen_append(&acc, chat_run_last_batch(run));
            if (http_client_gone(c)) {
                fld_fail(&e, 499, NULL, "client closed the connection");
                rc = -1;
                break;
            }
        }
        if (rc == 0) gen_append(&acc, chat_run_last_batch(run));
    } else {
        rc = chat_run_collect(run, c, whole_ev, r, &res, &e);
    }
    if (rc < 0) {
        reply_openai_error(c, &e);
    } else {
        wbuf o = {0};
        whole_json(r, res, lp ? &acc : NULL, &o);
        http_note(c, "model=%s prompt=%d cached=%d gen=%d", in->model, res->prompt_tokens, res->cached_tokens,
                  res->generated_tokens);
        http_reply_wbuf(c, 200, "application/json", &o);
    }
    job_batch_free(&acc);
    resp_free(r);
}

void oai_chat(serve_server *s, http_call *c, cJSON *b) { oai_chat_run(s, c, b, false); }
