/* json_schema_keywords.c — keyword classes and local $ref resolution
 * (json_schema_keywords.h). */
#include "grammar/json_schema_keywords.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const HONOURED[] = {"type", "enum", "const", "properties", "patternProperties", "required",
                                       "additionalProperties", "items", "prefixItems", "additionalItems", "minItems",
                                       "maxItems", "uniqueItems", "anyOf", "oneOf", "allOf", "$ref", "minLength",
                                       "maxLength", "pattern", "format", "nullable", "minimum", "maximum",
                                       "exclusiveMinimum", "exclusiveMaximum", "minProperties", "maxProperties"};

static const char *const REFUSED[] = {"not", "if", "then", "else", "dependencies", "dependentRequired",
                                      "dependentSchemas", "propertyNames", "contains", "minContains", "maxContains",
                                      "unevaluatedItems", "unevaluatedProperties", "multipleOf", "divisibleBy",
                                      "disallow", "extends", "$dynamicRef", "$recursiveRef", "requires"};

static bool in_list(const char *k, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(k, list[i]) == 0) return true;
    return false;
}

bool json_schema_refused(const char *k) { return in_list(k, REFUSED, sizeof REFUSED / sizeof *REFUSED); }

bool json_schema_annotation(const char *k) {
    return !in_list(k, HONOURED, sizeof HONOURED / sizeof *HONOURED) && !json_schema_refused(k);
}

const cJSON *json_schema_resolve(const cJSON *root, const char *ref) {
    if (ref[0] != '#' || (ref[1] && ref[1] != '/')) return NULL;
    const cJSON *t = root;
    for (const char *p = ref + 1; *p == '/' && t;) {
        char seg[256];
        size_t n = 0;
        for (p++; *p && *p != '/'; p++) {
            char ch = *p;
            if (ch == '~' && (p[1] == '0' || p[1] == '1')) ch = *++p == '0' ? '~' : '/';
            else if (ch == '%' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2])) {
                const char hex[3] = {p[1], p[2], 0};
                ch = (char)strtol(hex, NULL, 16);
                p += 2;
            }
            if (n + 1 >= sizeof seg) return NULL;
            seg[n++] = ch;
        }
        seg[n] = 0;
        if (cJSON_IsArray(t)) {
            char *end;
            const long i = strtol(seg, &end, 10);
            t = *seg && !*end && i >= 0 ? cJSON_GetArrayItem(t, (int)i) : NULL;
        } else {
            t = cJSON_IsObject(t) ? cJSON_GetObjectItemCaseSensitive(t, seg) : NULL;
        }
    }
    return t;
}
