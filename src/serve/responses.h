/* responses.h — the OpenAI Responses API: POST /v1/responses, GET and
 * DELETE /v1/responses/{id}. A request is translated to an OpenAI
 * chat-completions body and run as a chat turn (chat_run.h); the turn's
 * parsed events (content, reasoning, tool calls) become the response's
 * output items, whole or streamed as Responses SSE events. Responses are
 * kept (resp_store.h) for GET and previous_response_id unless the request
 * says "store": false.
 *   responses_convert.c  the pure part: request → chat body, the output
 *                        items and their events, the response object
 *   responses.c          the routes */
#ifndef WICK_SERVE_RESPONSES_H
#define WICK_SERVE_RESPONSES_H

#include <cJSON.h>
#include <stdbool.h>

#include "core/buf.h"
#include "serve/fields.h"
#include "serve/server.h"
#include "serve/tool_parse.h"

/* ---- the request (responses_convert.c) ---- */

typedef struct resp_conv {
    cJSON *chat;  /* the chat-completions body */
    cJSON *items; /* the conversation so far as Responses input items: the
                     previous response's (its inputs and outputs), then this
                     request's input; the store keeps it with the output */
    cJSON *echo;  /* the request fields a response object repeats, in its shape */
    bool stream, store;
} resp_conv;

/* The request's previous_response_id (NULL when absent): 0, or -1 with e. */
int resp_previous_id(const cJSON *body, const char **id, fld_error *e);
/* Translate a request. prev: the conversation stored for its
 * previous_response_id (an array of items), or NULL. 0, or -1 with e (a 400
 * naming the field: a wrong type, an input item or tool type wick does not
 * implement, a field set to a value wick does not implement). */
int resp_convert(const cJSON *body, const cJSON *prev, resp_conv *out, fld_error *e);
void resp_conv_free(resp_conv *c);
/* An error about the chat body, with the field named as the Responses
 * request names it (max_tokens → max_output_tokens, messages → input, ...). */
void resp_error_param(fld_error *e);

/* ---- the output (responses_convert.c) ---- */

typedef enum resp_item_kind { RESP_ITEM_NONE, RESP_ITEM_MESSAGE, RESP_ITEM_REASONING, RESP_ITEM_CALL } resp_item_kind;

/* The output items of one response, built from a turn's parsed events. Each
 * text item (message, reasoning) opens at its first non-blank text and
 * leaves out blank text at its ends (the newlines around tags); a part of a
 * UTF-8 character waits for the rest. Streamed, every change is an SSE
 * event appended to sse. */
typedef struct resp_out {
    char id[64];          /* "resp_..." */
    long long created_at; /* Unix seconds */
    char *model;
    wbuf *sse;            /* where events go (NULL: not streamed) */
    long long seq;        /* the next event's sequence_number */
    cJSON *output;        /* the items closed so far */
    resp_item_kind open;  /* the item open now */
    char item_id[96];
    wbuf text;            /* its text sent so far (a call: its arguments) */
    wbuf pend;            /* text not sent yet: trailing blanks, a part of a character */
    char *call_id, *name;
    bool call_ended;      /* the open call's arguments are whole (it closes with what comes next) */
    int n_ids;            /* item ids handed out */
    bool any_message, any_call;
    bool oom;
} resp_out;

/* id: the response's id; sse: NULL or the buffer events go to (it may be
 * swapped between calls). */
void resp_out_init(resp_out *o, const char *id, long long created_at, const char *model, wbuf *sse);
void resp_out_free(resp_out *o);
/* A tool_ev_fn: the next piece of the turn. */
int resp_out_event(void *user, const tool_ev *ev);
/* The turn has ended: the open item closes ("incomplete" when the turn was
 * cut short); a turn that made neither a message nor a call gets an empty
 * message. */
void resp_out_end(resp_out *o, bool incomplete);

typedef struct resp_usage {
    int input, cached, output;
} resp_usage;

/* The response object with status "in_progress" (output [], usage null),
 * "completed", "incomplete" (incomplete_details.reason
 * "max_output_tokens") or "failed" (error {code, message}: error_code and
 * error_msg). echo: resp_conv's. */
cJSON *resp_object(const resp_out *o, const cJSON *echo, const char *status, const resp_usage *u,
                   const char *error_code, const char *error_msg);
/* One SSE event "event: TYPE" whose data is j's members after "type" and
 * "sequence_number" (j is deleted). */
void resp_sse(resp_out *o, const char *type, cJSON *j);
/* An event that carries the whole response: {"response": obj} (obj is
 * deleted). */
void resp_sse_response(resp_out *o, const char *type, cJSON *obj);

/* ---- the routes (responses.c) ---- */

/* POST /v1/responses */
void resp_create(serve_server *s, http_call *c, cJSON *body);
/* GET /v1/responses/{id}: the stored response, else 404 */
void resp_get(serve_server *s, http_call *c, const char *id);
/* DELETE /v1/responses/{id}: {"id", "object": "response", "deleted": true}, else 404 */
void resp_delete(serve_server *s, http_call *c, const char *id);

#endif
