/* fields_known.h — the rule for request fields: a field that OpenAI, vLLM,
 * llama.cpp or Ollama defines and wick does not implement is a 400 naming it
 * when its value asks for anything; only fields no engine knows are ignored.
 * (Implemented fields are read by the routes themselves.) */
#ifndef WICK_SERVE_FIELDS_KNOWN_H
#define WICK_SERVE_FIELDS_KNOWN_H

#include <cJSON.h>
#include <stdbool.h>

#include "serve/fields.h"

/* /v1/chat/completions (chat) or /v1/completions: 0, or -1 with e (400). */
int fld_unsupported_openai(const cJSON *body, bool chat, fld_error *e);
/* /api/generate and /api/chat (the body and its "options"). */
int fld_unsupported_ollama(const cJSON *body, fld_error *e);

#endif
