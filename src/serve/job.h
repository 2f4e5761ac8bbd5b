/* job.h — one generation request on a model's scheduler, seen from an HTTP
 * thread: the scheduler's callbacks (on its own thread) append token events
 * to the job, and the HTTP thread takes them in batches, waiting with a
 * timeout so it can watch its client. Cancelling frees the request's KV. */
#ifndef WICK_SERVE_JOB_H
#define WICK_SERVE_JOB_H

#include <stdbool.h>
#include <stddef.h>

#include "serve/metrics.h"
#include "wick.h"

typedef struct job_event {
    wick_token_info tok;
    size_t off, len; /* its text in the batch's text buffer */
} job_event;

/* Prompt processing at one point (llama-server's prompt_progress). */
typedef struct job_progress {
    int cache, processed, total;
    double time_ms; /* since the submit */
} job_progress;

/* What the consumer took; reuse one across job_take calls, free with job_batch_free. */
typedef struct job_batch {
    job_event *ev;
    size_t n, cap;
    job_progress *prog; /* prompt progress records (only when asked: job_submit), before ev's tokens */
    size_t n_prog, prog_cap;
    char *text;
    size_t text_len, text_cap;
    bool done; /* the request ended: job_result is valid (after these events) */
} job_batch;

typedef struct job_result {
    wick_finish finish;
    char *error;            /* WICK_FINISH_ERROR */
    char *tail;             /* text to append after the last event's */
    size_t tail_len;
    int prompt_tokens, cached_tokens, span_cached_tokens, generated_tokens, preemptions;
    int ctx_shifts, ctx_dropped; /* times the context was shifted, tokens dropped (wick_request.ctx_shift) */
    double queue_ms, ttft_ms, prefill_ms, decode_ms, total_ms;
} job_result;

typedef struct job job;

/* Submit r (its on_token/on_done/on_progress/user and grammar are replaced)
 * to s with
 * grammar (NULL = none), which the job owns from here: freed with the job,
 * or at once when the submit is refused. mx (may be NULL) gets the
 * request's latencies. NULL + err on a refused submit. */
job *job_submit(wick_sched *s, const wick_request *r, wick_grammar *grammar, metrics_model *mx, wick_error *err);
/* The same, with prompt progress records (job_batch.prog) when progress. */
job *job_submit_progress(wick_sched *s, const wick_request *r, wick_grammar *grammar, bool progress, metrics_model *mx,
                         wick_error *err);
/* Move the events (and progress records) gathered so far into b (emptied
 * first), waiting up to timeout_ms for the first one or the end. Returns true
 * if b holds events, progress records or the end. */
bool job_take(job *j, job_batch *b, int timeout_ms);
const job_result *job_get_result(const job *j); /* after a batch with done */
/* Cancel (idempotent; harmless after the end). */
void job_cancel(job *j);
/* The HTTP side is done with the job (cancels it if it still runs). */
void job_release(job *j);
/* Append one event with its text; false when out of memory. */
bool job_batch_push(job_batch *b, const wick_token_info *tok, const char *text, size_t len);
void job_batch_free(job_batch *b);

#endif
