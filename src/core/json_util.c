/* json_util.c — typed cJSON lookups (see json_util.h). */
#include "core/json_util.h"

#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/fileio.h"

cJSON *json_read_file(const char *path, wick_error *err) {
    size_t len;
    char *text = file_read_all(path, &len, err);
    if (!text) return NULL;
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, len, &end, 0);
    if (!j) {
        size_t at = end ? (size_t)(end - text) : 0;
        wick_fail(err, "malformed JSON in %s (byte %zu)", path, at);
    }
    free(text);
    return j;
}

static const cJSON *item(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return (v && !cJSON_IsNull(v)) ? v : NULL;
}

int json_get_int(const cJSON *obj, const char *key, int64_t lo, int64_t hi, int64_t *out,
                 const char *what, wick_error *err) {
    const cJSON *v = item(obj, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return wick_fail(err, "%s: \"%s\" must be an integer", what, key);
    if (v->valuedouble < (double)lo || v->valuedouble > (double)hi)
        return wick_fail(err, "%s: \"%s\" = %.0f is out of range [%lld, %lld]", what, key,
                         v->valuedouble, (long long)lo, (long long)hi);
    *out = (int64_t)v->valuedouble;
    return 1;
}

int json_get_double(const cJSON *obj, const char *key, double *out, const char *what,
                    wick_error *err) {
    const cJSON *v = item(obj, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return wick_fail(err, "%s: \"%s\" must be a finite number", what, key);
    *out = v->valuedouble;
    return 1;
}

int json_get_bool(const cJSON *obj, const char *key, bool *out, const char *what,
                  wick_error *err) {
    const cJSON *v = item(obj, key);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) return wick_fail(err, "%s: \"%s\" must be true or false", what, key);
    *out = cJSON_IsTrue(v);
    return 1;
}

int json_get_string(const cJSON *obj, const char *key, const char **out, const char *what,
                    wick_error *err) {
    const cJSON *v = item(obj, key);
    if (!v) return 0;
    if (!cJSON_IsString(v)) return wick_fail(err, "%s: \"%s\" must be a string", what, key);
    *out = v->valuestring;
    return 1;
}
