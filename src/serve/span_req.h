/* span_req.h — span requests over HTTP (position-independent caching of
 * documents, wick_spans in wick.h): the request's `span_cache` options, the
 * /v1/completions prompt object {"prefix", "spans", "suffix"}, and the token
 * segments a request owns until it is submitted. Chat messages marked
 * "span": true become segments in span_chat.c. */
#ifndef WICK_SERVE_SPAN_REQ_H
#define WICK_SERVE_SPAN_REQ_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "serve/fields.h"
#include "wick.h"

#define SPAN_REQ_MAX_SPANS 256

typedef struct span_req {
    int32_t *prefix, *suffix, *anchor;
    int n_prefix, n_suffix, n_anchor;
    int32_t **spans;
    int *span_len;
    int n_spans;
    size_t cap_spans;
    wick_spans v; /* over the arrays above; valid after span_req_finish */
} span_req;

/* The top-level "span_cache" object (absent = defaults: anchor prefix,
 * sequential positions, no blend) into r's options; anchor ids are checked
 * against the model's vocabulary. 0, or -1 with e (400 naming the field). */
int span_req_options(const cJSON *body, const wick_model *m, span_req *r, fld_error *e);

/* A /v1/completions prompt object: prefix (text with BOS as the model adds
 * it, or ids; may be absent), spans (an array of texts or id arrays, each
 * tokenized alone without BOS), suffix (text without BOS, or ids; required,
 * not empty). 0, or -1 with e. */
int span_req_completion(const wick_model *m, const cJSON *prompt, span_req *r, fld_error *e);

/* Append one span's ids (r takes them; freed on failure): -1 with e (param)
 * if it is empty or one too many. what names it in errors ("prompt.spans[2]"). */
int span_req_add(span_req *r, int32_t *ids, int n, const char *param, const char *what, fld_error *e);

/* Point r->v at the segments; returns the prompt's length in tokens. */
int span_req_finish(span_req *r);

/* {"prefix": [ids], "spans": [[ids]...], "suffix": [ids]} */
cJSON *span_req_segments_json(const span_req *r);

void span_req_free(span_req *r);

#endif
