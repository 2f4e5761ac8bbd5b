/* responses.c — the routes of the OpenAI Responses API (see responses.h):
 * POST /v1/responses runs the translated request as a chat turn and answers
 * with the response object, or streams it as Responses SSE events
 * (response.created, response.in_progress, the items' events, then
 * response.completed / response.incomplete, or response.failed when the
 * turn fails after the stream began); the finished response is kept in the
 * server's store unless "store": false. GET and DELETE /v1/responses/{id}
 * read and drop stored responses. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/chat_run.h"
#include "serve/resp_store.h"
#include "serve/responses.h"

/* One response in the making. */
typedef struct resp_run {
    serve_server *s;
    chat_run *run;
    resp_conv conv;
    resp_out out;
    int phase; /* stream: 0 = nothing sent, 1 = streaming, 2 = ended */
} resp_run;

static void run_free(resp_run *r) {
    if (!r) return;
    chat_run_free(r->run);
    resp_conv_free(&r->conv);
    resp_out_free(&r->out);
    free(r);
}

/* Keep the finished response and the conversation it ends. */
static void keep(resp_run *r, const cJSON *obj) {
    cJSON *items = cJSON_Duplicate(r->conv.items, 1);
    const cJSON *it;
    cJSON_ArrayForEach(it, r->out.output) cJSON_AddItemToArray(items, cJSON_Duplicate(it, 1));
    char *resp_text = cJSON_PrintUnformatted(obj), *items_text = items ? cJSON_PrintUnformatted(items) : NULL;
    if (resp_text && items_text) resp_store_put(r->s->responses, r->out.id, resp_text, items_text);
    free(resp_text);
    free(items_text);
    cJSON_Delete(items);
}

/* The turn ended with res: close the output, build the response object,
 * keep it. *incomplete: cut short by max_output_tokens. */
static cJSON *finish(resp_run *r, const job_result *res, bool *incomplete) {
    *incomplete = strcmp(chat_run_finish_reason(r->run, res), "length") == 0;
    resp_out_end(&r->out, *incomplete);
    resp_usage u = {res->prompt_tokens, res->cached_tokens, res->generated_tokens};
    cJSON *obj = resp_object(&r->out, r->conv.echo, *incomplete ? "incomplete" : "completed", &u, NULL, NULL);
    if (r->conv.store && obj) keep(r, obj);
    return obj;
}

static int stream_pull(void *ctx, wbuf *out, int timeout_ms) {
    resp_run *r = ctx;
    r->out.sse = out;
    if (r->phase == 2) return 0;
    if (r->phase == 0) {
        r->phase = 1;
        resp_sse_response(&r->out, "response.created", resp_object(&r->out, r->conv.echo, "in_progress", NULL, NULL, NULL));
        resp_sse_response(&r->out, "response.in_progress", resp_object(&r->out, r->conv.echo, "in_progress", NULL, NULL, NULL));
        return 1;
    }
    fld_error e = {0};
    const job_result *res = NULL;
    int rc = chat_run_pull(r->run, timeout_ms, resp_out_event, &r->out, &res, &e);
    if (rc == 1) return 1;
    r->phase = 2;
    if (rc == 0 && res) {
        bool incomplete;
        cJSON *obj = finish(r, res, &incomplete);
        resp_sse_response(&r->out, incomplete ? "response.incomplete" : "response.completed", obj);
    } else {
        const int st = e.status ? e.status : 500;
        const char *code = st == 429 || st == 503 ? "rate_limit_exceeded" : st >= 500 ? "server_error" : "invalid_prompt";
        resp_sse_response(&r->out, "response.failed",
                          resp_object(&r->out, r->conv.echo, "failed", NULL, code, e.msg[0] ? e.msg : "generation failed"));
    }
    return 0;
}

static void stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    run_free(ctx);
}

void resp_create(serve_server *s, http_call *c, cJSON *body) {
    fld_error e = {0};
    const char *prev_id;
    cJSON *prev = NULL;
    resp_run *r = NULL;
    if (resp_previous_id(body, &prev_id, &e) < 0) goto fail;
    if (prev_id) {
        char *items = NULL;
        if (!resp_store_get(s->responses, prev_id, NULL, &items)) {
            fld_fail(&e, 404, "previous_response_id", "Previous response with id '%s' not found.", prev_id);
            snprintf(e.code, sizeof e.code, "previous_response_not_found");
            goto fail;
        }
        prev = cJSON_Parse(items);
        free(items);
        if (!prev) {
            fld_fail(&e, 500, NULL, "out of memory");
            goto fail;
        }
    }
    if (!(r = calloc(1, sizeof *r))) {
        fld_fail(&e, 500, NULL, "out of memory");
        goto fail;
    }
    r->s = s;
    if (resp_convert(body, prev, &r->conv, &e) < 0) goto fail;
    cJSON_Delete(prev);
    prev = NULL;
    if (chat_run_start(s, r->conv.chat, &r->run, &e) < 0) {
        resp_error_param(&e);
        goto fail;
    }
    const chat_run_info *info = chat_run_get_info(r->run);
    char id[64];
    reply_new_id(s, "resp_", id, sizeof id);
    resp_out_init(&r->out, id, (long long)time(NULL), info->model, NULL);
    http_note(c, "model=%s prompt=%d", info->model, info->n_prompt);
    if (r->conv.stream) {
        http_reply_stream(c, 200, "text/event-stream", stream_pull, stream_fin, r);
        return;
    }
    const job_result *res = NULL;
    if (chat_run_collect(r->run, c, resp_out_event, &r->out, &res, &e) < 0 || !res) {
        if (!e.status) fld_fail(&e, 500, NULL, "generation failed");
        goto fail;
    }
    bool incomplete;
    cJSON *obj = finish(r, res, &incomplete);
    if (r->out.oom || !obj) {
        cJSON_Delete(obj);
        fld_fail(&e, 500, NULL, "out of memory");
        goto fail;
    }
    http_note(c, "model=%s prompt=%d cached=%d gen=%d", info->model, res->prompt_tokens, res->cached_tokens,
              res->generated_tokens);
    reply_json(c, 200, obj);
    run_free(r);
    return;
fail:
    cJSON_Delete(prev);
    run_free(r);
    reply_openai_error(c, &e);
}

void resp_get(serve_server *s, http_call *c, const char *id) {
    fld_error e = {0};
    const char *stream = http_query(c, "stream");
    if (stream && strcmp(stream, "false") != 0) {
        fld_fail(&e, 400, "stream", "streaming a stored response again is not supported");
        reply_openai_error(c, &e);
        return;
    }
    char *text = NULL;
    if (!resp_store_get(s->responses, id, &text, NULL)) {
        fld_fail(&e, 404, NULL, "Response with id '%s' not found.", id);
        reply_openai_error(c, &e);
        return;
    }
    http_reply(c, 200, "application/json", text, strlen(text));
    free(text);
}

void resp_delete(serve_server *s, http_call *c, const char *id) {
    fld_error e = {0};
    if (!resp_store_delete(s->responses, id)) {
        fld_fail(&e, 404, NULL, "Response with id '%s' not found.", id);
        reply_openai_error(c, &e);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", id);
    cJSON_AddStringToObject(j, "object", "response");
    cJSON_AddBoolToObject(j, "deleted", true);
    reply_json(c, 200, j);
}
