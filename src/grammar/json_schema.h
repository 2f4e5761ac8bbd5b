/* json_schema.h — JSON Schema compiled to a cfg (json_schema.c says which
 * keywords are supported; any other is an error naming it and its path). */
#ifndef WICK_GRAMMAR_JSON_SCHEMA_H
#define WICK_GRAMMAR_JSON_SCHEMA_H

#include <cJSON.h>
#include <stdbool.h>

#include "grammar/cfg.h"

typedef struct json_schema_opts {
    bool strict;      /* additionalProperties absent means false (OpenAI's strict: true) */
    bool declared_only; /* absent means false where "properties" is declared (llama.cpp's reading) */
    bool flexible_ws; /* JSON whitespace allowed between tokens; else none (compact) */
    bool single_space; /* at most one space between tokens (when not flexible_ws) */
    /* Framed values (NULL prefix = one bare value): prefix + value + suffix,
     * min_values to max_values of them (max_values 0 = no limit), separator
     * between two. A tool call's syntax around its JSON, for instance. */
    const char *prefix, *suffix, *separator;
    int min_values, max_values;
} json_schema_opts;

/* Adds the schema's rules to g (empty, from cfg_new) and finishes it; -1
 * with err ("json schema: <keyword> ... (<schema path>)") when not supported. */
int json_schema_compile(cfg *g, const cJSON *schema, const json_schema_opts *opts, wick_error *err);

#endif
