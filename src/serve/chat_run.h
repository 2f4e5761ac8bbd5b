/* chat_run.h — one chat turn from request to parsed output, shared by every
 * chat API: the OpenAI chat-completions body (other APIs translate theirs to
 * it first: Anthropic /v1/messages, /v1/responses) is checked, its model
 * leased, its conversation rendered with tools, tool_choice's grammar
 * compiled and the job submitted; the job's text then comes back split by
 * the model family's parser (tool_parse.h) into content, reasoning and
 * tool-call events. */
#ifndef WICK_SERVE_CHAT_RUN_H
#define WICK_SERVE_CHAT_RUN_H

#include <cJSON.h>

#include "serve/server.h"
#include "serve/tool_parse.h"

typedef struct chat_run chat_run;

/* What a started turn is, for the API formatting it. */
typedef struct chat_run_info {
    const char *model;      /* the leased model's name */
    bool stream;            /* the body asked for "stream": true */
    bool include_usage;     /* stream_options.include_usage */
    int n_prompt;           /* prompt tokens */
    bool spans;             /* a span request: usage reports span_cached_tokens */
    unsigned long long seed; /* the seed this run samples with */
    tool_format format;     /* the model's tool and reasoning syntax */
    bool progress;          /* llama.cpp's return_progress (streamed): prompt_progress chunks */
    bool timings;           /* llama.cpp's timings_per_token (streamed): timings on the chunks */
} chat_run_info;

/* How one run of a request starts (zeroed: the body's request as it is). */
struct span_req;

typedef struct chat_run_opts {
    bool prefill_only;    /* compute the prompt, generate nothing (a cache warm-up) */
    bool seed_set;        /* sample with seed (n > 1: the base seed + the choice's index) */
    unsigned long long seed;
    bool prompt_shared;   /* another run of the request counted the prompt */
    bool render_only;     /* build the prompt and stop: nothing is submitted (chat_run_prompt) */
} chat_run_opts;

/* Start the turn an OpenAI chat-completions body asks for. -1 with e (the
 * status and message to answer with; nothing is replied) on a bad body, an
 * unknown model, a prompt too long, a full queue. */
int chat_run_start(serve_server *s, const cJSON *body, chat_run **out, fld_error *e);
/* The same with options (o may be NULL). */
int chat_run_start_opts(serve_server *s, const cJSON *body, const chat_run_opts *o, chat_run **out, fld_error *e);
const chat_run_info *chat_run_get_info(const chat_run *r);
/* A render_only run's prompt, exactly as the turn would submit it (tools
 * left out for tool_choice "none", a forced call's opening written at the
 * end): its token ids, or its span segments (then *n_ids is their whole
 * length and *spans non-NULL). */
const int32_t *chat_run_prompt(const chat_run *r, int *n_ids, const struct span_req **spans);

/* Take what the job produced so far (waiting up to timeout_ms), passing
 * the parsed events to fn. Returns 1 while the turn goes on, 0 when it has
 * ended (then *res, if given, holds the result: finish, token counts), -1
 * when it ended in an error or was cancelled (e holds the error to send). */
int chat_run_pull(chat_run *r, int timeout_ms, tool_ev_fn fn, void *user, const job_result **res, fld_error *e);
/* The prompt's processing so far (total 0 before the first record; asked
 * for with return_progress or timings_per_token) and the time since the
 * submit, in ms. */
const job_progress *chat_run_progress(const chat_run *r);
double chat_run_elapsed_ms(const chat_run *r);
/* The job's last batch taken by chat_run_pull: its tokens (for logprobs). */
const job_batch *chat_run_last_batch(const chat_run *r);
const wick_model *chat_run_model(const chat_run *r);
/* The request's logprobs: -1 none, else top-N. */
int chat_run_logprobs(const chat_run *r);
/* The whole turn for a non-streamed answer: chat_run_pull until the end,
 * watching client c (gone: -1 with a 499 in e; server stopping: 503). */
int chat_run_collect(chat_run *r, http_call *c, tool_ev_fn fn, void *user, const job_result **res, fld_error *e);
/* The finish reason the APIs report: "tool_calls" when a call was made and
 * the turn stopped there, else "stop" / "length". */
const char *chat_run_finish_reason(const chat_run *r, const job_result *res);
/* Cancel if still running, release the job and the model's lease. */
void chat_run_free(chat_run *r);

#endif
