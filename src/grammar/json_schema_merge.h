/* json_schema_merge.h — the conjunction of JSON Schemas written as one
 * schema: allOf's members, a $ref's target with the keywords beside it, a
 * schema's keywords with each anyOf/oneOf alternative. */
#ifndef WICK_GRAMMAR_JSON_SCHEMA_MERGE_H
#define WICK_GRAMMAR_JSON_SCHEMA_MERGE_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct json_merge {
    const cJSON *root; /* where $refs resolve */
    bool strict;       /* additionalProperties absent means false */
    int budget;        /* $refs and allOf members left to expand (a cycle spends it) */
    bool empty;        /* set when no value satisfies the conjunction */
    char why[200];     /* set when it cannot be written exactly: the keyword and reason */
} json_merge;

/* A new schema object (the caller deletes it) admitting exactly the values
 * that satisfy a and b (b may be NULL): $refs and allOf at the top expanded,
 * keywords combined (types intersected, properties and required joined,
 * bounds tightened, a property in both the allOf of its two schemas).
 * NULL when m->empty or m->why is set. */
cJSON *json_schema_merge(json_merge *m, const cJSON *a, const cJSON *b);

#endif
