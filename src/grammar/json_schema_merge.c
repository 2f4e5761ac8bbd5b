/* json_schema_merge.c — conjunctions of JSON Schemas as one schema
 * (json_schema_merge.h). Keywords are combined only where the result means
 * exactly the conjunction; anything else (two patterns, two anyOf lists,
 * additionalProperties beside properties declared in another member) is
 * refused with its reason, which the compiler reports. */
#include "grammar/json_schema_merge.h"

#include <stdio.h>
#include <string.h>

#include "grammar/json_schema_keywords.h"

static bool refuse(json_merge *m, const char *kw, const char *why) {
    if (!m->why[0]) snprintf(m->why, sizeof m->why, "%.60s: %s", kw, why);
    return false;
}

static bool put(cJSON *acc, const char *k, cJSON *v) {
    if (!v) return false;
    cJSON_DeleteItemFromObjectCaseSensitive(acc, k);
    return cJSON_AddItemToObject(acc, k, v);
}

/* ---- type ---- */

static bool type_has(const cJSON *t, const char *name) {
    for (const cJSON *x = cJSON_IsArray(t) ? t->child : t; x; x = cJSON_IsArray(t) ? x->next : NULL)
        if (cJSON_IsString(x) && strcmp(x->valuestring, name) == 0) return true;
    return false;
}

/* The names of a and b in common ("integer" from integer and number). */
static bool merge_type(json_merge *m, cJSON *acc, const cJSON *b) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(acc, "type");
    static const char *const names[] = {"null", "boolean", "object", "array", "string", "number", "integer"};
    cJSON *out = cJSON_CreateArray();
    if (!out) return refuse(m, "type", "out of memory");
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *n = names[i];
        bool in_a = type_has(a, n), in_b = type_has(b, n);
        if (!strcmp(n, "integer")) in_a |= type_has(a, "number"), in_b |= type_has(b, "number");
        if (!strcmp(n, "number")) in_a = in_a && type_has(a, "number"), in_b = in_b && type_has(b, "number");
        if (in_a && in_b && !(strcmp(n, "integer") == 0 && type_has(a, "number") && type_has(b, "number")))
            cJSON_AddItemToArray(out, cJSON_CreateString(n));
    }
    if (!out->child) m->empty = true;
    return put(acc, "type", out);
}

/* ---- objects ---- */

/* Does schema x close its object to properties it does not declare? */
static bool closed(const json_merge *m, const cJSON *x) {
    const cJSON *ad = cJSON_GetObjectItemCaseSensitive(x, "additionalProperties");
    return ad ? !cJSON_IsTrue(ad) : m->strict;
}

/* Does x declare every property y declares (y taking none by pattern)? */
static bool covers(const cJSON *x, const cJSON *y) {
    if (cJSON_GetObjectItemCaseSensitive(y, "patternProperties")) return false;
    const cJSON *px = cJSON_GetObjectItemCaseSensitive(x, "properties"), *py = cJSON_GetObjectItemCaseSensitive(y, "properties");
    for (const cJSON *p = py ? py->child : NULL; p; p = p->next)
        if (!cJSON_GetObjectItemCaseSensitive(px, p->string)) return false;
    return true;
}

static cJSON *all_of(const cJSON *a, const cJSON *b) {
    cJSON *l = cJSON_CreateArray();
    if (!l) return NULL;
    cJSON_AddItemToArray(l, cJSON_Duplicate(a, true));
    cJSON_AddItemToArray(l, cJSON_Duplicate(b, true));
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        cJSON_Delete(l);
        return NULL;
    }
    cJSON_AddItemToObject(o, "allOf", l);
    return o;
}

static bool merge_properties(json_merge *m, cJSON *acc, const cJSON *b) {
    cJSON *a = cJSON_GetObjectItemCaseSensitive(acc, "properties");
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b)) return refuse(m, "properties", "must be an object");
    for (const cJSON *p = b->child; p; p = p->next) {
        cJSON *old = cJSON_GetObjectItemCaseSensitive(a, p->string);
        cJSON *v = old ? (cJSON_Compare(old, p, true) ? cJSON_Duplicate(p, true) : all_of(old, p)) : cJSON_Duplicate(p, true);
        if (!put(a, p->string, v)) return refuse(m, "properties", "out of memory");
    }
    return true;
}

static bool merge_required(json_merge *m, cJSON *acc, const cJSON *b) {
    cJSON *a = cJSON_GetObjectItemCaseSensitive(acc, "required");
    if (!cJSON_IsArray(a) || !cJSON_IsArray(b)) return refuse(m, "required", "must be an array");
    for (const cJSON *r = b->child; r; r = r->next) {
        bool have = false;
        for (const cJSON *x = a->child; x && !have; x = x->next) have = cJSON_Compare(x, r, true);
        if (!have) cJSON_AddItemToArray(a, cJSON_Duplicate(r, true));
    }
    return true;
}

/* ---- the rest ---- */

static bool merge_enum(json_merge *m, cJSON *acc, const cJSON *b) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(acc, "enum");
    if (!cJSON_IsArray(a) || !cJSON_IsArray(b)) return refuse(m, "enum", "must be an array");
    cJSON *out = cJSON_CreateArray();
    for (const cJSON *x = a->child; x && out; x = x->next)
        for (const cJSON *y = b->child; y; y = y->next)
            if (cJSON_Compare(x, y, true)) {
                cJSON_AddItemToArray(out, cJSON_Duplicate(x, true));
                break;
            }
    if (out && !out->child) m->empty = true;
    return put(acc, "enum", out) || refuse(m, "enum", "out of memory");
}

/* A numeric bound: the larger of two lower bounds, the smaller of two upper. */
static bool merge_bound(json_merge *m, cJSON *acc, const char *k, const cJSON *b, bool lower) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(acc, k);
    if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b)) {
        if (cJSON_Compare(a, b, true)) return true;
        return refuse(m, k, "two different values that are not numbers");
    }
    const double v = lower ? (a->valuedouble > b->valuedouble ? a->valuedouble : b->valuedouble)
                           : (a->valuedouble < b->valuedouble ? a->valuedouble : b->valuedouble);
    return put(acc, k, cJSON_CreateNumber(v)) || refuse(m, k, "out of memory");
}

static bool merge_into(json_merge *m, cJSON *acc, const cJSON *x);

static bool merge_key(json_merge *m, cJSON *acc, const cJSON *kv) {
    const char *k = kv->string;
    if (json_schema_annotation(k)) return true; /* annotations of the parts say nothing of the whole */
    cJSON *a = cJSON_GetObjectItemCaseSensitive(acc, k);
    if (!a) return cJSON_AddItemToObject(acc, k, cJSON_Duplicate(kv, true)) || refuse(m, k, "out of memory");
    if (cJSON_Compare(a, kv, true) && strcmp(k, "enum") != 0) return true;
    if (!strcmp(k, "type")) return merge_type(m, acc, kv);
    if (!strcmp(k, "properties")) return merge_properties(m, acc, kv);
    if (!strcmp(k, "required")) return merge_required(m, acc, kv);
    if (!strcmp(k, "enum")) return merge_enum(m, acc, kv);
    if (!strcmp(k, "const")) return m->empty = true;
    static const char *const lower[] = {"minimum", "minLength", "minItems", "minProperties"};
    static const char *const upper[] = {"maximum", "maxLength", "maxItems", "maxProperties"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcmp(k, lower[i])) return merge_bound(m, acc, k, kv, true);
        if (!strcmp(k, upper[i])) return merge_bound(m, acc, k, kv, false);
    }
    if (!strcmp(k, "exclusiveMinimum") || !strcmp(k, "exclusiveMaximum"))
        return merge_bound(m, acc, k, kv, !strcmp(k, "exclusiveMinimum"));
    if (!strcmp(k, "uniqueItems")) return put(acc, k, cJSON_CreateBool(cJSON_IsTrue(a) || cJSON_IsTrue(kv))) || refuse(m, k, "out of memory");
    if (!strcmp(k, "nullable")) return put(acc, k, cJSON_CreateBool(cJSON_IsTrue(a) && cJSON_IsTrue(kv))) || refuse(m, k, "out of memory");
    if ((!strcmp(k, "items") || !strcmp(k, "additionalProperties") || !strcmp(k, "additionalItems")) &&
        (cJSON_IsObject(a) || cJSON_IsBool(a)) && (cJSON_IsObject(kv) || cJSON_IsBool(kv))) {
        if (cJSON_IsFalse(a) || cJSON_IsTrue(kv)) return true;
        if (cJSON_IsFalse(kv) || cJSON_IsTrue(a)) return put(acc, k, cJSON_Duplicate(kv, true)) || refuse(m, k, "out of memory");
        return put(acc, k, all_of(a, kv)) || refuse(m, k, "out of memory");
    }
    return refuse(m, k, "in two schemas of a conjunction with different values is not supported");
}

/* x's constraints added to acc. */
static bool merge_into(json_merge *m, cJSON *acc, const cJSON *x) {
    if (cJSON_IsTrue(x)) return true;
    if (cJSON_IsFalse(x)) return m->empty = true;
    if (!cJSON_IsObject(x)) return refuse(m, "schema", "must be an object or a boolean");
    if (--m->budget < 0) return refuse(m, "allOf/$ref", "expansion too deep (a cycle?)");
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(x, "$ref");
    if (ref) {
        const cJSON *t = cJSON_IsString(ref) ? json_schema_resolve(m->root, ref->valuestring) : NULL;
        if (!t) return refuse(m, "$ref", "not found or not supported");
        if (!merge_into(m, acc, t)) return false;
    }
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(x, "allOf");
    if (all) {
        if (!cJSON_IsArray(all) || !all->child) return refuse(m, "allOf", "must be a non-empty array");
        for (const cJSON *s = all->child; s; s = s->next)
            if (!merge_into(m, acc, s)) return false;
    }
    /* additionalProperties closes an object to what its own schema declares */
    if (cJSON_IsObject(acc) && acc->child && ((closed(m, acc) && !covers(acc, x)) || (closed(m, x) && !covers(x, acc))) &&
        (cJSON_GetObjectItemCaseSensitive(acc, "properties") || cJSON_GetObjectItemCaseSensitive(x, "properties") ||
         cJSON_GetObjectItemCaseSensitive(acc, "patternProperties") || cJSON_GetObjectItemCaseSensitive(x, "patternProperties")))
        return refuse(m, "additionalProperties", "beside properties declared in another schema of a conjunction is not supported");
    for (const cJSON *kv = x->child; kv; kv = kv->next) {
        if (!strcmp(kv->string, "$ref") || !strcmp(kv->string, "allOf")) continue;
        if (!merge_key(m, acc, kv)) return false;
    }
    return !m->why[0];
}

cJSON *json_schema_merge(json_merge *m, const cJSON *a, const cJSON *b) {
    cJSON *acc = cJSON_CreateObject();
    if (!acc) {
        refuse(m, "schema", "out of memory");
        return NULL;
    }
    if (!merge_into(m, acc, a) || (b && !merge_into(m, acc, b)) || m->empty) {
        cJSON_Delete(acc);
        return NULL;
    }
    return acc;
}
