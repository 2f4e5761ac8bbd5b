/* fields_grammar.h — a request's structured output in each API's spelling,
 * all mapped to one wick_grammar_spec:
 *   OpenAI     response_format {type: "text" | "json_object" |
 *              "json_schema", json_schema: {name, schema, strict}} (llama.cpp
 *              also reads response_format.schema)
 *   llama.cpp  grammar (GBNF), json_schema (an object)
 *   vLLM       structured_outputs {json, regex, choice, grammar, json_object},
 *              and the older guided_json, guided_regex, guided_choice,
 *              guided_grammar (guided_decoding_backend names an
 *              implementation and is ignored)
 *   Ollama     format: "json" or a JSON Schema object
 * At most one of them per request (else a 400). The grammar is compiled
 * when the model is known (gen_submit), off the scheduler thread. */
#ifndef WICK_SERVE_FIELDS_GRAMMAR_H
#define WICK_SERVE_FIELDS_GRAMMAR_H

#include <cJSON.h>

#include "serve/fields.h"

typedef struct fld_grammar {
    wick_grammar_spec spec;   /* kind 0 = no grammar asked for */
    char *text;               /* owned: a schema's JSON text, a regex, a GBNF grammar */
    char **choices;           /* owned */
    int n_choices;
    char param[48];           /* the field it came from (errors name it) */
    int32_t triggers[WICK_MAX_GRAMMAR_TRIGGERS]; /* a lazily started grammar (wick_request.grammar_triggers) */
    int n_triggers;
} fld_grammar;

/* The OpenAI routes' spellings (OpenAI, llama.cpp, vLLM): 0 (g->spec.kind 0
 * when none), -1 with e. */
int fld_grammar_openai(const cJSON *body, fld_grammar *g, fld_error *e);
/* Ollama's "format": 0 or -1 with e. */
int fld_grammar_ollama(const cJSON *body, fld_grammar *g, fld_error *e);
void fld_grammar_free(fld_grammar *g);

#endif
