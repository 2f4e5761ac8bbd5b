/* server.h — what the route handlers of `wick serve` share: the server
 * object, JSON and error replies (OpenAI and Ollama shapes), and the
 * generation steps both APIs run (submit a request, wait for its output). */
#ifndef WICK_SERVE_SERVER_H
#define WICK_SERVE_SERVER_H

#include <cJSON.h>
#include <stdatomic.h>

#include "serve/fields.h"
#include "serve/http.h"
#include "serve/job.h"
#include "serve/model_pool.h"
#include "serve/origin.h"
#include "serve/resp_store.h"
#include "serve/serve.h"

struct serve_server {
    serve_config cfg;
    serve_pool *pool;
    http_server *http;
    origin_policy origins;      /* browser origins and Host names answered */
    double started;             /* wall-clock seconds */
    _Atomic unsigned long long next_id;
    resp_store *responses;      /* the Responses API's kept responses (responses.c) */
    struct ln_slots *slots;     /* llama-server's slot records (llama_native_slots.c) */
};

/* ---- replies (reply.c) ---- */
void reply_json(http_call *c, int status, cJSON *j); /* prints and deletes j */
void reply_text(http_call *c, int status, const char *content_type, const char *text);
/* {"error":{"message","type","param","code"}} with retry headers as e says */
void reply_openai_error(http_call *c, const fld_error *e);
/* {"error":"message"} */
void reply_ollama_error(http_call *c, const fld_error *e);
/* A unique id with a prefix: "chatcmpl-5f2c...". */
void reply_new_id(serve_server *s, const char *prefix, char *out, size_t cap);
/* RFC 3339 UTC time with nanoseconds, as Ollama writes created_at. */
void reply_rfc3339(double wall_s, char *out, size_t cap);

/* ---- generation (gen.c) ---- */
typedef struct gen_params {
    int32_t *ids;         /* the prompt (owned by the caller) */
    int n_ids;
    long long n_predict;  /* -1 = until the context is full; clamped to the room left */
    wick_sampling sampling;
    fld_stops stop;
    bool ignore_eos, new_message;
    int logprobs;         /* -1 none, else top-N */
    bool post_sampling_probs; /* with logprobs: the sampled distribution's probabilities instead */
    const char *cache_salt; /* prefix-cache salt (NULL = none); read at submit */
    const wick_spans *spans; /* a span request (ids unused; n_ids = its whole length); read at submit */
    wick_spec_request spec;  /* speculative decoding (zeroed: the server's default) */
    bool chat;               /* the prompt came from messages (errors name "messages", else "prompt") */
    int n_ctx_limit;         /* a context smaller than the model's for this request (Ollama's num_ctx); 0 = none */
    const struct fld_grammar *grammar; /* structured output (NULL or kind 0 = none); compiled at submit */
    bool prompt_shared;      /* a later choice of an n > 1 request: the prompt was counted once */
    bool progress;           /* job_batch.prog records of the prompt's processing (return_progress) */
    bool forget_prefix;      /* drop the prompt's cached KV instead of computing (wick_request.forget_prefix) */
    /* context shift (the server's --context-shift; see gen_fit_context) */
    bool ctx_shift;
    int n_keep;              /* prompt tokens kept at the start (-1 = all); clamped by gen_fit_context */
    int n_discard;           /* tokens a generation shift drops; 0 = half of those after n_keep */
    bool truncated;          /* gen_fit_context cut the prompt */
} gen_params;

/* Context shift's prompt truncation, as llama-server does it: with
 * g->ctx_shift, n_keep is clamped (-1 = the whole prompt, at most n_ctx - 4)
 * and a prompt of n_ctx tokens or more keeps its first n_keep tokens and the
 * end after whole blocks of (n_ctx - n_keep) / 2 tokens are dropped from the
 * middle (g->ids cut in place, g->n_ids and g->truncated set). Without
 * ctx_shift, or for span requests and a per-request context (n_ctx_limit),
 * nothing changes. */
void gen_fit_context(const mpool_lease *l, gen_params *g);
/* The request's "n_keep" and "n_discard" into g when the server shifts
 * contexts (else they stay refused where they are listed as unsupported):
 * 0, or -1 with e (not an integer, n_keep < -1, n_discard < 0). */
int gen_shift_fields(const serve_server *s, const cJSON *body, gen_params *g, fld_error *e);

/* Submit to the leased model: 400 (+ x-should-retry false) when the prompt
 * leaves no room (a span request longer than the context: the library's
 * message), 400 naming the field when the grammar does not compile (the
 * compile runs here, on the HTTP thread), 503 + retry-after when the queue
 * is full. */
job *gen_submit(serve_server *s, const mpool_lease *l, const gen_params *g, fld_error *e);
/* Wait for the whole output, appending every event into acc (events and
 * text, offsets rebased). Returns 0 at the end, -1 if the client left or the
 * server is stopping (the job is cancelled). */
int gen_collect(serve_server *s, http_call *c, job *j, job_batch *acc);
/* Append batch b's events and text to acc. */
void gen_append(job_batch *acc, const job_batch *b);
/* The finish reason as OpenAI / Ollama name it. */
const char *gen_finish_name(wick_finish f);

/* ---- routes ---- */
void routes_dispatch(void *user, http_call *c); /* the http_handler */
void routes_refuse(void *user, http_call *c, int status, const char *why); /* the http_refuse_fn */

void oai_model(serve_server *s, http_call *c, const char *id);
void oai_completions(serve_server *s, http_call *c, cJSON *body);
void oai_chat(serve_server *s, http_call *c, cJSON *body);
void oai_render_completions(serve_server *s, http_call *c, cJSON *body);
void oai_render_chat(serve_server *s, http_call *c, cJSON *body);
/* Lease the model the body's "model" names (or the default one): 0, or
 * replies with the OpenAI error (404 model_not_found for an unknown name)
 * and -1. The routes of openai.c and util.c take their model through it. */
int oai_lease_model(serve_server *s, http_call *c, const cJSON *b, mpool_lease *l);
void spnl_execute(serve_server *s, http_call *c, cJSON *body); /* POST /v1/query/execute (spnl.c) */

void oll_generate(serve_server *s, http_call *c, cJSON *body);
void oll_chat(serve_server *s, http_call *c, cJSON *body);
void oll_tags(serve_server *s, http_call *c);
void oll_ps(serve_server *s, http_call *c);
void oll_show(serve_server *s, http_call *c, cJSON *body);
void oll_version(serve_server *s, http_call *c);

void util_health(serve_server *s, http_call *c);
void util_metrics(serve_server *s, http_call *c);
void util_tokenize(serve_server *s, http_call *c, cJSON *body);
void util_detokenize(serve_server *s, http_call *c, cJSON *body);

#endif
