/* fields_grammar.c — reading the structured-output fields of a request body
 * (see fields_grammar.h). */
#include "serve/fields_grammar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fld_grammar_free(fld_grammar *g) {
    free(g->text);
    for (int i = 0; i < g->n_choices; i++) free(g->choices[i]);
    free(g->choices);
    memset(g, 0, sizeof *g);
}

/* Claim the one grammar slot for param: -1 (400) when another field took it. */
static int claim(fld_grammar *g, const char *param, fld_error *e) {
    if (g->spec.kind)
        return fld_fail(e, 400, param, "\"%s\" and \"%s\" both ask for structured output; give one", g->param, param);
    snprintf(g->param, sizeof g->param, "%s", param);
    return 0;
}

static int oom(fld_error *e) { return fld_fail(e, 500, NULL, "out of memory"); }

/* A JSON Schema given as an object (or, as vLLM allows, a string holding one). */
static int take_schema(fld_grammar *g, const cJSON *schema, const char *param, bool strict, fld_error *e) {
    if (claim(g, param, e) < 0) return -1;
    if (cJSON_IsString(schema)) {
        g->text = strdup(schema->valuestring);
    } else if (cJSON_IsObject(schema) || cJSON_IsBool(schema)) {
        g->text = cJSON_PrintUnformatted(schema);
    } else {
        return fld_fail(e, 400, param, "\"%s\" must be a JSON Schema (an object)", param);
    }
    if (!g->text) return oom(e);
    g->spec.kind = WICK_GRAMMAR_JSON_SCHEMA;
    g->spec.strict = strict;
    return 0;
}

static int take_text(fld_grammar *g, const cJSON *v, const char *param, wick_grammar_kind kind, fld_error *e) {
    if (claim(g, param, e) < 0) return -1;
    if (!cJSON_IsString(v) || !*v->valuestring)
        return fld_fail(e, 400, param, "\"%s\" must be a non-empty string", param);
    if (!(g->text = strdup(v->valuestring))) return oom(e);
    g->spec.kind = kind;
    return 0;
}

static int take_choices(fld_grammar *g, const cJSON *v, const char *param, fld_error *e) {
    if (claim(g, param, e) < 0) return -1;
    const int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
    if (n <= 0 || n > 65536) return fld_fail(e, 400, param, "\"%s\" must be a non-empty array of strings", param);
    if (!(g->choices = calloc((size_t)n, sizeof *g->choices))) return oom(e);
    const cJSON *it;
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it)) return fld_fail(e, 400, param, "\"%s\" must be a non-empty array of strings", param);
        if (!(g->choices[g->n_choices++] = strdup(it->valuestring))) return oom(e);
    }
    g->spec.kind = WICK_GRAMMAR_CHOICE;
    return 0;
}

static int take_json_object(fld_grammar *g, const char *param, fld_error *e) {
    if (claim(g, param, e) < 0) return -1;
    g->spec.kind = WICK_GRAMMAR_JSON;
    return 0;
}

/* Points the spec at the owned text and choices once parsing is done. */
static void finish(fld_grammar *g) {
    g->spec.text = g->text;
    g->spec.len = g->text ? strlen(g->text) : 0;
    g->spec.choices = (const char *const *)g->choices;
    g->spec.n_choices = g->n_choices;
}

static bool present(const cJSON *v) { return v && !cJSON_IsNull(v); }

static int response_format(const cJSON *b, fld_grammar *g, fld_error *e) {
    const cJSON *rf;
    int r = fld_object(b, "response_format", &rf, e);
    if (r <= 0) return r;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(rf, "type");
    if (!cJSON_IsString(t)) return fld_fail(e, 400, "response_format", "\"response_format.type\" must be a string");
    const char *type = t->valuestring;
    if (strcmp(type, "text") == 0) return 0;
    if (strcmp(type, "json_object") == 0 || strcmp(type, "json_schema") == 0) {
        const cJSON *js = cJSON_GetObjectItemCaseSensitive(rf, "json_schema");
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(rf, "schema"); /* llama.cpp's spelling */
        bool strict = false;
        if (present(js)) {
            if (!cJSON_IsObject(js)) return fld_fail(e, 400, "response_format", "\"response_format.json_schema\" must be an object");
            const cJSON *st = cJSON_GetObjectItemCaseSensitive(js, "strict");
            if (present(st) && !cJSON_IsBool(st))
                return fld_fail(e, 400, "response_format", "\"response_format.json_schema.strict\" must be true or false");
            strict = cJSON_IsTrue(st);
            if (!present(schema)) schema = cJSON_GetObjectItemCaseSensitive(js, "schema");
        }
        if (present(schema)) return take_schema(g, schema, "response_format", strict, e);
        if (strcmp(type, "json_schema") == 0 && !present(js))
            return fld_fail(e, 400, "response_format", "response_format \"json_schema\" needs \"json_schema\": {\"name\", \"schema\"}");
        return take_json_object(g, "response_format", e);
    }
    return fld_fail(e, 400, "response_format", "response_format \"%s\" is not supported (text, json_object, json_schema are)", type);
}

static int structured_outputs(const cJSON *b, fld_grammar *g, fld_error *e) {
    const cJSON *so;
    int r = fld_object(b, "structured_outputs", &so, e);
    if (r <= 0) return r;
    const cJSON *it;
    cJSON_ArrayForEach(it, so) {
        const char *k = it->string;
        if (!present(it)) continue;
        if (strcmp(k, "json") == 0) r = take_schema(g, it, "structured_outputs", false, e);
        else if (strcmp(k, "regex") == 0) r = take_text(g, it, "structured_outputs", WICK_GRAMMAR_REGEX, e);
        else if (strcmp(k, "grammar") == 0) r = take_text(g, it, "structured_outputs", WICK_GRAMMAR_GBNF, e);
        else if (strcmp(k, "choice") == 0) r = take_choices(g, it, "structured_outputs", e);
        else if (strcmp(k, "json_object") == 0) r = cJSON_IsFalse(it) ? 0 : cJSON_IsTrue(it) ? take_json_object(g, "structured_outputs", e)
                                                                                              : fld_fail(e, 400, "structured_outputs", "\"structured_outputs.json_object\" must be true or false");
        else if (strcmp(k, "backend") == 0 || strcmp(k, "_backend") == 0) r = 0; /* an implementation's name */
        else if ((strcmp(k, "disable_any_whitespace") == 0 || strcmp(k, "disable_fallback") == 0 ||
                  strcmp(k, "disable_additional_properties") == 0) && cJSON_IsFalse(it)) r = 0;
        else r = fld_fail(e, 400, "structured_outputs", "\"structured_outputs.%s\" is not supported", k);
        if (r < 0) return -1;
    }
    return 0;
}

int fld_grammar_openai(const cJSON *b, fld_grammar *g, fld_error *e) {
    memset(g, 0, sizeof *g);
    const cJSON *v;
    int rc = response_format(b, g, e);
    if (rc == 0) rc = structured_outputs(b, g, e);
    if (rc == 0 && present(v = cJSON_GetObjectItemCaseSensitive(b, "grammar"))) {
        if (!cJSON_IsString(v)) rc = fld_fail(e, 400, "grammar", "\"grammar\" must be a string (GBNF)");
        else if (*v->valuestring) rc = take_text(g, v, "grammar", WICK_GRAMMAR_GBNF, e);
    }
    if (rc == 0 && present(v = cJSON_GetObjectItemCaseSensitive(b, "json_schema"))) rc = take_schema(g, v, "json_schema", false, e);
    if (rc == 0 && present(v = cJSON_GetObjectItemCaseSensitive(b, "guided_json"))) rc = take_schema(g, v, "guided_json", false, e);
    if (rc == 0 && present(v = cJSON_GetObjectItemCaseSensitive(b, "guided_regex"))) rc = take_text(g, v, "guided_regex", WICK_GRAMMAR_REGEX, e);
    if (rc == 0 && present(v = cJSON_GetObjectItemCaseSensitive(b, "guided_grammar"))) rc = take_text(g, v, "guided_grammar", WICK_GRAMMAR_GBNF, e);
    if (rc == 0 && present(v = cJSON_GetObjectItemCaseSensitive(b, "guided_choice"))) rc = take_choices(g, v, "guided_choice", e);
    if (rc < 0) {
        fld_grammar_free(g);
        return -1;
    }
    finish(g);
    return 0;
}

int fld_grammar_ollama(const cJSON *b, fld_grammar *g, fld_error *e) {
    memset(g, 0, sizeof *g);
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(b, "format");
    int rc = 0;
    if (!present(f) || (cJSON_IsString(f) && !*f->valuestring)) return 0;
    if (cJSON_IsString(f)) {
        if (strcmp(f->valuestring, "json") == 0) rc = take_json_object(g, "format", e);
        else rc = fld_fail(e, 400, "format", "\"format\" must be \"json\" or a JSON Schema object, not \"%s\"", f->valuestring);
    } else if (cJSON_IsObject(f)) {
        rc = take_schema(g, f, "format", false, e);
    } else {
        rc = fld_fail(e, 400, "format", "\"format\" must be \"json\" or a JSON Schema object");
    }
    if (rc < 0) {
        fld_grammar_free(g);
        return -1;
    }
    finish(g);
    return 0;
}
