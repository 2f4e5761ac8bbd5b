/* fields.h — reading request fields from JSON bodies with their types and
 * ranges checked, so every bad value becomes a 400 that names the field;
 * the shared pieces of the OpenAI and Ollama request formats (sampling
 * knobs, stop strings, keep_alive durations) and the error every route
 * reports. */
#ifndef WICK_SERVE_FIELDS_H
#define WICK_SERVE_FIELDS_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "wick.h"

/* An error answer: the HTTP status and what the body says. */
typedef struct fld_error {
    int status;
    char param[64];     /* the field at fault, "" if none */
    char code[40];      /* OpenAI "code" ("" = null) */
    char msg[600];
    bool no_retry;      /* x-should-retry: false */
    int retry_after;    /* seconds; 0 = no retry-after header */
    int n_prompt_tokens, n_ctx; /* a prompt longer than the context (n_ctx > 0): its
                                 * size (or a lower bound) and the per-sequence context,
                                 * answered as llama-server's exceed_context_size_error */
} fld_error;

/* Fill e and return -1. param may be NULL. */
int fld_fail(fld_error *e, int status, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The HTTP status for a library error code: the one place codes become
 * statuses. 400 a bad, too long or unsupported request; 404 no such model;
 * 503 queue full, unavailable or cancelled; 500 the rest (memory, I/O,
 * file format, internal). */
int fld_status_of(wick_errcode code);
/* Fill e from a library error (its message, param may be NULL) with the
 * status fld_status_of gives and the answer's extras: code
 * "context_length_exceeded" and no retry for WICK_E_TOO_LONG, Retry-After 1
 * for WICK_E_QUEUE_FULL. Returns -1. */
int fld_fail_wick(fld_error *e, const wick_error *err, const char *param);

/* Parse a request body: valid UTF-8, strict JSON (json_strict.h; of
 * duplicate keys the last wins), a JSON object. NULL + e (400). */
cJSON *fld_parse_body(const char *body, size_t len, fld_error *e);

/* Each getter: 1 = present (written to *out), 0 = absent or null, -1 = wrong
 * type or out of range (e filled, naming key). */
int fld_int(const cJSON *o, const char *key, double lo, double hi, long long *out, fld_error *e);
int fld_num(const cJSON *o, const char *key, double lo, double hi, double *out, fld_error *e);
int fld_bool(const cJSON *o, const char *key, bool *out, fld_error *e);
int fld_str(const cJSON *o, const char *key, const char **out, fld_error *e);
int fld_object(const cJSON *o, const char *key, const cJSON **out, fld_error *e);
int fld_array(const cJSON *o, const char *key, const cJSON **out, fld_error *e);

#define FLD_MAX_STOP 16
typedef struct fld_stops {
    const char *v[FLD_MAX_STOP]; /* point into the JSON document */
    int n;
} fld_stops;
/* A string or an array of strings (empty strings are skipped). */
int fld_stop(const cJSON *o, const char *key, fld_stops *out, fld_error *e);

/* The OpenAI sampling fields (temperature, top_p, top_k, min_p,
 * presence_penalty, frequency_penalty, repetition_penalty, seed; llama.cpp's
 * repeat_penalty and repeat_last_n) over the model's defaults in s. -1 on a
 * bad field. */
int fld_sampling_openai(const cJSON *o, wick_sampling *s, fld_error *e);
/* The Ollama `options` object's sampling fields (temperature, top_k, top_p,
 * min_p, seed, repeat_penalty, repeat_last_n, presence_penalty,
 * frequency_penalty); -1 on a bad field. */
int fld_sampling_ollama(const cJSON *options, wick_sampling *s, fld_error *e);

/* logit_bias: OpenAI's object {"token id": bias} or llama.cpp's array
 * [[id, bias], ...] (bias false = never); with text_keys (llama-server's
 * native /completion) a key or first element that is text biases every
 * token the text encodes to (no BOS); OpenAI's routes take ids only.
 * Biases in [-100, 100], ids in [0, n_vocab). *out is malloc'd (caller
 * frees). 1, 0 absent, -1 invalid. */
#define FLD_MAX_BIAS 16384
int fld_logit_bias(const cJSON *o, const char *key, const wick_tokenizer *tk, bool text_keys, wick_logit_bias **out,
                   int *n, fld_error *e);

/* A keep_alive value: a number of seconds or a Go duration string ("5m",
 * "1h30m", "0", "-1"). *seconds < 0 = for ever. 1, 0 absent, -1 invalid. */
int fld_keep_alive(const cJSON *o, const char *key, double *seconds, fld_error *e);
/* A Go duration string alone; -1 if invalid. */
int fld_parse_duration(const char *s, double *seconds);

/* The "speculative" extension field: true / false (the server's default /
 * off), or an object {"method": "default"|"off"|"draft"|"layers"|"lookup",
 * "num_speculative_tokens": K (most drafted per step, alias "draft_max"),
 * "lookup": N (prompt lookup's longest n-gram)}. 1, 0 absent, -1 invalid. */
int fld_speculative(const cJSON *o, wick_spec_request *out, fld_error *e);

/* A seed for requests that give none: distinct per call. */
uint64_t fld_random_seed(void);

#endif
