/* json_schema_keywords.h — what JSON Schema's keywords are to the compiler
 * (honoured, known but refused, or annotations) and local $ref resolution,
 * shared by the compiler (json_schema.c) and the merging of schemas
 * (json_schema_merge.c). */
#ifndef WICK_GRAMMAR_JSON_SCHEMA_KEYWORDS_H
#define WICK_GRAMMAR_JSON_SCHEMA_KEYWORDS_H

#include <cJSON.h>
#include <stdbool.h>

/* Keywords that say nothing about which values are valid: the annotations
 * (title, description, default, $defs, ...) and, as the specification asks
 * of validators, every keyword no draft defines (x-*, editor hints). */
bool json_schema_annotation(const char *k);

/* A keyword of some draft (3 to 2020-12) or of OpenAPI that constrains
 * values and that the compiler does not honour (refused by name). */
bool json_schema_refused(const char *k);

/* The value a local reference ("#" or "#/a/b~1c/0", JSON Pointer with ~0 ~1
 * and %XX escapes) points at in root, or NULL. */
const cJSON *json_schema_resolve(const cJSON *root, const char *ref);

#endif
