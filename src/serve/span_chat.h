/* span_chat.h — chat conversations whose messages carry "span": true, split
 * into a span request's segments by the model's chat template (span_chat.c). */
#ifndef WICK_SERVE_SPAN_CHAT_H
#define WICK_SERVE_SPAN_CHAT_H

#include "serve/prompt.h"
#include "serve/span_req.h"

/* 1 if some message has "span": true, 0 if none, -1 with e if a "span"
 * is not true, false or null. */
int span_chat_detect(const cJSON *messages, fld_error *e);

/* P = the messages before the first span, rendered alone (no generation
 * prompt); span k = P's messages + span k rendered, minus P's text (each span
 * on its own after P, never after another span); Q = the whole conversation
 * rendered (with the generation prompt as o asks) minus P and the spans
 * rendered together. Span messages must be consecutive, and the template
 * must render each part as a continuation of the earlier ones (else a 400
 * saying it cannot split spans). P is tokenized as prompt_chat does
 * (special-token text recognized, no BOS beyond the template's); spans and
 * Q likewise. Fills r's segments; 0, or -1 with e. */
int span_chat_build(const wick_model *m, const prompt_chat_opts *o, span_req *r, fld_error *e);

#endif
