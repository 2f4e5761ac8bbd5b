/* openai.h — the OpenAI-compatible generation routes, split in two files:
 * openai.c reads and checks requests and runs them; openai_format.c writes
 * responses, stream chunks and logprobs. */
#ifndef WICK_SERVE_OPENAI_H
#define WICK_SERVE_OPENAI_H

#include "serve/fields_grammar.h"
#include "serve/prompt.h"
#include "serve/server.h"

typedef struct oai_req {
    bool chat, stream, include_usage, continuous_usage, echo;
    int n;             /* choices ("n"; completions: 1) */
    int id_slot;       /* llama.cpp's slot to run on (-1 any): checked to exist; where a request runs never changes its output */
    int logprobs;      /* -1 none; else top-N (chat: top_logprobs) */
    wick_logit_bias *bias; /* logit_bias (malloc'd; g.sampling points here) */
    int n_bias;
    fld_grammar gr;    /* structured output (g.grammar points here) */
    gen_params g;
} oai_req;

/* One choice of a /v1/completions response: prompt p's choice j is choice
 * p * n + j. */
typedef struct oai_choice {
    job *j;
    job_batch b;      /* the last batch taken (stream) */
    wbuf echo;        /* "echo": its prompt's text, sent before the output */
    int index;
    int n_prompt, n_gen; /* continuous usage: prompt tokens, tokens streamed so far */
    size_t text_off;  /* text bytes sent so far (text_offset) */
    bool counts_prompt; /* its prompt counts in usage (n = 1; else the prefill run counted it) */
    bool ended;
} oai_choice;

/* One /v1/completions response in the making, streamed or whole. */
typedef struct oai_resp {
    serve_server *s;
    mpool_lease lease;
    oai_choice *ch;
    int n_ch;
    bool include_usage, continuous_usage;
    bool spans;       /* a span request: usage reports span_cached_tokens */
    int logprobs;
    int prompt_tokens, cached_tokens, span_cached_tokens; /* the prefill runs' (n > 1), summed */
    char id[48];
    long long created;
    int phase;        /* stream: 0 = nothing sent, 1 = streaming, 2 = ended */
    double t0;
} oai_resp;

/* /v1/chat/completions on a parsed body (oai_chat, and the spnl route's
 * translated queries); prefill_only: compute the prompt, generate nothing
 * (openai_chat.c). */
void oai_chat_run(serve_server *s, http_call *c, cJSON *body, bool prefill_only);

/* The request checks the chat turn (chat_run.c) shares with completions:
 * the fields both routes read, logprobs, sampling over the leased model's
 * defaults and logit_bias, the chat prompt's fields. 0 or -1 with e. */
int oai_parse_common(const cJSON *b, oai_req *q, fld_error *e);
int oai_parse_logprobs(const cJSON *b, oai_req *q, fld_error *e);
/* id_slot names one of the server's --parallel slots, or -1 (any). */
int oai_check_slot(const serve_server *s, const oai_req *q, fld_error *e);
int oai_sampling_for(const serve_server *s, const mpool_lease *l, const cJSON *b, oai_req *q, fld_error *e);
int oai_chat_opts(const cJSON *b, prompt_chat_opts *o, fld_error *e);
/* Lease the body's model: 0, or -1 with e (404 model_not_found). */
int oai_lease(serve_server *s, const cJSON *b, mpool_lease *l, fld_error *e);

/* The whole answer (non-streaming) into out: acc[i] holds choice i's output. */
void oai_format_whole(oai_resp *r, const job_batch *acc, wbuf *out);
/* {"content":[{token, logprob, bytes, top_logprobs}, ...]} of n tokens. */
void oai_chat_logprobs(wbuf *o, const wick_model *m, const job_event *ev, size_t n);
/* Stream pull (http_pull_fn) and end (http_fin_fn) over an oai_resp. */
int oai_stream_pull(void *ctx, wbuf *out, int timeout_ms);
void oai_stream_fin(void *ctx, bool aborted);

#endif
