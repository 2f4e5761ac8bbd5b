/* openai.h — the OpenAI-compatible generation routes, split in two files:
 * openai.c reads and checks requests and runs them; openai_format.c writes
 * responses, stream chunks and logprobs. */
#ifndef WICK_SERVE_OPENAI_H
#define WICK_SERVE_OPENAI_H

#include "serve/fields_grammar.h"
#include "serve/server.h"

typedef struct oai_req {
    bool chat, stream, include_usage;
    int logprobs;      /* -1 none; else top-N (chat: top_logprobs) */
    wick_logit_bias *bias; /* logit_bias (malloc'd; g.sampling points here) */
    int n_bias;
    fld_grammar gr;    /* structured output (g.grammar points here) */
    gen_params g;
} oai_req;

/* One response in the making, streamed or whole. */
typedef struct oai_resp {
    serve_server *s;
    mpool_lease lease;
    job *j;
    job_batch b;      /* the last batch taken (stream) */
    bool chat, include_usage;
    bool spans;       /* a span request: usage reports span_cached_tokens */
    int logprobs;
    char id[48];
    long long created;
    int phase;        /* stream: 0 = nothing sent, 1 = streaming, 2 = ended */
    size_t text_off;  /* completions: text bytes sent so far (text_offset) */
    double t0;
} oai_resp;

/* /v1/chat/completions on a parsed body (oai_chat, and the spnl route's
 * translated queries); prefill_only: compute the prompt, generate nothing. */
void oai_chat_run(serve_server *s, http_call *c, cJSON *body, bool prefill_only);

/* The whole answer (non-streaming) into out. */
void oai_format_whole(oai_resp *r, const job_batch *acc, const job_result *res, wbuf *out);
/* Stream pull (http_pull_fn) and end (http_fin_fn) over an oai_resp. */
int oai_stream_pull(void *ctx, wbuf *out, int timeout_ms);
void oai_stream_fin(void *ctx, bool aborted);

#endif
