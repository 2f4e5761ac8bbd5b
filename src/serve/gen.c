/* gen.c — the generation steps both APIs share: turn checked request
 * parameters into a scheduler request (with context shift's prompt
 * truncation when the server has it on), and wait for a whole answer while
 * watching the client. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "engine/request.h"
#include "serve/fields_grammar.h"
#include "serve/server.h"

const char *gen_finish_name(wick_finish f) {
    switch (f) {
    case WICK_FINISH_STOP: return "stop";
    case WICK_FINISH_LENGTH: return "length";
    case WICK_FINISH_CANCELLED: return "cancelled";
    default: return "error";
    }
}

int gen_shift_fields(const serve_server *s, const cJSON *body, gen_params *g, fld_error *e) {
    if (!s->cfg.ctx_shift || g->spans || g->n_ctx_limit > 0) return 0;
    long long v;
    int r;
    g->ctx_shift = true;
    if ((r = fld_int(body, "n_keep", -1, 2147483647, &v, e)) < 0) return -1;
    if (r) g->n_keep = (int)v;
    if ((r = fld_int(body, "n_discard", 0, 2147483647, &v, e)) < 0) return -1;
    if (r) g->n_discard = (int)v;
    return 0;
}

void gen_fit_context(const mpool_lease *l, gen_params *g) {
    if (!g->ctx_shift || g->spans || g->n_ctx_limit > 0 || g->n_ids <= 0) return;
    const int n_ctx = l->n_ctx;
    if (g->n_keep < 0) g->n_keep = g->n_ids;
    if (g->n_keep > n_ctx - 4) g->n_keep = n_ctx - 4;
    if (g->n_ids < n_ctx) return;
    const int n_left = n_ctx - g->n_keep, n_block = n_left / 2;
    const int erased = (g->n_ids - g->n_keep - n_block) / n_block;
    const int from = g->n_keep + erased * n_block;
    memmove(g->ids + g->n_keep, g->ids + from, sizeof *g->ids * (size_t)(g->n_ids - from));
    g->n_ids = g->n_keep + g->n_ids - from;
    g->truncated = true;
}

job *gen_submit(serve_server *s, const mpool_lease *l, const gen_params *g, fld_error *e) {
    if (g->n_ids <= 0) {
        fld_fail(e, 400, "prompt", "the prompt is empty");
        return NULL;
    }
    const int n_ctx = g->n_ctx_limit > 0 && g->n_ctx_limit < l->n_ctx ? g->n_ctx_limit : l->n_ctx;
    /* a span request longer than the context: the library says why at submit */
    const bool span_over = g->spans && g->n_ids > l->n_ctx;
    if (g->n_ids >= n_ctx && !span_over) {
        fld_fail(e, 400, g->chat ? "messages" : "prompt",
                 "This model's maximum context length is %d tokens. However, your request has %d input tokens, "
                 "which exceeds the available context size. Please reduce the length of the input.", n_ctx, g->n_ids);
        snprintf(e->code, sizeof e->code, "context_length_exceeded");
        e->no_retry = true;
        e->n_prompt_tokens = g->n_ids;
        e->n_ctx = n_ctx;
        return NULL;
    }
    wick_request r = {
        .prompt = g->ids,
        .n_prompt = g->n_ids,
        .n_predict = request_clamp_predict(g->n_predict, n_ctx, g->n_ids), /* (0 for a span request too long) */
        .sampling = g->sampling,
        .stop = g->stop.v,
        .n_stop = g->stop.n,
        .ignore_eos = g->ignore_eos,
        .cache_salt = g->cache_salt,
        .new_message = g->new_message,
        .logprobs = g->logprobs,
        .post_sampling_probs = g->post_sampling_probs,
        .spans = g->spans,
        .spec = g->spec,
        .prompt_shared = g->prompt_shared,
        .forget_prefix = g->forget_prefix,
    };
    if (g->ctx_shift && !g->spans && g->n_ctx_limit <= 0) {
        /* llama-server keeps n_keep tokens and the BOS the model adds; a
         * request without a limit goes on until the model's training
         * context (llama-server's cap of an endless generation) */
        wick_model_info mi;
        wick_model_get_info(l->model, &mi);
        r.ctx_shift = (wick_ctx_shift){.on = true, .n_keep = (g->n_keep > 0 ? g->n_keep : 0) + (mi.add_bos ? 1 : 0),
                                       .n_discard = g->n_discard};
        if (g->n_predict < 0) r.n_predict = mi.n_ctx_train - g->n_ids > n_ctx - g->n_ids ? mi.n_ctx_train - g->n_ids : -1;
        else r.n_predict = g->n_predict > INT32_MAX ? INT32_MAX : (int)g->n_predict;
    }
    wick_error err = {0};
    wick_grammar *gr = NULL;
    if (g->grammar && g->grammar->spec.kind) {
        if (!(gr = wick_grammar_compile(l->model, &g->grammar->spec, &err))) {
            fld_fail_wick(e, &err, g->grammar->param);
            if (e->status >= 500) return NULL;
            fld_fail(e, 400, g->grammar->param, "%s", err.msg);
            return NULL;
        }
        r.grammar_triggers = g->grammar->triggers;
        r.n_grammar_triggers = g->grammar->n_triggers;
    }
    job *j = job_submit_progress(l->sched, &r, gr, g->progress, l->mx, &err); /* (owns gr from here) */
    if (!j) {
        fld_fail_wick(e, &err, g->spans ? "prompt" : NULL);
        if (err.code == WICK_E_QUEUE_FULL) /* the server's words: which model, how many wait */
            fld_fail(e, e->status, NULL, "server busy: %d requests are waiting for model \"%s\"; retry later",
                     s->cfg.max_queue, l->name);
    }
    return j;
}

void gen_append(job_batch *acc, const job_batch *b) {
    for (size_t i = 0; i < b->n; i++)
        if (!job_batch_push(acc, &b->ev[i].tok, b->text + b->ev[i].off, b->ev[i].len)) break;
    acc->done = b->done;
}


int gen_collect(serve_server *s, http_call *c, job *j, job_batch *acc) {
    job_batch b = {0};
    double t0 = wick_now_s(), checked = t0;
    int rc = -1;
    for (;;) {
        bool got = job_take(j, &b, 200);
        if (got) {
            gen_append(acc, &b);
            if (b.done) {
                rc = 0;
                break;
            }
        }
        double now = wick_now_s();
        /* a poll() per check: cheap, and often enough that a vanished client
         * stops a fast model within a few dozen tokens */
        if (got && now - checked < 0.01) continue;
        checked = now;
        if (http_client_gone(c)) break; /* or the server is stopping */
        if (s->cfg.request_timeout_s > 0 && now - t0 > s->cfg.request_timeout_s)
            job_cancel(j); /* ends with finish "cancelled" at the next take */
    }
    job_batch_free(&b);
    if (rc < 0) job_cancel(j);
    return rc;
}
