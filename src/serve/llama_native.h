/* llama_native.h — llama.cpp's own server API (llama-server's native
 * routes) over wick's scheduler, split by concern:
 *   llama_native.c          POST /completion, /completions, /infill: the
 *                           request fields as llama-server reads them, the
 *                           prompts (text, ids, mixed, several), the run
 *   llama_native_format.c   their answers: whole, SSE chunks, probabilities,
 *                           timings, generation_settings
 *   llama_native_info.c     GET/POST /props, POST /apply-template, the
 *                           llama-server shape of /models and /v1/models
 *   llama_native_slots.c    GET /slots and POST /slots/{id}?action=...:
 *                           the server's record of its slots and their
 *                           save / restore / erase over the prefix cache
 * Fields llama-server has and wick cannot honour are a 400 naming them. */
#ifndef WICK_SERVE_LLAMA_NATIVE_H
#define WICK_SERVE_LLAMA_NATIVE_H

#include <pthread.h>

#include "serve/fields_grammar.h"
#include "serve/server.h"

/* One completion request's settings, as generation_settings reports them. */
typedef struct ln_params {
    gen_params g;
    fld_grammar gr;
    wick_logit_bias *bias;
    int n_bias;
    int n_probs;          /* 0 = none */
    bool stream, return_tokens, cache_prompt;
    int id_slot;          /* -1 = any */
    char samplers[16];    /* the samplers applied, llama-server's letters, in wick's order */
    cJSON *fields;        /* response_fields: the paths a whole answer keeps (owned; NULL = all) */
} ln_params;

/* ---- slots (llama_native_slots.c) ---- */

/* A slot: what wick's server remembers of the last request filed under it.
 * Wick's scheduler places a request on a free sequence itself (the one with
 * the longest cached prefix); a slot is the server's record of a request's
 * prompt, output and settings, the unit /slots shows, saves and restores. */
typedef struct ln_slot {
    int id;
    int busy;             /* requests filed under it now */
    char model[256];
    int32_t *tokens;      /* the last prompt, then its generated ids */
    int n_tokens, n_prompt;
    int n_ctx;
    char *settings;       /* the last generation_settings (JSON text) */
    char *prompt;         /* the last prompt's text */
    int n_decoded, n_remain;
    long long task_id;
} ln_slot;

typedef struct ln_slots {
    pthread_mutex_t mu;
    int n;
    long long next_task;
    ln_slot *v;
} ln_slots;

ln_slots *ln_slots_new(int n);
void ln_slots_free(ln_slots *t);
/* Take a slot for a request of prompt ids (want >= 0: that one; else a
 * free one with the longest common prefix, then the lowest id). -1 with e
 * (400 for a slot out of range, 503 when all are busy). */
int ln_slot_take(serve_server *s, int want, const char *model, int n_ctx, const int32_t *ids, int n, fld_error *e);
/* The request on slot id ended: its generated ids and settings recorded. */
void ln_slot_done(serve_server *s, int id, const int32_t *ids, int n_prompt, const int32_t *gen, int n_gen,
                  const char *settings_json, const char *prompt_text);

void ln_slots_get(serve_server *s, http_call *c);
/* POST /slots/{id}?action=save|restore|erase (rest: the path after "/slots/"). */
void ln_slots_action(serve_server *s, http_call *c, const char *rest, cJSON *body);

/* ---- completions (llama_native.c) ---- */

void ln_completion(serve_server *s, http_call *c, cJSON *body);
void ln_infill(serve_server *s, http_call *c, cJSON *body);
/* A prompt as llama-server tokenizes one: a string, or an array of token
 * ids and strings (special-token text recognized; BOS, when add_special,
 * only before a leading string). *ids malloc'd; 0 or -1 with e. */
int ln_prompt_mixed(const wick_model *m, const cJSON *p, bool add_special, int max_ids, int32_t **ids, int *n,
                    fld_error *e);
/* The sampling base every native request starts from (the model's defaults). */
wick_sampling ln_sampling_base(const serve_server *s, const mpool_lease *l);

/* ---- answers (llama_native_format.c) ---- */

/* One prompt's run, streamed or collected. */
typedef struct ln_task {
    serve_server *s;
    const mpool_lease *lease;
    const ln_params *p;
    job *j;
    int index, slot;
    int32_t *ids;         /* its prompt (owned) */
    int n_ids;
    job_batch acc;        /* everything so far (whole answers, and the end of a stream) */
    job_batch b;          /* the last batch taken (stream) */
    bool ended;
    bool truncated;       /* context shift cut its prompt (gen_fit_context) */
    double t0;
} ln_task;

/* generation_settings of p on the leased model (n_ctx, params, ...). */
cJSON *ln_settings_json(const ln_params *p, const mpool_lease *l);
/* The final result object of a task that ended (stream: content and
 * tokens empty, as llama-server's last chunk). */
cJSON *ln_result_json(const ln_task *t, const job_result *res, bool stream);
/* A partial stream chunk of events ev[0, n) (their text). */
cJSON *ln_chunk_json(const ln_task *t, const job_event *ev, size_t n, const char *text);
/* response_fields: only the values at these paths ("a/b" = o.a.b), each
 * under its path as the key; o is replaced. */
cJSON *ln_pick_fields(cJSON *o, const cJSON *paths);
/* completion_probabilities of events ev[0, n): {id, token, bytes, logprob,
 * top_logprobs}, or with post (post_sampling_probs) {..., prob, top_probs}. */
cJSON *ln_probs_json(const wick_model *m, const job_event *ev, size_t n, bool post);

/* ---- the rest (llama_native_info.c) ---- */

void ln_props_get(serve_server *s, http_call *c);
void ln_props_post(serve_server *s, http_call *c, cJSON *body);
void ln_apply_template(serve_server *s, http_call *c, cJSON *body);
/* POST /v1/chat/completions/input_tokens: {"object": "response.input_tokens", "input_tokens": N}. */
void ln_chat_input_tokens(serve_server *s, http_call *c, cJSON *body);
/* /models and /v1/models: OpenAI's list with llama-server's "models" beside it. */
void ln_models(serve_server *s, http_call *c);

#endif
