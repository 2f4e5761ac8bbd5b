/* openai.c — OpenAI-compatible routes: /v1/models/{id} (the list is
 * llama_native_info.c's, in both APIs' shapes), /v1/completions,
 * /v1/chat/completions' checks (the turn itself runs in chat_run.c and is
 * written by openai_chat.c) and the two /render routes the llm-d router
 * tokenizes through. Requests are checked field by
 * field (a wrong type is a 400 naming the field; a field another engine
 * defines and wick does not implement is a 400 too, fields_known.h; fields
 * no engine knows are ignored).
 * Span requests (a prompt object, or chat messages with "span": true, plus
 * "span_cache") are parsed by span_req.c / span_chat.c and run here too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/openai.h"
#include "serve/prompt.h"
#include "serve/fields_known.h"
#include "serve/span_req.h"
#include "serve/chat_run.h"
#include "serve/sampling_base.h"

static void not_found_model(http_call *c, fld_error *e) {
    snprintf(e->code, sizeof e->code, "model_not_found");
    reply_openai_error(c, e);
}

void oai_model(serve_server *s, http_call *c, const char *id) {
    mpool_info info[256];
    int n = mpool_list(s->pool, info, 256);
    for (int i = 0; i < n; i++) {
        bool named = !strcmp(info[i].name, id) || !strcmp(info[i].file_name, id);
        for (int k = 0; k < info[i].n_aliases; k++) named |= !strcmp(info[i].aliases[k], id);
        if (!named) continue;
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "id", info[i].name);
        cJSON_AddStringToObject(m, "object", "model");
        cJSON_AddNumberToObject(m, "created", (double)(info[i].mtime ? info[i].mtime : (uint64_t)s->started));
        cJSON_AddStringToObject(m, "owned_by", "wick");
        reply_json(c, 200, m);
        return;
    }
    fld_error e = {0};
    fld_fail(&e, 404, "model", "The model `%s` does not exist.", id);
    not_found_model(c, &e);
}

/* The fields both generation routes share, before the model is known. */
int oai_parse_common(const cJSON *b, oai_req *q, fld_error *e) {
    long long v;
    int r;
    q->logprobs = -1;
    q->g.n_predict = -1;
    q->g.logprobs = -1;
    if (fld_unsupported_openai(b, q->chat, e) < 0) return -1;
    if (fld_bool(b, "stream", &q->stream, e) < 0) return -1;
    const cJSON *so = NULL;
    if (fld_object(b, "stream_options", &so, e) < 0) return -1;
    if (so && fld_bool(so, "include_usage", &q->include_usage, e) < 0) return fld_fail(e, 400, "stream_options", "\"stream_options.include_usage\" must be true or false");
    if (so && fld_bool(so, "continuous_usage_stats", &q->continuous_usage, e) < 0)
        return fld_fail(e, 400, "stream_options", "\"stream_options.continuous_usage_stats\" must be true or false");
    if ((r = fld_int(b, "max_tokens", 0, 2147483647, &v, e)) < 0) return -1;
    if (r) q->g.n_predict = v;
    if ((r = fld_int(b, "max_completion_tokens", 0, 2147483647, &v, e)) < 0) return -1;
    if (r) q->g.n_predict = v;
    if (q->g.n_predict == 0) return fld_fail(e, 400, r ? "max_completion_tokens" : "max_tokens", "max_tokens must be at least 1");
    if (q->g.n_predict < 0) { /* llama.cpp's name; -1 = until the context is full */
        if ((r = fld_int(b, "n_predict", -1, 2147483647, &v, e)) < 0) return -1;
        if (r && v == 0) return fld_fail(e, 400, "n_predict", "n_predict must be -1 or at least 1");
        if (r) q->g.n_predict = v;
    }
    q->n = 1;
    if ((r = fld_int(b, "n", 1, 4096, &v, e)) < 0) return -1;
    if (r) q->n = (int)v;
    q->id_slot = -1;
    if ((r = fld_int(b, "id_slot", -1, 1e6, &v, e)) < 0) return -1;
    if (r) q->id_slot = (int)v;
    if ((r = fld_int(b, "best_of", 1, 1e9, &v, e)) < 0) return -1;
    if (r && v != 1) return fld_fail(e, 400, "best_of", "only best_of = 1 is supported");
    if ((r = fld_bool(b, "echo", &q->echo, e)) < 0) return -1;
    if (q->echo && q->chat) return fld_fail(e, 400, "echo", "\"echo\" is for /v1/completions");
    if (fld_stop(b, "stop", &q->g.stop, e) < 0) return -1;
    if (fld_bool(b, "ignore_eos", &q->g.ignore_eos, e) < 0) return -1;
    const char *str;
    if (fld_str(b, "cache_salt", &q->g.cache_salt, e) < 0 || fld_str(b, "user", &str, e) < 0) return -1;
    if (fld_speculative(b, &q->g.spec, e) < 0) return -1;
    if (fld_grammar_openai(b, &q->gr, e) < 0) return -1;
    q->g.grammar = &q->gr;
    return 0;
}

int oai_check_slot(const serve_server *s, const oai_req *q, fld_error *e) {
    if (q->id_slot >= s->cfg.parallel)
        return fld_fail(e, 400, "id_slot", "id_slot %d does not exist (the server has %d slots)", q->id_slot, s->cfg.parallel);
    return 0;
}

/* logprobs: chat takes a bool plus top_logprobs; completions an integer */
int oai_parse_logprobs(const cJSON *b, oai_req *q, fld_error *e) {
    long long v;
    int r;
    if (q->chat) {
        bool on = false;
        if (fld_bool(b, "logprobs", &on, e) < 0) return -1;
        if ((r = fld_int(b, "top_logprobs", 0, WICK_MAX_TOP_LOGPROBS, &v, e)) < 0) return -1;
        if (r && !on && v > 0) return fld_fail(e, 400, "top_logprobs", "\"top_logprobs\" needs \"logprobs\": true");
        if (on) q->logprobs = r ? (int)v : 0;
    } else {
        const cJSON *lp = cJSON_GetObjectItemCaseSensitive(b, "logprobs");
        if (cJSON_IsBool(lp)) q->logprobs = cJSON_IsTrue(lp) ? 0 : -1;
        else if ((r = fld_int(b, "logprobs", 0, WICK_MAX_TOP_LOGPROBS, &v, e)) < 0) return -1;
        else if (r) q->logprobs = (int)v;
    }
    q->g.logprobs = q->logprobs;
    return 0;
}

/* Stream the response, or wait for every choice and answer whole. The
 * response owns the lease and the jobs (oai_stream_fin frees them). */
static void answer(serve_server *s, http_call *c, oai_resp *r, bool stream) {
    fld_error e = {0};
    r->created = (long long)time(NULL);
    reply_new_id(s, "cmpl-", r->id, sizeof r->id);
    if (stream) {
        http_reply_stream(c, 200, "text/event-stream", oai_stream_pull, oai_stream_fin, r);
        return;
    }
    job_batch *acc = calloc((size_t)r->n_ch, sizeof *acc);
    int rc = acc ? 0 : fld_fail(&e, 500, NULL, "out of memory");
    for (int i = 0; i < r->n_ch && rc == 0; i++) {
        if (gen_collect(s, c, r->ch[i].j, &acc[i]) < 0) {
            if (http_stopping(s->http)) rc = fld_fail(&e, 503, NULL, "server is shutting down");
            else rc = fld_fail(&e, 499, NULL, "client closed the connection");
            break;
        }
        const job_result *res = job_get_result(r->ch[i].j);
        if (res->finish == WICK_FINISH_ERROR)
            rc = fld_fail(&e, 500, NULL, "%s", res->error ? res->error : "generation failed");
        else if (res->finish == WICK_FINISH_CANCELLED)
            rc = fld_fail(&e, 503, NULL, "request cancelled (timeout or server shutting down)");
    }
    if (rc < 0) {
        reply_openai_error(c, &e);
    } else {
        wbuf out = {0};
        oai_format_whole(r, acc, &out);
        const job_result *res = job_get_result(r->ch[0].j);
        http_note(c, "model=%s prompt=%d cached=%d%s gen=%d n=%d", r->lease.name, res->prompt_tokens,
                  res->cached_tokens, r->spans ? " spans" : "", res->generated_tokens, r->n_ch);
        http_reply_wbuf(c, 200, "application/json", &out);
    }
    for (int i = 0; acc && i < r->n_ch; i++) job_batch_free(&acc[i]);
    free(acc);
    oai_stream_fin(r, false);
}

/* n > 1: compute prompt g once (a prefill-only run whose KV the prefix
 * cache keeps for the choices) and count it in r's usage. */
static int prefill_once(serve_server *s, http_call *c, oai_resp *r, const gen_params *g, fld_error *e) {
    gen_params pre = *g;
    pre.n_predict = 0;
    pre.grammar = NULL;
    job *j = gen_submit(s, &r->lease, &pre, e);
    if (!j) return -1;
    job_batch acc = {0};
    int rc = gen_collect(s, c, j, &acc);
    job_batch_free(&acc);
    if (rc < 0) fld_fail(e, 499, NULL, "client closed the connection");
    else {
        const job_result *res = job_get_result(j);
        r->prompt_tokens += res->prompt_tokens;
        r->cached_tokens += res->cached_tokens;
        r->span_cached_tokens += res->span_cached_tokens;
    }
    job_release(j);
    return rc;
}

/* Prompt g's n choices into r->ch[first ..]: choice j samples with seed
 * base + j, so that each equals the prompt run alone with that seed. */
static int submit_choices(serve_server *s, http_call *c, oai_resp *r, const oai_req *q, int first, fld_error *e) {
    const int n = q->n;
    if (n > 1 && prefill_once(s, c, r, &q->g, e) < 0) return -1;
    char *echo = NULL;
    if (q->echo && !q->g.spans)
        echo = wick_tokenizer_decode(wick_model_tokenizer(r->lease.model), q->g.ids, (size_t)q->g.n_ids, false, NULL, NULL);
    for (int j = 0; j < n; j++) {
        gen_params g = q->g;
        g.sampling.seed = q->g.sampling.seed + (uint64_t)j;
        g.prompt_shared = n > 1;
        oai_choice *k = &r->ch[first + j];
        if (!(k->j = gen_submit(s, &r->lease, &g, e))) {
            free(echo);
            return -1;
        }
        k->index = first + j;
        k->n_prompt = q->g.n_ids;
        k->counts_prompt = n == 1;
        if (echo) wbuf_puts(&k->echo, echo);
        r->n_ch = first + j + 1;
    }
    free(echo);
    return 0;
}

int oai_lease(serve_server *s, const cJSON *b, mpool_lease *l, fld_error *e) {
    const char *name = NULL;
    if (fld_str(b, "model", &name, e) < 0) return -1;
    wick_error err;
    if (mpool_acquire(s->pool, name, l, &err) < 0) {
        fld_fail_wick(e, &err, "model");
        if (err.code == WICK_E_NOT_FOUND) snprintf(e->code, sizeof e->code, "model_not_found");
        return -1;
    }
    return 0;
}

int oai_lease_model(serve_server *s, http_call *c, const cJSON *b, mpool_lease *l) {
    fld_error e = {0};
    if (oai_lease(s, b, l, &e) == 0) return 0;
    reply_openai_error(c, &e);
    return -1;
}

/* The request's sampling over the server's base for the leased model (and
 * its vocabulary, for logit_bias); the server's -n when it sets no limit. */
int oai_sampling_for(const serve_server *s, const mpool_lease *l, const cJSON *b, oai_req *q, fld_error *e) {
    serve_sampling_base(s, l->model, &q->g.sampling);
    if (fld_sampling_openai(b, &q->g.sampling, e) < 0) return -1;
    serve_sampling_keep_seed(s, cJSON_GetObjectItemCaseSensitive(b, "seed") != NULL, &q->g.sampling);
    q->g.n_predict = serve_n_predict_for(s, q->g.n_predict);
    if (fld_logit_bias(b, "logit_bias", wick_model_tokenizer(l->model), false, &q->bias, &q->n_bias, e) < 0) return -1;
    q->g.sampling.logit_bias = q->bias;
    q->g.sampling.n_logit_bias = q->n_bias;
    return 0;
}

/* Several prompts (an array of strings or of token-id arrays) and n
 * choices each: prompt p's choice j is choice p * n + j, run with seed
 * base + j. Every choice is submitted before any is read, so they run
 * batched; with n > 1 each prompt is computed once first. */
void oai_completions(serve_server *s, http_call *c, cJSON *b) {
    oai_req q = {0};
    fld_error e = {0};
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(b, "prompt");
    if (oai_parse_common(b, &q, &e) < 0 || oai_parse_logprobs(b, &q, &e) < 0) goto bad;
    if (!prompt || cJSON_IsNull(prompt)) {
        fld_fail(&e, 400, "prompt", "\"prompt\" is required");
        goto bad;
    }
    const char *suffix = NULL;
    if (fld_str(b, "suffix", &suffix, &e) < 0) goto bad;
    if (suffix && *suffix && !cJSON_IsString(prompt)) {
        fld_fail(&e, 400, "suffix", "\"suffix\" needs \"prompt\" as a string");
        goto bad;
    }
    const int n_prompts = cJSON_IsObject(prompt) ? 1 : prompt_completion_count(prompt, &e);
    if (n_prompts < 0) goto bad;
    if (q.n > s->cfg.parallel) {
        fld_fail(&e, 400, "n", "\"n\" is %d, more than the %d sequences the server runs at once (--parallel)", q.n,
                 s->cfg.parallel);
        goto bad;
    }
    if (oai_check_slot(s, &q, &e) < 0) goto bad;
    if ((long long)n_prompts * q.n > s->cfg.max_queue) {
        fld_fail(&e, 400, n_prompts > 1 ? "prompt" : "n", "%d prompts with n = %d are %lld choices, more than the %d a request may queue",
                 n_prompts, q.n, (long long)n_prompts * q.n, s->cfg.max_queue);
        goto bad;
    }
    oai_resp *r = calloc(1, sizeof *r);
    if (!r || !(r->ch = calloc((size_t)n_prompts * (size_t)q.n, sizeof *r->ch))) {
        free(r);
        fld_fail(&e, 500, NULL, "out of memory");
        goto bad;
    }
    if (oai_lease_model(s, c, b, &r->lease) < 0) {
        free(r->ch);
        free(r);
        fld_grammar_free(&q.gr);
        return;
    }
    r->s = s;
    r->include_usage = q.include_usage;
    r->continuous_usage = q.continuous_usage;
    r->logprobs = q.logprobs;
    const mpool_lease *l = &r->lease;
    span_req sr = {0};
    int rc = oai_sampling_for(s, l, b, &q, &e);
    if (rc == 0) rc = span_req_options(b, l->model, &sr, &e);
    if (rc == 0 && !cJSON_IsObject(prompt)) rc = gen_shift_fields(s, b, &q.g, &e);
    const int max_ids = q.g.ctx_shift ? 0 : l->n_ctx - 1, n_keep = q.g.n_keep; /* (context shift: cut below) */
    for (int p = 0; p < n_prompts && rc == 0; p++) {
        q.g.ids = NULL;
        q.g.n_keep = n_keep;
        if (cJSON_IsObject(prompt)) {
            if ((rc = span_req_completion(l->model, prompt, &sr, &e)) == 0) {
                q.g.n_ids = span_req_finish(&sr);
                q.g.spans = &sr.v;
                r->spans = true;
            }
        } else if (suffix && *suffix) {
            rc = prompt_fim(l->model, prompt->valuestring, suffix, max_ids, &q.g.ids, &q.g.n_ids, &e);
        } else {
            rc = prompt_completion_at(l->model, prompt, p, max_ids, &q.g.ids, &q.g.n_ids, &e);
        }
        if (rc == 0) {
            gen_fit_context(l, &q.g);
            if (p == 0) http_note(c, "model=%s prompt=%d%s", l->name, q.g.n_ids, q.g.spans ? " spans" : "");
            rc = submit_choices(s, c, r, &q, p * q.n, &e);
        }
        free(q.g.ids);
    }
    span_req_free(&sr);
    free(q.bias);
    fld_grammar_free(&q.gr);
    if (rc < 0) {
        for (int i = 0; i < r->n_ch; i++) job_cancel(r->ch[i].j);
        oai_stream_fin(r, true);
        reply_openai_error(c, &e);
        return;
    }
    answer(s, c, r, q.stream);
    return;
bad:
    free(q.bias);
    fld_grammar_free(&q.gr);
    reply_openai_error(c, &e);
}

/* The chat prompt fields, shared with /v1/chat/completions/render (tools
 * and tool_choice are checked by chat_tools.c). */
int oai_chat_opts(const cJSON *b, prompt_chat_opts *o, fld_error *e) {
    memset(o, 0, sizeof *o);
    o->add_generation_prompt = true;
    if (fld_array(b, "messages", &o->messages, e) < 0) return -1;
    if (!o->messages) return fld_fail(e, 400, "messages", "\"messages\" is required");
    if (cJSON_GetArraySize(o->messages) == 0) return fld_fail(e, 400, "messages", "\"messages\" is empty");
    if (fld_array(b, "tools", &o->tools, e) < 0) return -1;
    if (o->tools && cJSON_GetArraySize(o->tools) == 0) o->tools = NULL;
    if (fld_object(b, "chat_template_kwargs", &o->kwargs, e) < 0) return -1;
    /* a template from the request would run client code in the server (a
     * template loop can spin for ever): refused, as vLLM does by default */
    if (fld_str(b, "chat_template", &o->tmpl, e) < 0) return -1;
    if (o->tmpl) return fld_fail(e, 400, "chat_template", "\"chat_template\" in requests is not allowed; the model's own template is used");
    if (fld_bool(b, "add_generation_prompt", &o->add_generation_prompt, e) < 0) return -1;
    if (fld_bool(b, "continue_final_message", &o->continue_final_message, e) < 0) return -1;
    if (o->continue_final_message && o->add_generation_prompt)
        return fld_fail(e, 400, "continue_final_message",
                        "\"continue_final_message\" and \"add_generation_prompt\" cannot both be true");
    o->prefill_assistant = !o->continue_final_message;
    return 0;
}

static void add_ids(cJSON *a, const int32_t *ids, int n) {
    for (int i = 0; a && i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ids[i]));
}

static cJSON *ids_json(const int32_t *ids, int n) {
    cJSON *a = cJSON_CreateArray();
    add_ids(a, ids, n);
    return a;
}

/* A span request rendered: token_ids = prefix, spans and suffix in request
 * order, and the segments themselves. */
static void add_span_ids(cJSON *o, const span_req *r) {
    cJSON *a = cJSON_AddArrayToObject(o, "token_ids");
    add_ids(a, r->prefix, r->n_prefix);
    for (int k = 0; k < r->n_spans; k++) add_ids(a, r->spans[k], r->span_len[k]);
    add_ids(a, r->suffix, r->n_suffix);
    cJSON_AddItemToObject(o, "segments", span_req_segments_json(r));
}

void oai_render_completions(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(b, "prompt");
    if (!prompt || cJSON_IsNull(prompt)) {
        fld_fail(&e, 400, "prompt", "\"prompt\" is required");
        reply_openai_error(c, &e);
        return;
    }
    const int n_prompts = cJSON_IsObject(prompt) ? 1 : prompt_completion_count(prompt, &e);
    if (n_prompts < 0) {
        reply_openai_error(c, &e);
        return;
    }
    mpool_lease l;
    if (oai_lease_model(s, c, b, &l) < 0) return;
    cJSON *arr = cJSON_CreateArray();
    int rc = 0;
    for (int p = 0; p < n_prompts && rc == 0; p++) { /* one entry per prompt */
        int32_t *ids = NULL;
        int n = 0;
        span_req sr = {0};
        rc = cJSON_IsObject(prompt) ? span_req_completion(l.model, prompt, &sr, &e)
                                    : prompt_completion_at(l.model, prompt, p, 0, &ids, &n, &e);
        if (rc == 0) {
            cJSON *o = cJSON_CreateObject();
            if (cJSON_IsObject(prompt)) add_span_ids(o, &sr);
            else cJSON_AddItemToObject(o, "token_ids", ids_json(ids, n));
            cJSON_AddItemToArray(arr, o);
        }
        free(ids);
        span_req_free(&sr);
    }
    mpool_release(s->pool, &l, NAN);
    if (rc < 0) {
        cJSON_Delete(arr);
        reply_openai_error(c, &e);
        return;
    }
    reply_json(c, 200, arr);
}

void oai_render_chat(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    chat_run *run = NULL;
    const chat_run_opts o = {.render_only = true}; /* the prompt exactly as the turn submits it */
    if (chat_run_start_opts(s, b, &o, &run, &e) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    int n = 0;
    const span_req *sr = NULL;
    const int32_t *ids = chat_run_prompt(run, &n, &sr);
    cJSON *out = cJSON_CreateObject();
    if (sr) add_span_ids(out, sr);
    else cJSON_AddItemToObject(out, "token_ids", ids_json(ids, n));
    chat_run_free(run);
    reply_json(c, 200, out);
}
