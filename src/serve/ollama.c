/* ollama.c — Ollama-compatible generation routes: /api/generate and
 * /api/chat, NDJSON-streamed (the default) or whole, with Ollama's final
 * object (done_reason, durations in nanoseconds, counts, context), model
 * load/unload requests (an empty prompt or message list) and keep_alive.
 * The output goes through the model family's parser (tool_parse.h):
 * thinking in "thinking", tool calls in message.tool_calls with arguments
 * as an object, streamed in the line that completes the call. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "core/clock.h"
#include "serve/fields_grammar.h"
#include "serve/fields_known.h"
#include "serve/json_out.h"
#include "serve/prompt.h"
#include "serve/sampling_base.h"
#include "serve/server.h"
#include "serve/chat_tools.h"
#include "serve/tool_parse.h"
#include "text/tokenizer.h"

typedef struct oll_resp {
    serve_server *s;
    mpool_lease lease;
    job *j;
    job_batch b;
    bool chat, want_context, ended;
    double keep_alive; /* NAN = default */
    int32_t *ids;      /* prompt, then generated ids appended (for "context") */
    int n_ids;
    size_t cap_ids;
    double t0;
    tool_parser *p;    /* the family's parser (NULL: text passes as it is) */
    wbuf content, thinking, calls; /* parsed, not yet written; calls: ",{...}" each */
    char *call_name;
} oll_resp;

/* Parsed events into the pending content, thinking and finished calls. */
static int on_ev(void *user, const tool_ev *ev) {
    oll_resp *r = user;
    switch (ev->kind) {
    case TOOL_EV_CONTENT: wbuf_put(&r->content, ev->text, ev->len); break;
    case TOOL_EV_REASONING: wbuf_put(&r->thinking, ev->text, ev->len); break;
    case TOOL_EV_CALL_BEGIN:
        free(r->call_name);
        r->call_name = strdup(ev->name);
        break;
    case TOOL_EV_CALL_ARGS: break;
    case TOOL_EV_CALL_END: {
        cJSON *args = cJSON_ParseWithLength(ev->text, ev->len);
        if (!cJSON_IsObject(args)) {
            cJSON_Delete(args);
            args = cJSON_CreateObject();
        }
        char *a = cJSON_PrintUnformatted(args);
        cJSON_Delete(args);
        wbuf_printf(&r->calls, ",{\"id\":\"%s\",\"function\":{\"index\":%d,\"name\":", ev->id ? ev->id : "", ev->index);
        const char *n = r->call_name ? r->call_name : "";
        json_put_str(&r->calls, n, strlen(n));
        wbuf_printf(&r->calls, ",\"arguments\":%s}}", a ? a : "{}");
        free(a);
        break;
    }
    }
    return 0;
}

/* Text through the parser (or straight to content without one). */
static void parse_text(oll_resp *r, const char *text, size_t len) {
    if (r->p) tool_parser_feed(r->p, text, len, on_ev, r);
    else wbuf_put(&r->content, text, len);
}


static void head(wbuf *o, const oll_resp *r) {
    char ts[48];
    reply_rfc3339(wick_wall_s(), ts, sizeof ts);
    wbuf_puts(o, "{\"model\":");
    json_put_str(o, r->lease.name, strlen(r->lease.name));
    wbuf_printf(o, ",\"created_at\":\"%s\",", ts);
}

/* The pending parsed parts as the line's message (chat) or response and
 * thinking (generate); they are emptied. */
static void body_text(wbuf *o, oll_resp *r) {
    const char *c = r->content.data ? r->content.data : "";
    if (r->chat) {
        wbuf_puts(o, "\"message\":{\"role\":\"assistant\",\"content\":");
        json_put_str(o, c, r->content.len);
        if (r->thinking.len) {
            wbuf_puts(o, ",\"thinking\":");
            json_put_str(o, r->thinking.data, r->thinking.len);
        }
        if (r->calls.len) {
            wbuf_puts(o, ",\"tool_calls\":[");
            wbuf_put(o, r->calls.data + 1, r->calls.len - 1);
            wbuf_puts(o, "]");
        }
        wbuf_puts(o, "}");
    } else {
        wbuf_puts(o, "\"response\":");
        json_put_str(o, c, r->content.len);
        if (r->thinking.len) {
            wbuf_puts(o, ",\"thinking\":");
            json_put_str(o, r->thinking.data, r->thinking.len);
        }
    }
    wbuf_reset(&r->content);
    wbuf_reset(&r->thinking);
    wbuf_reset(&r->calls);
}

static void keep_ids(oll_resp *r, const job_batch *b) {
    if (!r->want_context) return;
    if (b->n > (size_t)(INT_MAX - r->n_ids) || !GROW_ARRAY(r->ids, (size_t)r->n_ids + b->n, &r->cap_ids)) return;
    for (size_t i = 0; i < b->n; i++) r->ids[r->n_ids++] = b->ev[i].tok.id;
}

/* The final object's fields after "done":true. */
static void final_fields(wbuf *o, const oll_resp *r, const job_result *res) {
    wbuf_printf(o, ",\"done_reason\":\"%s\"", gen_finish_name(res->finish));
    if (r->want_context) {
        wbuf_puts(o, ",\"context\":[");
        for (int i = 0; i < r->n_ids; i++) wbuf_printf(o, i ? ",%d" : "%d", r->ids[i]);
        wbuf_puts(o, "]");
    }
    double load = r->lease.load_ms;
    wbuf_printf(o,
                ",\"total_duration\":%.0f,\"load_duration\":%.0f,\"prompt_eval_count\":%d,"
                "\"prompt_eval_duration\":%.0f,\"eval_count\":%d,\"eval_duration\":%.0f}\n",
                (load + res->total_ms) * 1e6, load * 1e6, res->prompt_tokens - res->cached_tokens,
                res->prefill_ms * 1e6, res->generated_tokens, res->decode_ms * 1e6);
}

static void error_line(wbuf *o, const char *msg) {
    wbuf_puts(o, "{\"error\":");
    json_put_str(o, msg, strlen(msg));
    wbuf_puts(o, "}\n");
}

static int stream_pull(void *ctx, wbuf *o, int timeout_ms) {
    oll_resp *r = ctx;
    if (r->ended) return 0;
    if (http_stopping(r->s->http)) job_cancel(r->j); /* ends with an error line */
    if (!job_take(r->j, &r->b, timeout_ms)) {
        double limit = r->s->cfg.request_timeout_s;
        if (limit > 0 && wick_now_s() - r->t0 > limit) job_cancel(r->j);
        return 1;
    }
    keep_ids(r, &r->b);
    for (size_t i = 0; i < r->b.n; i++) { /* a line per token that releases text */
        if (r->b.ev[i].len) parse_text(r, r->b.text + r->b.ev[i].off, r->b.ev[i].len);
        if (r->content.len || r->thinking.len || r->calls.len) {
            head(o, r);
            body_text(o, r);
            wbuf_puts(o, ",\"done\":false}\n");
        }
    }
    if (!r->b.done) return 1;
    r->ended = true;
    const job_result *res = job_get_result(r->j);
    if (res->finish == WICK_FINISH_ERROR) {
        error_line(o, res->error ? res->error : "generation failed");
        return 0;
    }
    if (res->finish == WICK_FINISH_CANCELLED) {
        error_line(o, "request cancelled (timeout or server shutting down)");
        return 0;
    }
    if (res->tail_len) parse_text(r, res->tail, res->tail_len);
    if (r->p) tool_parser_end(r->p, on_ev, r);
    if (r->calls.len) { /* calls go in a line of their own before the final one */
        head(o, r);
        body_text(o, r);
        wbuf_puts(o, ",\"done\":false}\n");
    }
    head(o, r);
    body_text(o, r);
    wbuf_puts(o, ",\"done\":true");
    final_fields(o, r, res);
    return 0;
}

static void stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    oll_resp *r = ctx;
    job_release(r->j);
    job_batch_free(&r->b);
    mpool_release(r->s->pool, &r->lease, r->keep_alive);
    free(r->ids);
    tool_parser_free(r->p);
    wbuf_free(&r->content);
    wbuf_free(&r->thinking);
    wbuf_free(&r->calls);
    free(r->call_name);
    free(r);
}

/* Options shared by both routes; the lease's model gives sampling defaults. */
typedef struct oll_req {
    bool stream;
    double keep_alive;
    const cJSON *options;
    const char *model;
    int think;          /* -1 not given, else enable_thinking for the template */
    bool tools;         /* chat with tools: calls are parsed */
    const chat_tools *ct; /* chat: the tools checked (their calls' arguments are constrained) */
    char *text;         /* the rendered prompt (NULL: raw); the parser starts from its end */
    long long num_ctx;  /* options.num_ctx (0 = not given) */
    const cJSON *body;  /* the request ("format" is read again at submit) */
    gen_params g;
} oll_req;

static int parse_common(const cJSON *b, oll_req *q, fld_error *e) {
    q->stream = true;
    q->keep_alive = NAN;
    q->think = -1;
    q->g.n_predict = -1;
    q->g.logprobs = -1;
    if (fld_unsupported_ollama(b, e) < 0) return -1;
    if (fld_str(b, "model", &q->model, e) < 0 || fld_bool(b, "stream", &q->stream, e) < 0) return -1;
    /* think: false renders the template with thinking off, true with it on;
     * either way a thinking block comes back apart, in "thinking". The
     * levels of gpt-oss ("low", "medium", "high") are not supported. */
    const cJSON *think = cJSON_GetObjectItemCaseSensitive(b, "think");
    if (cJSON_IsBool(think)) q->think = cJSON_IsTrue(think);
    else if (cJSON_IsString(think))
        return fld_fail(e, 400, "think", "\"think\" levels are not supported; use true or false");
    else if (think && !cJSON_IsNull(think)) return fld_fail(e, 400, "think", "\"think\" must be true or false");
    if (fld_keep_alive(b, "keep_alive", &q->keep_alive, e) < 0) return -1;
    if (fld_object(b, "options", &q->options, e) < 0) return -1;
    fld_grammar gr; /* checked here, before a model is leased; taken again at submit */
    if (fld_grammar_ollama(b, &gr, e) < 0) return -1;
    fld_grammar_free(&gr);
    q->body = b;
    const cJSON *imgs = cJSON_GetObjectItemCaseSensitive(b, "images");
    if (cJSON_IsArray(imgs) && cJSON_GetArraySize(imgs) > 0)
        return fld_fail(e, 400, "images", "images are not supported by this server");
    const cJSON *o = q->options;
    long long v;
    int r;
    if ((r = fld_int(o, "num_predict", -2, 2147483647, &v, e)) < 0) return -1;
    if (r) q->g.n_predict = v < 0 ? -1 : v;
    if (fld_stop(o, "stop", &q->g.stop, e) < 0) return -1;
    if (fld_int(o, "num_ctx", 0, 1e9, &q->num_ctx, e) < 0 || fld_int(o, "num_keep", -1, 1e9, &v, e) < 0) return -1;
    q->g.n_ctx_limit = q->num_ctx > 0 && q->num_ctx < 2147483647 ? (int)q->num_ctx : 0;
    if (fld_speculative(b, &q->g.spec, e) < 0 || (o && fld_speculative(o, &q->g.spec, e) < 0)) return -1;
    return 0;
}

/* options over the server's base for the model; num_predict under the server's -n */
static int sampling(const serve_server *s, const mpool_lease *l, oll_req *q, fld_error *e) {
    serve_sampling_base(s, l->model, &q->g.sampling);
    q->g.n_predict = serve_n_predict_for(s, q->g.n_predict);
    if (!q->options) return 0;
    if (fld_sampling_ollama(q->options, &q->g.sampling, e) < 0) return -1;
    serve_sampling_keep_seed(s, cJSON_GetObjectItemCaseSensitive(q->options, "seed") != NULL, &q->g.sampling);
    return 0;
}

/* The most prompt ids the request's context takes (one position is left to generate). */
static int prompt_room(const mpool_lease *l, const gen_params *g) {
    const int n_ctx = g->n_ctx_limit > 0 && g->n_ctx_limit < l->n_ctx ? g->n_ctx_limit : l->n_ctx;
    return n_ctx - 1;
}

/* chat_template_kwargs for "think" (NULL if not given). */
static cJSON *think_kwargs(const oll_req *q) {
    if (q->think < 0) return NULL;
    cJSON *kw = cJSON_CreateObject();
    cJSON_AddBoolToObject(kw, "enable_thinking", q->think == 1);
    return kw;
}

/* An empty prompt: load the model (or unload it with keep_alive 0). */
static void load_only(serve_server *s, http_call *c, oll_req *q, bool chat) {
    mpool_lease l;
    wick_error err;
    fld_error e = {0};
    if (mpool_acquire(s->pool, q->model, &l, &err) < 0) {
        fld_fail_wick(&e, &err, "model");
        reply_ollama_error(c, &e);
        return;
    }
    bool unload = q->keep_alive == 0;
    oll_resp r = {.s = s, .lease = l, .chat = chat};
    wbuf o = {0};
    head(&o, &r);
    if (chat) wbuf_puts(&o, "\"message\":{\"role\":\"assistant\",\"content\":\"\"},");
    else wbuf_puts(&o, "\"response\":\"\",");
    wbuf_printf(&o, "\"done\":true,\"done_reason\":\"%s\"}", unload ? "unload" : "load");
    http_note(c, "model=%s %s", l.name, unload ? "unload" : "load");
    mpool_release(s->pool, &l, q->keep_alive);
    http_reply_wbuf(c, 200, "application/json", &o);
}

static void run(serve_server *s, http_call *c, oll_req *q, mpool_lease *l, bool chat, bool want_context) {
    fld_error e = {0};
    http_note(c, "model=%s prompt=%d", l->name, q->g.n_ids);
    fld_grammar gr;
    job *j = NULL;
    int rc = fld_grammar_ollama(q->body, &gr, &e);
    if (rc == 0 && q->ct && !gr.spec.kind) {
        const tokenizer *tok = wick_model_tokenizer(l->model);
        const tool_format f = tool_format_detect(tok_chat_template(tok), tok);
        rc = chat_tools_lazy_grammar(q->ct, &f, tok, tok_chat_template(tok), &gr, &e);
        if (rc < 0) fld_grammar_free(&gr);
    }
    if (rc == 0) {
        q->g.grammar = &gr;
        j = gen_submit(s, l, &q->g, &e);
        q->g.grammar = NULL;
        fld_grammar_free(&gr);
    }
    oll_resp *r = j ? calloc(1, sizeof *r) : NULL;
    if (!r) {
        if (j) {
            job_release(j);
            fld_fail(&e, 500, NULL, "out of memory");
        }
        mpool_release(s->pool, l, q->keep_alive);
        reply_ollama_error(c, &e);
        return;
    }
    r->s = s;
    r->lease = *l;
    r->j = j;
    r->chat = chat;
    r->keep_alive = q->keep_alive;
    r->want_context = want_context;
    r->t0 = wick_now_s();
    if (q->text) { /* a rendered prompt: parse the reply as the family writes it */
        const tokenizer *tok = wick_model_tokenizer(l->model);
        const tool_format f = tool_format_detect(tok_chat_template(tok), tok);
        const tool_parse_opts po = {.tools = q->tools,
                                    .reasoning = f.think_open[0] && !s->cfg.reasoning_inline,
                                    .in_reasoning = tool_format_prompt_opens_reasoning(&f, q->text, strlen(q->text)),
                                    .id_seed = q->g.sampling.seed};
        r->p = tool_parser_new(&f, &po);
    }
    if (want_context && (r->ids = malloc(sizeof *r->ids * (size_t)q->g.n_ids))) {
        memcpy(r->ids, q->g.ids, sizeof *r->ids * (size_t)q->g.n_ids);
        r->n_ids = q->g.n_ids;
        r->cap_ids = (size_t)q->g.n_ids;
    }
    if (q->stream) {
        http_reply_stream(c, 200, "application/x-ndjson", stream_pull, stream_fin, r);
        return;
    }
    job_batch acc = {0};
    if (gen_collect(s, c, j, &acc) == 0) {
        const job_result *res = job_get_result(j);
        if (res->finish == WICK_FINISH_ERROR || res->finish == WICK_FINISH_CANCELLED) {
            fld_fail(&e, res->finish == WICK_FINISH_ERROR ? 500 : 503, NULL, "%s",
                     res->error ? res->error : "request cancelled (timeout or server shutting down)");
            reply_ollama_error(c, &e);
        } else {
            keep_ids(r, &acc);
            wbuf o = {0};
            parse_text(r, acc.text ? acc.text : "", acc.text_len);
            if (res->tail_len) parse_text(r, res->tail, res->tail_len);
            if (r->p) tool_parser_end(r->p, on_ev, r);
            head(&o, r);
            body_text(&o, r);
            wbuf_puts(&o, ",\"done\":true");
            final_fields(&o, r, res);
            http_note(c, "model=%s prompt=%d cached=%d gen=%d", l->name, res->prompt_tokens, res->cached_tokens,
                      res->generated_tokens);
            http_reply_wbuf(c, 200, "application/json", &o);
        }
    } else {
        if (http_stopping(s->http)) fld_fail(&e, 503, NULL, "server is shutting down");
        else fld_fail(&e, 499, NULL, "client closed the connection");
        reply_ollama_error(c, &e);
    }
    job_batch_free(&acc);
    stream_fin(r, false);
}

static int acquire(serve_server *s, http_call *c, oll_req *q, mpool_lease *l) {
    wick_error err;
    fld_error e = {0};
    if (mpool_acquire(s->pool, q->model, l, &err) == 0) return 0;
    fld_fail_wick(&e, &err, "model");
    reply_ollama_error(c, &e);
    return -1;
}

void oll_generate(serve_server *s, http_call *c, cJSON *b) {
    oll_req q;
    memset(&q, 0, sizeof q);
    fld_error e = {0};
    const char *prompt = NULL, *system = NULL, *suffix = NULL;
    bool raw = false;
    const cJSON *context = NULL;
    if (parse_common(b, &q, &e) < 0 || fld_str(b, "prompt", &prompt, &e) < 0 || fld_str(b, "system", &system, &e) < 0 ||
        fld_bool(b, "raw", &raw, &e) < 0 || fld_array(b, "context", &context, &e) < 0 ||
        fld_str(b, "suffix", &suffix, &e) < 0) {
        reply_ollama_error(c, &e);
        return;
    }
    int n_ctx_ids = context ? cJSON_GetArraySize(context) : 0;
    if ((!prompt || !*prompt) && n_ctx_ids == 0) {
        load_only(s, c, &q, false);
        return;
    }
    mpool_lease l;
    if (acquire(s, c, &q, &l) < 0) return;
    int32_t *ctx_ids = NULL, *p_ids = NULL;
    int n_p = 0;
    if (sampling(s, &l, &q, &e) < 0) goto bad;
    if (n_ctx_ids) {
        cJSON *wrap = cJSON_CreateArray();
        cJSON_AddItemReferenceToArray(wrap, (cJSON *)context);
        int rc = prompt_completion(l.model, wrap, 0, &ctx_ids, &n_ctx_ids, &e);
        cJSON_Delete(wrap);
        if (rc < 0) {
            snprintf(e.msg, sizeof e.msg, "\"context\" must be an array of token ids");
            goto bad;
        }
    }
    const char *tmpl = tok_chat_template(wick_model_tokenizer(l.model));
    const int room = prompt_room(&l, &q.g) - n_ctx_ids > 1 ? prompt_room(&l, &q.g) - n_ctx_ids : 1;
    if (prompt && *prompt && suffix && *suffix) { /* fill in the middle: no template */
        if (prompt_fim(l.model, prompt, suffix, room, &p_ids, &n_p, &e) < 0) goto bad;
    } else if (prompt && *prompt) {
        if (raw || !tmpl) {
            if (prompt_text(l.model, prompt, n_ctx_ids == 0, room, &p_ids, &n_p, &e) < 0) goto bad;
        } else {
            cJSON *msgs = cJSON_CreateArray(), *m = cJSON_CreateObject();
            cJSON_AddStringToObject(m, "role", "user");
            cJSON_AddStringToObject(m, "content", prompt);
            cJSON_AddItemToArray(msgs, m);
            cJSON *kw = think_kwargs(&q);
            prompt_chat_opts po = {.messages = msgs, .system = system, .add_generation_prompt = true, .kwargs = kw,
                                   .reasoning_off = s->cfg.reasoning_off,
                                   .max_ids = room};
            int rc = prompt_chat(l.model, &po, &p_ids, &n_p, &q.text, &e);
            cJSON_Delete(msgs);
            cJSON_Delete(kw);
            if (rc < 0) goto bad;
            q.g.new_message = true;
        }
    }
    q.g.n_ids = n_ctx_ids + n_p;
    q.g.ids = malloc(sizeof(int32_t) * (size_t)(q.g.n_ids ? q.g.n_ids : 1));
    if (!q.g.ids) {
        fld_fail(&e, 500, NULL, "out of memory");
        goto bad;
    }
    if (n_ctx_ids) memcpy(q.g.ids, ctx_ids, sizeof(int32_t) * (size_t)n_ctx_ids);
    if (n_p) memcpy(q.g.ids + n_ctx_ids, p_ids, sizeof(int32_t) * (size_t)n_p);
    free(ctx_ids);
    free(p_ids);
    run(s, c, &q, &l, false, true);
    free(q.g.ids);
    free(q.text);
    return;
bad:
    free(ctx_ids);
    free(p_ids);
    free(q.text);
    mpool_release(s->pool, &l, q.keep_alive);
    reply_ollama_error(c, &e);
}

void oll_chat(serve_server *s, http_call *c, cJSON *b) {
    oll_req q;
    memset(&q, 0, sizeof q);
    fld_error e = {0};
    prompt_chat_opts po = {.add_generation_prompt = true, .reasoning_off = s->cfg.reasoning_off};
    chat_tools tools;
    if (parse_common(b, &q, &e) < 0 || fld_array(b, "messages", &po.messages, &e) < 0 ||
        fld_array(b, "tools", &po.tools, &e) < 0 || chat_tools_parse(b, &tools, &e) < 0) {
        reply_ollama_error(c, &e);
        return;
    }
    if (!po.messages || cJSON_GetArraySize(po.messages) == 0) {
        load_only(s, c, &q, true);
        return;
    }
    q.tools = tools.tools != NULL;
    q.ct = &tools;
    cJSON *kw = think_kwargs(&q);
    po.kwargs = kw;
    mpool_lease l;
    if (acquire(s, c, &q, &l) < 0) {
        cJSON_Delete(kw);
        return;
    }
    q.g.new_message = true;
    q.g.chat = true;
    int rc = sampling(s, &l, &q, &e);
    po.max_ids = prompt_room(&l, &q.g);
    if (rc == 0) rc = prompt_chat(l.model, &po, &q.g.ids, &q.g.n_ids, &q.text, &e);
    cJSON_Delete(kw);
    if (rc < 0) {
        free(q.text);
        mpool_release(s->pool, &l, q.keep_alive);
        reply_ollama_error(c, &e);
        return;
    }
    run(s, c, &q, &l, true, false);
    free(q.g.ids);
    free(q.text);
}
