/* fields.c — typed request-field getters and the shared request pieces (see
 * fields.h). JSON numbers are doubles in cJSON, so integer fields are checked
 * to be whole and inside their range before any conversion. */
#include "serve/fields.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/json_strict.h"
#include "serve/json_out.h"

int fld_fail(fld_error *e, int status, const char *param, const char *fmt, ...) {
    e->status = status;
    e->n_prompt_tokens = e->n_ctx = 0;
    snprintf(e->param, sizeof e->param, "%s", param ? param : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int fld_status_of(wick_errcode code) {
    switch (code) {
    case WICK_E_INVALID:
    case WICK_E_TOO_LONG:
    case WICK_E_UNSUPPORTED: return 400;
    case WICK_E_NOT_FOUND: return 404;
    case WICK_E_QUEUE_FULL:
    case WICK_E_UNAVAILABLE:
    case WICK_E_CANCELLED: return 503;
    case WICK_OK:
    case WICK_E_NO_MEMORY:
    case WICK_E_IO:
    case WICK_E_FORMAT:
    case WICK_E_INTERNAL: break;
    }
    return 500;
}

int fld_fail_wick(fld_error *e, const wick_error *err, const char *param) {
    fld_fail(e, fld_status_of(err->code), param, "%s", err->msg);
    if (err->code == WICK_E_TOO_LONG) {
        snprintf(e->code, sizeof e->code, "context_length_exceeded");
        e->no_retry = true;
    } else if (err->code == WICK_E_QUEUE_FULL) {
        e->retry_after = 1;
    }
    return -1;
}

cJSON *fld_parse_body(const char *body, size_t len, fld_error *e) {
    size_t ok = utf8_valid_len(body, len);
    if (ok != len) {
        fld_fail(e, 400, NULL, "request body is not valid UTF-8 (byte %zu)", ok);
        return NULL;
    }
    if (len == 0) {
        fld_fail(e, 400, NULL, "request body is empty; expected a JSON object");
        return NULL;
    }
    char why[160];
    size_t at = 0;
    if (json_strict_check(body, len, &at, why, sizeof why) < 0) {
        fld_fail(e, 400, NULL, "request body is not valid JSON: %s (byte %zu)", why, at);
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(body, len);
    if (!j) {
        fld_fail(e, 400, NULL, "request body is not valid JSON");
        return NULL;
    }
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        fld_fail(e, 400, NULL, "request body must be a JSON object");
        return NULL;
    }
    json_keep_last(j);
    return j;
}

static const cJSON *get(const cJSON *o, const char *key) {
    const cJSON *v = o ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
    return v && !cJSON_IsNull(v) ? v : NULL;
}

int fld_int(const cJSON *o, const char *key, double lo, double hi, long long *out, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return fld_fail(e, 400, key, "\"%s\" must be an integer", key);
    if (!(v->valuedouble >= lo && v->valuedouble <= hi))
        return fld_fail(e, 400, key, "\"%s\" must be between %.0f and %.0f", key, lo, hi);
    *out = v->valuedouble >= 9.2e18 ? LLONG_MAX : v->valuedouble <= -9.2e18 ? LLONG_MIN : (long long)v->valuedouble;
    return 1;
}

int fld_num(const cJSON *o, const char *key, double lo, double hi, double *out, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return fld_fail(e, 400, key, "\"%s\" must be a number", key);
    if (!(v->valuedouble >= lo && v->valuedouble <= hi))
        return fld_fail(e, 400, key, "\"%s\" must be between %g and %g", key, lo, hi);
    *out = v->valuedouble;
    return 1;
}

int fld_bool(const cJSON *o, const char *key, bool *out, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsBool(v)) return fld_fail(e, 400, key, "\"%s\" must be true or false", key);
    *out = cJSON_IsTrue(v);
    return 1;
}

int fld_str(const cJSON *o, const char *key, const char **out, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsString(v)) return fld_fail(e, 400, key, "\"%s\" must be a string", key);
    *out = v->valuestring;
    return 1;
}

int fld_object(const cJSON *o, const char *key, const cJSON **out, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsObject(v)) return fld_fail(e, 400, key, "\"%s\" must be an object", key);
    *out = v;
    return 1;
}

int fld_array(const cJSON *o, const char *key, const cJSON **out, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsArray(v)) return fld_fail(e, 400, key, "\"%s\" must be an array", key);
    *out = v;
    return 1;
}

int fld_stop(const cJSON *o, const char *key, fld_stops *out, fld_error *e) {
    out->n = 0;
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (cJSON_IsString(v)) {
        if (v->valuestring[0]) out->v[out->n++] = v->valuestring;
        return 1;
    }
    if (!cJSON_IsArray(v)) return fld_fail(e, 400, key, "\"%s\" must be a string or an array of strings", key);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it)) return fld_fail(e, 400, key, "\"%s\" must be a string or an array of strings", key);
        if (!it->valuestring[0]) continue;
        if (out->n == FLD_MAX_STOP) return fld_fail(e, 400, key, "\"%s\" has more than %d strings", key, FLD_MAX_STOP);
        out->v[out->n++] = it->valuestring;
    }
    return 1;
}

/* seed: any whole number in [-2^63, 2^64) (2^64 - 1 as JSON rounds to 2^64
 * as a double, so that is taken too); negative ones (Ollama's and
 * llama.cpp's -1 = random) pick a random seed */
static int seed_field(const cJSON *o, const char *key, uint64_t *seed, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble))
        return fld_fail(e, 400, key, "\"%s\" must be an integer", key);
    const double d = v->valuedouble;
    if (!(d >= -9223372036854775808.0 && d <= 18446744073709551616.0))
        return fld_fail(e, 400, key, "\"%s\" must be between -2^63 and 2^64 - 1", key);
    if (d < 0) *seed = fld_random_seed();
    else if (d >= 18446744073709551615.0) *seed = UINT64_MAX;
    else *seed = (uint64_t)d;
    return 1;
}

/* The knobs both APIs name alike: temperature, top_p, top_k (-1 = off), min_p. */
static int sampling_shared(const cJSON *o, wick_sampling *s, fld_error *e) {
    double d;
    long long i;
    int r;
    if ((r = fld_num(o, "temperature", 0, 100, &d, e)) < 0) return -1;
    if (r) s->temperature = (float)d;
    if ((r = fld_num(o, "top_p", 0, 1, &d, e)) < 0) return -1;
    if (r) s->top_p = (float)d;
    if ((r = fld_int(o, "top_k", -1, 1e9, &i, e)) < 0) return -1;
    if (r) s->top_k = i < 0 ? 0 : (int)i;
    if ((r = fld_num(o, "min_p", 0, 1, &d, e)) < 0) return -1;
    if (r) s->min_p = (float)d;
    return 0;
}

int fld_sampling_openai(const cJSON *o, wick_sampling *s, fld_error *e) {
    double d;
    long long i;
    int r;
    if (sampling_shared(o, s, e) < 0) return -1;
    /* llama.cpp's names for the repetition penalty, on its OpenAI routes too */
    if ((r = fld_num(o, "repeat_penalty", 0, 100, &d, e)) < 0) return -1;
    if (r) s->repeat_penalty = (float)d;
    if ((r = fld_int(o, "repeat_last_n", -1, 1e9, &i, e)) < 0) return -1;
    if (r) s->repeat_last_n = (int)i;
    if ((r = fld_num(o, "presence_penalty", -2, 2, &d, e)) < 0) return -1;
    if (r) s->presence_penalty = (float)d;
    if ((r = fld_num(o, "frequency_penalty", -2, 2, &d, e)) < 0) return -1;
    if (r) s->frequency_penalty = (float)d;
    if ((r = fld_num(o, "repetition_penalty", 0, 100, &d, e)) < 0) return -1;
    if (r) s->repeat_penalty = (float)d;
    if ((r = seed_field(o, "seed", &s->seed, e)) < 0) return -1;
    if (r == 0) s->seed = fld_random_seed();
    return 0;
}

int fld_sampling_ollama(const cJSON *o, wick_sampling *s, fld_error *e) {
    double d;
    long long i;
    int r;
    if (sampling_shared(o, s, e) < 0) return -1;
    if ((r = fld_num(o, "repeat_penalty", 0, 100, &d, e)) < 0) return -1;
    if (r) s->repeat_penalty = (float)d;
    if ((r = fld_int(o, "repeat_last_n", -1, 1e9, &i, e)) < 0) return -1;
    if (r) s->repeat_last_n = (int)i;
    if ((r = fld_num(o, "presence_penalty", -100, 100, &d, e)) < 0) return -1;
    if (r) s->presence_penalty = (float)d;
    if ((r = fld_num(o, "frequency_penalty", -100, 100, &d, e)) < 0) return -1;
    if (r) s->frequency_penalty = (float)d;
    if ((r = seed_field(o, "seed", &s->seed, e)) < 0) return -1;
    if (r == 0) s->seed = fld_random_seed();
    return 0;
}

/* One bias value: a number in [-100, 100], or false (llama.cpp: never). */
static int bias_value(const cJSON *v, const char *key, float *out, fld_error *e) {
    if (cJSON_IsFalse(v)) {
        *out = -INFINITY;
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= -100 && v->valuedouble <= 100))
        return fld_fail(e, 400, key, "\"%s\" values must be numbers between -100 and 100", key);
    *out = (float)v->valuedouble;
    return 0;
}

/* Append one (token, bias) entry, growing the array as strings expand. */
static int bias_push(wick_logit_bias **b, int *n, int *cap, int32_t tok, float bias, const char *key, fld_error *e) {
    if (*n >= FLD_MAX_BIAS) return fld_fail(e, 400, key, "\"%s\" has more than %d entries", key, FLD_MAX_BIAS);
    if (*n == *cap) {
        const int nc = *cap ? *cap * 2 : 16;
        wick_logit_bias *t = realloc(*b, (size_t)nc * sizeof *t);
        if (!t) return fld_fail(e, 500, NULL, "out of memory");
        *b = t, *cap = nc;
    }
    (*b)[*n].token = tok;
    (*b)[(*n)++].bias = bias;
    return 0;
}

/* A key that is a string of digits is a token id; -1 if it is not one. */
static long long id_key(const char *ks) {
    char *end;
    if (!(ks[0] >= '0' && ks[0] <= '9') || strlen(ks) > 10) return -1;
    const long long t = strtoll(ks, &end, 10);
    return *end ? -1 : t;
}

/* One entry: a token id, or (with a tokenizer) text whose every token gets
 * the bias, as llama-server reads it. */
static int bias_entry(const wick_tokenizer *tk, long long t, const char *text, const cJSON *val, const char *key,
                      wick_logit_bias **b, int *n, int *cap, fld_error *e) {
    const int n_vocab = wick_tokenizer_n_vocab(tk);
    float bias = 0;
    if (!text && (t < 0 || t >= n_vocab))
        return fld_fail(e, 400, key, "\"%s\" keys must be token ids in [0, %d)", key, n_vocab);
    if (bias_value(val, key, &bias, e) < 0) return -1;
    if (!text) return bias_push(b, n, cap, (int32_t)t, bias, key, e);
    int32_t *ids = NULL;
    size_t k = 0;
    wick_error err;
    if (wick_tokenizer_encode(tk, text, strlen(text), false, &ids, &k, NULL, &err) < 0)
        return fld_fail(e, 400, key, "\"%s\": %s", key, err.msg);
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) rc = bias_push(b, n, cap, ids[i], bias, key, e);
    free(ids);
    return rc;
}

int fld_logit_bias(const cJSON *o, const char *key, const wick_tokenizer *tk, bool text_keys, wick_logit_bias **out,
                   int *n, fld_error *e) {
    *out = NULL;
    *n = 0;
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return fld_fail(e, 400, key, "\"%s\" must be an object mapping token ids to biases", key);
    if (cJSON_GetArraySize(v) > FLD_MAX_BIAS)
        return fld_fail(e, 400, key, "\"%s\" has more than %d entries", key, FLD_MAX_BIAS);
    if (!v->child) return 0;
    const int n_vocab = wick_tokenizer_n_vocab(tk);
    wick_logit_bias *b = NULL;
    int k = 0, cap = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        const cJSON *val = it;
        const char *text = NULL;
        long long t = -1;
        if (cJSON_IsObject(v)) { /* OpenAI: {"50256": -100}; llama.cpp also {"hello": -100} */
            t = id_key(it->string);
            if (t < 0 && text_keys) text = it->string;
        } else { /* llama.cpp: [[50256, -100], ["hello", false]] */
            const cJSON *id = cJSON_IsArray(it) && cJSON_GetArraySize(it) == 2 ? it->child : NULL;
            val = id ? id->next : NULL;
            if (!val) {
                free(b);
                return fld_fail(e, 400, key, "\"%s\" as an array holds [token id, bias] pairs", key);
            }
            if (cJSON_IsNumber(id) && id->valuedouble >= 0 && id->valuedouble < n_vocab &&
                id->valuedouble == floor(id->valuedouble))
                t = (long long)id->valuedouble;
            else if (cJSON_IsString(id) && text_keys)
                text = id->valuestring;
        }
        if (bias_entry(tk, t, text, val, key, &b, &k, &cap, e) < 0) {
            free(b);
            return -1;
        }
    }
    *out = b;
    *n = k;
    return 1;
}

int fld_parse_duration(const char *s, double *seconds) {
    const char *p = s;
    bool neg = false;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    if (!*p) return -1;
    if (strcmp(p, "0") == 0) {
        *seconds = 0;
        return 0;
    }
    double total = 0;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !isfinite(v) || v < 0) return -1;
        p = end;
        double unit;
        if (strncmp(p, "ns", 2) == 0) unit = 1e-9, p += 2;
        else if (strncmp(p, "us", 2) == 0 || strncmp(p, "\xC2\xB5s", 3) == 0) unit = 1e-6, p += *p == 'u' ? 2 : 3;
        else if (strncmp(p, "ms", 2) == 0) unit = 1e-3, p += 2;
        else if (*p == 's') unit = 1, p++;
        else if (*p == 'm') unit = 60, p++;
        else if (*p == 'h') unit = 3600, p++;
        else return -1;
        total += v * unit;
    }
    *seconds = neg ? -total : total;
    return 0;
}

int fld_keep_alive(const cJSON *o, const char *key, double *seconds, fld_error *e) {
    const cJSON *v = get(o, key);
    if (!v) return 0;
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
        *seconds = v->valuedouble;
        return 1;
    }
    if (cJSON_IsString(v) && fld_parse_duration(v->valuestring, seconds) == 0) return 1;
    return fld_fail(e, 400, key, "\"%s\" must be a number of seconds or a duration such as \"5m\"", key);
}

uint64_t fld_random_seed(void) {
    static _Atomic uint64_t counter;
    /* the wall clock's nanoseconds as entropy, so seeds differ across restarts */
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t x = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 30) ^ (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    return x;
}

int fld_speculative(const cJSON *o, wick_spec_request *out, fld_error *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "speculative");
    if (!v || cJSON_IsNull(v)) return 0;
    memset(out, 0, sizeof *out);
    if (cJSON_IsBool(v)) {
        out->method = cJSON_IsTrue(v) ? WICK_SPEC_DEFAULT : WICK_SPEC_OFF;
        return 1;
    }
    if (!cJSON_IsObject(v))
        return fld_fail(e, 400, "speculative", "\"speculative\" must be true, false or an object");
    const char *method = NULL;
    if (fld_str(v, "method", &method, e) < 0) return -1;
    if (method) {
        static const char *const NAMES[] = {"default", "off", "draft", "layers", "lookup"};
        int k = 0;
        while (k < 5 && strcmp(method, NAMES[k]) != 0) k++;
        if (k == 5)
            return fld_fail(e, 400, "speculative",
                            "\"speculative.method\" must be default, off, draft, layers or lookup, not \"%s\"", method);
        out->method = (wick_spec_method)k;
    }
    long long n;
    int r;
    if ((r = fld_int(v, "num_speculative_tokens", 1, WICK_DRAFT_MAX_LIMIT, &n, e)) < 0) return -1;
    if (r) out->draft_max = (int)n;
    if ((r = fld_int(v, "draft_max", 1, WICK_DRAFT_MAX_LIMIT, &n, e)) < 0) return -1;
    if (r) out->draft_max = (int)n;
    if ((r = fld_int(v, "lookup", 1, 64, &n, e)) < 0) return -1;
    if (r) out->lookup = (int)n;
    return 1;
}
