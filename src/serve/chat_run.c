/* chat_run.c — one chat turn from an OpenAI chat-completions body to parsed
 * events (chat_run.h): the body checked (chat_tools.c reads tools and
 * tool_choice), the model leased, the prompt rendered and submitted, and the
 * job's text fed through the model family's tool and reasoning parser. */
#include "serve/chat_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "serve/chat_tools.h"
#include "serve/openai.h"
#include "serve/prompt.h"
#include "serve/span_chat.h"
#include "text/tokenizer.h"

struct chat_run {
    serve_server *s;
    mpool_lease lease;
    bool leased;
    job *j;
    job_batch b;
    tool_parser *p;
    chat_run_info info;
    chat_tools tools;
    char *lead;         /* text the prompt wrote for the reply (a forced call's opening tag): fed first */
    double t0;
    job_progress prog;  /* the last prompt progress record */
    bool ended, stopped_after_call;
    int n_calls, logprobs;
    int32_t *ids;       /* render_only (or --verbose): the prompt, or its span segments */
    int n_ids;
    span_req sr;
    bool has_spans;
    tool_ev_fn fn;      /* the caller's, while a pull runs */
    void *user;
};

/* Events pass through here: counts calls, and with parallel_tool_calls
 * false stops the turn after the first call. */
static int relay(void *user, const tool_ev *ev) {
    chat_run *r = user;
    if (ev->kind == TOOL_EV_CALL_BEGIN) {
        if (!r->tools.parallel && r->n_calls >= 1) return 0;
        r->n_calls++;
    }
    if (ev->index >= 1 && !r->tools.parallel &&
        (ev->kind == TOOL_EV_CALL_ARGS || ev->kind == TOOL_EV_CALL_END))
        return 0;
    /* (a call the parser closes at the end, cut by max_tokens, keeps finish "length") */
    if (ev->kind == TOOL_EV_CALL_END && !r->tools.parallel && !r->stopped_after_call && r->j && !r->ended) {
        r->stopped_after_call = true;
        job_cancel(r->j);
    }
    return r->fn ? r->fn(r->user, ev) : 0;
}

int chat_run_start_opts(serve_server *s, const cJSON *b, const chat_run_opts *o, chat_run **out, fld_error *e) {
    static const chat_run_opts none = {0};
    if (!o) o = &none;
    *out = NULL;
    chat_run *r = calloc(1, sizeof *r);
    if (!r) return fld_fail(e, 500, NULL, "out of memory");
    r->s = s;
    oai_req q = {.chat = true};
    prompt_chat_opts po;
    span_req sr = {0};
    char *text = NULL;
    int rc = -1;
    if (oai_parse_common(b, &q, e) < 0 || oai_parse_logprobs(b, &q, e) < 0 || oai_chat_opts(b, &po, e) < 0 ||
        chat_tools_parse(b, &r->tools, e) < 0)
        goto out;
    po.reasoning_off = s->cfg.reasoning_off;
    if (o->prefill_only) q.g.n_predict = 0;
    q.g.prompt_shared = o->prompt_shared;
    if (q.n > s->cfg.parallel) {
        fld_fail(e, 400, "n", "\"n\" is %d, more than the %d sequences the server runs at once (--parallel)", q.n, s->cfg.parallel);
        goto out;
    }
    if (oai_check_slot(s, &q, e) < 0) goto out;
    r->logprobs = q.logprobs;
    if (r->tools.choice == CHAT_TOOLS_NONE) po.tools = NULL;
    if (r->tools.forced && q.gr.spec.kind) {
        fld_fail(e, 400, "tool_choice", "\"tool_choice\" \"%s\" and \"%s\" cannot be used together",
                 r->tools.choice == CHAT_TOOLS_REQUIRED ? "required" : "function", q.gr.param);
        goto out;
    }
    if (fld_bool(b, "return_progress", &r->info.progress, e) < 0 || fld_bool(b, "timings_per_token", &r->info.timings, e) < 0)
        goto out;
    if ((r->info.progress || r->info.timings) && !q.stream) {
        fld_fail(e, 400, r->info.progress ? "return_progress" : "timings_per_token", "\"%s\" needs \"stream\": true",
                 r->info.progress ? "return_progress" : "timings_per_token");
        goto out;
    }
    q.g.progress = (r->info.progress || r->info.timings) && !o->prefill_only;
    const char *fmt = NULL;
    if (fld_str(b, "reasoning_format", &fmt, e) < 0) goto out;
    if (fmt && strcmp(fmt, "none") && strcmp(fmt, "deepseek") && strcmp(fmt, "auto") && strcmp(fmt, "deepseek-legacy")) {
        fld_fail(e, 400, "reasoning_format", "\"reasoning_format\" must be \"none\", \"auto\" or \"deepseek\"");
        goto out;
    }
    bool split_reasoning = fmt ? strcmp(fmt, "none") != 0 : s->cfg.reasoning_inline == 0;
    if (oai_lease(s, b, &r->lease, e) < 0) goto out;
    r->leased = true;
    const wick_model *m = r->lease.model;
    const tokenizer *tok = wick_model_tokenizer(m);
    r->info.model = r->lease.name;
    r->info.stream = q.stream;
    r->info.include_usage = q.include_usage;
    r->info.format = tool_format_detect(tok_chat_template(tok), tok);
    q.g.new_message = true;
    q.g.chat = true;
    if (oai_sampling_for(s, &r->lease, b, &q, e) < 0) goto out;
    if (!o->render_only && gen_shift_fields(s, b, &q.g, e) < 0) goto out;
    po.max_ids = o->render_only || q.g.ctx_shift ? 0 : r->lease.n_ctx - 1; /* (context shift: cut below) */
    if (o->seed_set) q.g.sampling.seed = o->seed;
    r->info.seed = q.g.sampling.seed;
    if (r->tools.forced && chat_tools_grammar(&r->tools, &r->info.format, tok, &q.gr, &r->lead, e) < 0) goto out;
    if (r->tools.choice == CHAT_TOOLS_AUTO && !q.gr.spec.kind &&
        chat_tools_lazy_grammar(&r->tools, &r->info.format, tok, tok_chat_template(tok), &q.gr, e) < 0)
        goto out;
    int spans = span_chat_detect(po.messages, e);
    if (spans < 0 || span_req_options(b, m, &sr, e) < 0) goto out;
    if (spans && r->lead) {
        fld_fail(e, 400, "tool_choice", "a forced tool call cannot be used with span messages");
        goto out;
    }
    if (!spans) {
        size_t text_len = 0;
        if (prompt_render(m, &po, &text, &text_len, e) < 0) goto out;
        if (r->lead) { /* the call's opening written into the prompt */
            const size_t n = strlen(text), k = strlen(r->lead);
            char *t2 = realloc(text, n + k + 1);
            if (!t2) {
                fld_fail(e, 500, NULL, "out of memory");
                goto out;
            }
            memcpy(t2 + n, r->lead, k + 1);
            text = t2;
        }
        if (prompt_encode(m, text, strlen(text), po.max_ids, &q.g.ids, &q.g.n_ids, e) < 0) goto out;
    } else {
        if (span_chat_build(m, &po, &sr, e) < 0) goto out;
        q.g.n_ids = span_req_finish(&sr);
        q.g.spans = &sr.v;
        r->info.spans = true;
    }
    if (o->render_only) { /* the prompt moves into r */
        r->n_ids = q.g.n_ids;
        r->ids = q.g.ids;
        q.g.ids = NULL;
        if (q.g.spans) {
            r->sr = sr;
            memset(&sr, 0, sizeof sr);
            span_req_finish(&r->sr);
            r->has_spans = true;
        }
        rc = 0;
        goto out;
    }
    const tool_format *f = &r->info.format;
    const bool in_think = text && !r->lead && tool_format_prompt_opens_reasoning(f, text, strlen(text));
    const tool_parse_opts popts = {.tools = po.tools != NULL,
                                   .reasoning = split_reasoning && f->think_open[0],
                                   .in_reasoning = in_think,
                                   .id_seed = q.g.sampling.seed};
    if (!(r->p = tool_parser_new(f, &popts))) {
        fld_fail(e, 500, NULL, "out of memory");
        goto out;
    }
    gen_fit_context(&r->lease, &q.g);
    r->info.n_prompt = q.g.n_ids;
    if (!(r->j = gen_submit(s, &r->lease, &q.g, e))) goto out;
    if (s->cfg.verbose && !q.g.spans && q.g.ids) { /* --verbose: the prompt kept for the answer's __verbose */
        r->ids = q.g.ids, r->n_ids = q.g.n_ids;
        q.g.ids = NULL;
    }
    r->t0 = wick_now_s();
    rc = 0;
out:
    free(text);
    free(q.g.ids);
    free(q.bias);
    fld_grammar_free(&q.gr);
    span_req_free(&sr);
    if (rc < 0) chat_run_free(r);
    else *out = r;
    return rc;
}

int chat_run_start(serve_server *s, const cJSON *b, chat_run **out, fld_error *e) {
    return chat_run_start_opts(s, b, NULL, out, e);
}

const chat_run_info *chat_run_get_info(const chat_run *r) { return &r->info; }

const int32_t *chat_run_prompt(const chat_run *r, int *n_ids, const span_req **spans) {
    *n_ids = r->n_ids;
    *spans = r->has_spans ? &r->sr : NULL;
    return r->ids;
}
int chat_run_logprobs(const chat_run *r) { return r->logprobs; }
const wick_model *chat_run_model(const chat_run *r) { return r->lease.model; }

int chat_run_pull(chat_run *r, int timeout_ms, tool_ev_fn fn, void *user, const job_result **res, fld_error *e) {
    if (r->ended) return 0;
    r->fn = fn;
    r->user = user;
    if (r->lead) { /* the forced call's opening, as if generated */
        tool_parser_feed(r->p, r->lead, strlen(r->lead), relay, r);
        free(r->lead);
        r->lead = NULL;
    }
    if (http_stopping(r->s->http)) job_cancel(r->j);
    if (!job_take(r->j, &r->b, timeout_ms)) {
        double limit = r->s->cfg.request_timeout_s;
        if (limit > 0 && wick_now_s() - r->t0 > limit) job_cancel(r->j);
        r->fn = NULL;
        return 1;
    }
    if (r->b.n_prog) r->prog = r->b.prog[r->b.n_prog - 1];
    for (size_t i = 0; i < r->b.n; i++)
        if (r->b.ev[i].len) tool_parser_feed(r->p, r->b.text + r->b.ev[i].off, r->b.ev[i].len, relay, r);
    if (!r->b.done) {
        r->fn = NULL;
        return 1;
    }
    r->ended = true;
    const job_result *jr = job_get_result(r->j);
    if (res) *res = jr;
    if (jr->finish == WICK_FINISH_ERROR) {
        r->fn = NULL;
        return fld_fail(e, 500, NULL, "%s", jr->error ? jr->error : "generation failed");
    }
    if (jr->finish == WICK_FINISH_CANCELLED && !r->stopped_after_call) {
        r->fn = NULL;
        return fld_fail(e, 503, NULL, "request cancelled (timeout or server shutting down)");
    }
    if (jr->tail_len && !r->stopped_after_call) tool_parser_feed(r->p, jr->tail, jr->tail_len, relay, r);
    tool_parser_end(r->p, relay, r);
    r->fn = NULL;
    return 0;
}

const job_batch *chat_run_last_batch(const chat_run *r) { return &r->b; }
const job_progress *chat_run_progress(const chat_run *r) { return &r->prog; }
double chat_run_elapsed_ms(const chat_run *r) { return (wick_now_s() - r->t0) * 1000.0; }

int chat_run_collect(chat_run *r, http_call *c, tool_ev_fn fn, void *user, const job_result **res, fld_error *e) {
    double checked = wick_now_s();
    for (;;) {
        int rc = chat_run_pull(r, 200, fn, user, res, e);
        if (rc <= 0) return rc;
        double now = wick_now_s();
        if (now - checked < 0.01) continue;
        checked = now;
        if (http_client_gone(c)) {
            job_cancel(r->j);
            if (http_stopping(r->s->http)) return fld_fail(e, 503, NULL, "server is shutting down");
            return fld_fail(e, 499, NULL, "client closed the connection");
        }
    }
}

const char *chat_run_finish_reason(const chat_run *r, const job_result *res) {
    if (r->n_calls > 0 && (res->finish == WICK_FINISH_STOP || r->stopped_after_call)) return "tool_calls";
    return gen_finish_name(res->finish);
}

void chat_run_free(chat_run *r) {
    if (!r) return;
    if (r->j) job_release(r->j);
    job_batch_free(&r->b);
    tool_parser_free(r->p);
    if (r->leased) mpool_release(r->s->pool, &r->lease, NAN);
    free(r->lead);
    free(r->ids);
    span_req_free(&r->sr);
    free(r);
}
