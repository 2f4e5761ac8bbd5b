/* anthropic.c — the Anthropic Messages routes: POST /v1/messages runs the
 * translated body (anthropic_convert.c) as the shared chat turn
 * (chat_run.h) and answers a whole message or an SSE stream of
 * message_start / content_block_* / message_delta / message_stop events;
 * POST /v1/messages/count_tokens renders the translated conversation as
 * the turn would and counts its tokens. Errors take Anthropic's shape. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "serve/anthropic.h"
#include "serve/chat_run.h"
#include "serve/chat_tools.h"
#include "serve/openai.h"
#include "serve/prompt.h"
#include "text/tokenizer.h"

void reply_anthropic_error(http_call *c, const fld_error *e) {
    const int status = e->status ? e->status : 500;
    if (e->no_retry) http_add_header(c, "x-should-retry", "false");
    if (e->retry_after > 0) {
        char v[16];
        snprintf(v, sizeof v, "%d", e->retry_after);
        http_add_header(c, "retry-after", v);
    }
    http_note(c, "error: %.150s", e->msg);
    wbuf o = {0};
    anth_error_json(&o, status, e->msg);
    if (o.oom) {
        wbuf_free(&o);
        reply_text(c, 500, "application/json", "{\"type\":\"error\",\"error\":{\"type\":\"api_error\",\"message\":\"out of memory\"}}");
        return;
    }
    http_reply_wbuf(c, status, "application/json", &o);
}

/* The stop sequences of a turn and the text its tokens stand for, to tell
 * a stop sequence's end from the model's own (the turn's result does not
 * say which; an end-of-turn token writes no text). */
typedef struct stop_watch {
    char *v[FLD_MAX_STOP];
    int n;
    wbuf raw;
} stop_watch;

static void watch_init(stop_watch *w, const cJSON *oai) {
    memset(w, 0, sizeof *w);
    const cJSON *it;
    cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(oai, "stop")) {
        if (w->n < FLD_MAX_STOP && cJSON_IsString(it) && it->valuestring[0] && (w->v[w->n] = strdup(it->valuestring)))
            w->n++;
    }
}

/* After each pull: the pieces of the tokens it took. */
static void watch_batch(stop_watch *w, const chat_run *run) {
    if (!w->n) return;
    const job_batch *b = chat_run_last_batch(run);
    for (size_t i = 0; i < b->n; i++) prompt_piece(chat_run_model(run), b->ev[i].tok.id, &w->raw);
}

/* The stop_reason of the ended turn, and the stop sequence that ended it (or NULL). */
static const char *watch_reason(const stop_watch *w, const chat_run *run, const job_result *res, const char **seq) {
    const char *finish = chat_run_finish_reason(run, res);
    *seq = NULL;
    if (w->n && !strcmp(finish, "stop") && !w->raw.oom) {
        const int k = anth_stop_match(w->raw.data ? w->raw.data : "", w->raw.len, (const char *const *)w->v, w->n);
        if (k >= 0) {
            *seq = w->v[k];
            return "stop_sequence";
        }
    }
    return anth_stop_reason(finish);
}

static void watch_free(stop_watch *w) {
    for (int i = 0; i < w->n; i++) free(w->v[i]);
    wbuf_free(&w->raw);
}

/* One streamed message. */
typedef struct anth_stream {
    serve_server *s;
    chat_run *run;
    stop_watch stops;
    anth_blocks blk;
    char id[48];
    int phase; /* 0 nothing sent, 1 streaming, 2 ended */
    double t0;
} anth_stream;

static int stream_pull(void *ctx, wbuf *out, int timeout_ms) {
    anth_stream *st = ctx;
    const chat_run_info *info = chat_run_get_info(st->run);
    if (st->phase == 2) return 0;
    if (st->phase == 0) {
        st->phase = 1;
        st->t0 = wick_now_s();
        anth_sse_start(out, st->id, info->model, info->n_prompt);
        return 1;
    }
    const double limit = st->s->cfg.request_timeout_s;
    if (http_stopping(st->s->http) || (limit > 0 && wick_now_s() - st->t0 > limit)) {
        st->phase = 2; /* the turn is cancelled when the stream is released */
        anth_sse_error(out, 503, http_stopping(st->s->http) ? "server is shutting down" : "request timed out");
        return 0;
    }
    const job_result *res = NULL;
    fld_error e = {0};
    st->blk.sse = out;
    const int rc = chat_run_pull(st->run, timeout_ms, anth_blocks_on_ev, &st->blk, &res, &e);
    watch_batch(&st->stops, st->run);
    if (rc > 0) return 1;
    st->phase = 2;
    if (rc < 0) {
        anth_sse_error(out, e.status ? e.status : 500, e.msg[0] ? e.msg : "generation failed");
        return 0;
    }
    anth_blocks_end(&st->blk);
    const char *seq, *reason = watch_reason(&st->stops, st->run, res, &seq);
    anth_sse_finish(out, reason, seq, res->prompt_tokens, res->cached_tokens, res->generated_tokens);
    return 0;
}

static void stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    anth_stream *st = ctx;
    chat_run_free(st->run);
    anth_blocks_free(&st->blk);
    watch_free(&st->stops);
    free(st);
}

/* The whole message, once the turn has ended. */
static cJSON *whole_message(const char *id, const chat_run *run, const stop_watch *w, const job_result *res,
                            cJSON *content) {
    const chat_run_info *info = chat_run_get_info(run);
    const char *seq, *reason = watch_reason(w, run, res, &seq);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "id", id);
    cJSON_AddStringToObject(m, "type", "message");
    cJSON_AddStringToObject(m, "role", "assistant");
    cJSON_AddStringToObject(m, "model", info->model);
    cJSON_AddItemToObject(m, "content", content);
    cJSON_AddStringToObject(m, "stop_reason", reason);
    if (seq) cJSON_AddStringToObject(m, "stop_sequence", seq);
    else cJSON_AddNullToObject(m, "stop_sequence");
    wbuf u = {0};
    anth_usage_json(&u, res->prompt_tokens, res->cached_tokens, res->generated_tokens);
    cJSON_AddItemToObject(m, "usage", cJSON_Parse(u.data ? u.data : "{}"));
    wbuf_free(&u);
    return m;
}

void anth_messages(serve_server *s, http_call *c, cJSON *body) {
    fld_error e = {0};
    anth_req_opts opts;
    cJSON *oai = anth_to_openai(body, false, &opts, &e);
    if (!oai) {
        reply_anthropic_error(c, &e);
        return;
    }
    chat_run *run = NULL;
    /* max_tokens 0: the prompt computed into the prefix cache, nothing generated */
    const chat_run_opts ro = {.prefill_only = opts.prefill_only};
    const int rc = chat_run_start_opts(s, oai, &ro, &run, &e);
    stop_watch w;
    watch_init(&w, oai);
    cJSON_Delete(oai);
    if (rc < 0) {
        watch_free(&w);
        anth_rename_param(&e);
        reply_anthropic_error(c, &e);
        return;
    }
    const chat_run_info *info = chat_run_get_info(run);
    http_note(c, "model=%s prompt=%d", info->model, info->n_prompt);
    if (opts.stream) {
        anth_stream *st = calloc(1, sizeof *st);
        if (!st) {
            chat_run_free(run);
            watch_free(&w);
            fld_fail(&e, 500, NULL, "out of memory");
            reply_anthropic_error(c, &e);
            return;
        }
        st->s = s;
        st->run = run;
        st->stops = w;
        anth_blocks_init(&st->blk, true, opts.omit_thinking);
        reply_new_id(s, "msg_", st->id, sizeof st->id);
        http_reply_stream(c, 200, "text/event-stream", stream_pull, stream_fin, st);
        return;
    }
    anth_blocks blk;
    anth_blocks_init(&blk, false, opts.omit_thinking);
    const job_result *res = NULL;
    int pr;
    /* chat_run_collect's loop, with each batch's tokens watched for stop sequences */
    while ((pr = chat_run_pull(run, 200, anth_blocks_on_ev, &blk, &res, &e)) > 0) {
        watch_batch(&w, run);
        if (http_client_gone(c)) {
            pr = http_stopping(s->http) ? fld_fail(&e, 503, NULL, "server is shutting down")
                                        : fld_fail(&e, 499, NULL, "client closed the connection");
            break;
        }
    }
    if (pr == 0) watch_batch(&w, run);
    if (pr < 0) {
        reply_anthropic_error(c, &e);
    } else {
        anth_blocks_end(&blk);
        if (blk.oom) {
            fld_fail(&e, 500, NULL, "out of memory");
            reply_anthropic_error(c, &e);
        } else {
            char id[48];
            reply_new_id(s, "msg_", id, sizeof id);
            http_note(c, "model=%s prompt=%d cached=%d gen=%d", info->model, res->prompt_tokens, res->cached_tokens,
                      res->generated_tokens);
            reply_json(c, 200, whole_message(id, run, &w, res, anth_blocks_content(&blk)));
        }
    }
    anth_blocks_free(&blk);
    watch_free(&w);
    chat_run_free(run);
}

/* The prompt tokens of the turn an OpenAI chat body asks for, exactly as
 * chat_run.c builds it for the turn. */
static int count_prompt(serve_server *s, const cJSON *oai, int *n, fld_error *e) {
    chat_run *run = NULL;
    const chat_run_opts o = {.render_only = true};
    if (chat_run_start_opts(s, oai, &o, &run, e) < 0) return -1;
    const struct span_req *sr = NULL;
    (void)chat_run_prompt(run, n, &sr);
    chat_run_free(run);
    return 0;
}

void anth_count_tokens(serve_server *s, http_call *c, cJSON *body) {
    fld_error e = {0};
    anth_req_opts opts;
    cJSON *oai = anth_to_openai(body, true, &opts, &e);
    int n = 0;
    const int rc = oai ? count_prompt(s, oai, &n, &e) : -1;
    cJSON_Delete(oai);
    if (rc < 0) {
        anth_rename_param(&e);
        reply_anthropic_error(c, &e);
        return;
    }
    http_note(c, "count_tokens=%d", n);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "input_tokens", n);
    reply_json(c, 200, o);
}
