/* anthropic.h — the Anthropic Messages API: POST /v1/messages (whole or
 * streamed as SSE with `event:` lines) and POST /v1/messages/count_tokens.
 * Nothing is generated here: a Messages body is translated into an OpenAI
 * chat-completions body and run as the shared chat turn (chat_run.h), whose
 * parsed events (reasoning, content, tool calls) become Messages content
 * blocks again. anthropic_convert.c holds the translations both ways (pure,
 * tested on their own); anthropic.c the two routes. */
#ifndef WICK_SERVE_ANTHROPIC_H
#define WICK_SERVE_ANTHROPIC_H

#include <cJSON.h>
#include <stdbool.h>

#include "core/buf.h"
#include "serve/fields.h"
#include "serve/server.h"
#include "serve/tool_parse.h"

/* ---- routes (anthropic.c) ---- */
void anth_messages(serve_server *s, http_call *c, cJSON *body);     /* POST /v1/messages */
void anth_count_tokens(serve_server *s, http_call *c, cJSON *body); /* POST /v1/messages/count_tokens */
/* {"type":"error","error":{"type","message"}} with e's status and retry
 * headers: every error of the two routes (also usable by the router for its
 * own errors on these paths: bad JSON, 401, 415). */
void reply_anthropic_error(http_call *c, const fld_error *e);

/* ---- the request (anthropic_convert.c) ---- */

/* What the translated body cannot carry. */
typedef struct anth_req_opts {
    bool stream;         /* "stream": true */
    bool omit_thinking;  /* thinking.display "omitted": thinking blocks come back empty */
    bool prefill_only;   /* max_tokens 0: compute the prompt (warming the cache), generate nothing */
} anth_req_opts;

/* Translate a Messages body (count_tokens: the count_tokens body, which has
 * no max_tokens and no generation fields) into a new OpenAI
 * chat-completions body:
 *   system (string or text blocks)      -> a first system message
 *   messages: text                      -> content
 *             tool_use (assistant)      -> tool_calls, arguments = input as JSON text
 *             tool_result (user)        -> "tool" messages with tool_call_id (is_error:
 *                                          the text gets an "Error: " prefix)
 *             thinking (assistant)      -> reasoning_content
 *             a final assistant message -> continue_final_message (prefill)
 *   tools [{name, description, input_schema, strict}] -> function tools
 *   tool_choice auto|any|tool|none      -> "auto" | "required" | {function} | "none";
 *             disable_parallel_tool_use -> parallel_tool_calls false
 *   max_tokens (required), temperature, top_p, top_k, stream -> the same names
 *             (max_tokens 0: left out, prefill_only set)
 *   stop_sequences                      -> stop
 *   thinking enabled|disabled           -> chat_template_kwargs.enable_thinking true|false
 *             (adaptive: the template's default)
 *   output_config.format json_schema    -> response_format json_schema
 * metadata, cache_control (prefix caching is automatic), service_tier, speed
 * and inference_geo ask nothing of the output and are accepted. Images,
 * documents, server tools and the fields wick does not implement
 * (container, mcp_servers, context_management, diagnostics,
 * output_config.effort) are a 400 naming the field. NULL + e (400) on a
 * bad body. */
cJSON *anth_to_openai(const cJSON *body, bool count_tokens, anth_req_opts *opts, fld_error *e);

/* An error of the chat turn names the OpenAI field it read: the Messages
 * field that became it ("stop" -> "stop_sequences", ...). */
void anth_rename_param(fld_error *e);

/* ---- the response (anthropic_convert.c) ---- */

/* The error type of a status: invalid_request_error (400, 422),
 * authentication_error (401), permission_error (403), not_found_error (404),
 * request_too_large (413), rate_limit_error (429), overloaded_error (503,
 * 529), api_error (the rest). */
const char *anth_error_type(int status);
/* {"type":"error","error":{"type":...,"message":...}} */
void anth_error_json(wbuf *o, int status, const char *msg);
/* The SSE error event a stream ends with when the turn fails midway. */
void anth_sse_error(wbuf *o, int status, const char *msg);
/* The chat turn's finish reason ("tool_calls", "length", "stop") as a
 * stop_reason ("tool_use", "max_tokens", "end_turn"). */
const char *anth_stop_reason(const char *finish);
/* A tool_use id from a call id: "toolu_" + the id without its "call_". */
void anth_tool_id(const char *call_id, char *out, size_t cap);
/* {"input_tokens","output_tokens","cache_read_input_tokens","cache_creation_input_tokens"}:
 * input_tokens are the prompt tokens not read from the prefix cache, as
 * Anthropic counts them (all three inputs add up to the prompt). */
void anth_usage_json(wbuf *o, int prompt_tokens, int cached_tokens, int output_tokens);
/* The stream's first events: message_start (empty content, usage with the
 * whole prompt as input) and a ping. */
void anth_sse_start(wbuf *o, const char *id, const char *model, int prompt_tokens);
/* The stream's last events: message_delta (stop_reason, stop_sequence or
 * null, usage) and message_stop. */
void anth_sse_finish(wbuf *o, const char *stop_reason, const char *stop_sequence, int prompt_tokens,
                     int cached_tokens, int output_tokens);
/* Which of n stop sequences ended a turn whose generated text, stop
 * sequence included, is raw (the pieces of its tokens): the one found first
 * (the engine ends the text before the first; at one place, the shorter),
 * -1 if none is in it (the turn ended otherwise). */
int anth_stop_match(const char *raw, size_t len, const char *const *stops, int n);

/* The parsed turn as content blocks, in the order they come (normally
 * thinking, text, then tool_use blocks): each change of kind closes the
 * open block and starts the next; a tool call is one block. Text or
 * reasoning that is only whitespace starts no block (it joins the block of
 * its kind if more text follows; a reply of whitespace alone is one text
 * block).
 * Streamed: content_block_start / content_block_delta (text_delta,
 * thinking_delta, input_json_delta) / content_block_stop events appended to
 * *sse. Whole: the blocks gathered for anth_blocks_content. */
typedef struct anth_blocks {
    bool stream;
    wbuf *sse;           /* streamed: where the events go (set before each feed) */
    bool omit_thinking;  /* thinking blocks carry no text */
    int n;               /* blocks started */
    int open;            /* the open block's kind: 0 none, 1 thinking, 2 text, 3 tool_use */
    int pending_kind;    /* the kind of the whitespace held back (1 or 2), 0 none */
    wbuf pending;        /* whitespace not yet in a block */
    wbuf text;           /* whole: the open block's text */
    wbuf args;           /* the open call's arguments so far */
    char tool_id[80], tool_name[256];
    cJSON *content;      /* whole: the closed blocks */
    bool oom;
} anth_blocks;

void anth_blocks_init(anth_blocks *b, bool stream, bool omit_thinking);
/* One parsed event (a tool_ev_fn; user is the anth_blocks). Returns 0. */
int anth_blocks_on_ev(void *user, const tool_ev *ev);
/* The turn ended: close the open block. */
void anth_blocks_end(anth_blocks *b);
/* Whole: the content array (owned by the caller); b keeps none. */
cJSON *anth_blocks_content(anth_blocks *b);
void anth_blocks_free(anth_blocks *b);

#endif
