/* json_util.h — typed lookups on cJSON objects with error messages, for
 * config files (config.json, generation_config.json, tokenizer_config.json). */
#ifndef WICK_CORE_JSON_UTIL_H
#define WICK_CORE_JSON_UTIL_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "wick.h"

/* Parse a JSON file into a cJSON tree (caller cJSON_Delete's). */
cJSON *json_read_file(const char *path, wick_error *err);

/* Each returns 1 if the key is present (and not null) and converted, 0 if
 * absent or null (out untouched), -1 with err naming `what` and the key if it
 * has the wrong type or is out of range. */
int json_get_int(const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out,
                 const char *what, wick_error *err);
int json_get_double(const cJSON *obj, const char *key, double *out, const char *what,
                    wick_error *err);
int json_get_bool(const cJSON *obj, const char *key, bool *out, const char *what,
                  wick_error *err);
/* *out points into the tree (not a copy). */
int json_get_string(const cJSON *obj, const char *key, const char **out, const char *what,
                    wick_error *err);

#endif
