/* test_json_schema.c — JSON Schemas (src/grammar/json_schema.c) compiled
 * and run by the Earley parser: instances each schema must accept, texts it
 * must refuse (invalid instances, other spellings it does not produce), and
 * the errors naming an unsupported keyword and its path. */
#include <stdint.h>

#include "check.h"
#include "core/error.h"
#include "grammar/front_simple.h"
#include "grammar/json_schema.h"
#include "grammar_check.h"

/* 1 accepted, 0 refused, -1 the schema did not compile (message in err). */
static int run_opts(const char *schema, const char *text, const json_schema_opts *o, wick_error *err) {
    cJSON *s = cJSON_Parse(schema);
    if (!s) return -2;
    cfg *g = cfg_new();
    int r = -1;
    if (json_schema_compile(g, s, o, err) == 0) r = cfg_accepts(g, text);
    cfg_free(g);
    cJSON_Delete(s);
    return r;
}

static int run(const char *schema, const char *text, bool strict, bool ws, wick_error *err) {
    const json_schema_opts o = {.strict = strict, .flexible_ws = ws};
    return run_opts(schema, text, &o, err);
}

typedef struct jcase {
    const char *schema, *text;
    int want;
} jcase;

static void check_cases_opts(const jcase *cs, size_t n, const json_schema_opts *o) {
    for (size_t i = 0; i < n; i++) {
        wick_error err = {0};
        const int got = run_opts(cs[i].schema, cs[i].text, o, &err);
        CHECK_MSG(got == cs[i].want, "%s on %s: %d (want %d) %s", cs[i].schema, cs[i].text, got, cs[i].want, err.msg);
    }
}

static void check_cases(const jcase *cs, size_t n, bool strict, bool ws) {
    const json_schema_opts o = {.strict = strict, .flexible_ws = ws};
    check_cases_opts(cs, n, &o);
}

static void test_types(void) {
    static const jcase cs[] = {
        {"{\"type\":\"integer\"}", "-12", 1},
        {"{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"patternProperties\":{\"^x-[a-z]+$\":{\"type\":\"boolean\"}},\"additionalProperties\":false}", "{\"id\":1,\"x-ab\":true}", 1},
        {"{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"patternProperties\":{\"^x-[a-z]+$\":{\"type\":\"boolean\"}},\"additionalProperties\":false}", "{\"id\":1,\"x-ab\":1}", 0},
        {"{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"patternProperties\":{\"^x-[a-z]+$\":{\"type\":\"boolean\"}},\"additionalProperties\":false}", "{\"id\":1,\"y\":true}", 0},
        {"{\"type\":\"object\",\"patternProperties\":{\"b\":{}},\"additionalProperties\":false}", "{\"abc\":[1]}", 1},
        {"{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"string\"}]}", "\"a\"", 1},
        {"{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"string\"}]}", "null", 0},
        {"{\"$defs\":{\"a\":{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"a\"},\"x\":{\"type\":\"integer\"}},\"required\":[\"kind\",\"x\"]}},\"oneOf\":[{\"$ref\":\"#/$defs/a\"},{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"b\"},\"y\":{\"type\":\"boolean\"}},\"required\":[\"kind\",\"y\"]}]}", "{\"kind\":\"b\",\"y\":true}", 1},
        {"{\"$defs\":{\"a\":{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"a\"},\"x\":{\"type\":\"integer\"}},\"required\":[\"kind\",\"x\"]}},\"oneOf\":[{\"$ref\":\"#/$defs/a\"},{\"type\":\"object\",\"properties\":{\"kind\":{\"const\":\"b\"},\"y\":{\"type\":\"boolean\"}},\"required\":[\"kind\",\"y\"]}]}", "{\"kind\":\"a\",\"y\":true}", 0},
        {"{\"type\":\"string\",\"anyOf\":[{\"maxLength\":1},{\"enum\":[\"abc\",5]}]}", "\"abc\"", 1},
        {"{\"type\":\"string\",\"anyOf\":[{\"maxLength\":1},{\"enum\":[\"abc\",5]}]}", "5", 0},
        {"{\"type\":\"string\",\"anyOf\":[{\"maxLength\":1},{\"enum\":[\"abc\",5]}]}", "\"ab\"", 0},
        {"{\"type\":[\"integer\",\"null\"],\"anyOf\":[{\"type\":\"number\"},{\"type\":\"string\"}]}", "2", 1},
        {"{\"type\":[\"integer\",\"null\"],\"anyOf\":[{\"type\":\"number\"},{\"type\":\"string\"}]}", "2.5", 0},
        {"{\"type\":[\"integer\",\"null\"],\"anyOf\":[{\"type\":\"number\"},{\"type\":\"string\"}]}", "null", 0},
        {"{\"type\":\"array\",\"uniqueItems\":false,\"x-note\":1,\"id\":\"u\"}", "[1,1]", 1},
        {"{\"type\":\"array\",\"uniqueItems\":true,\"maxItems\":1}", "[1]", 1},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2024-02-29\"", 1},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2023-02-29\"", 0},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2000-02-29\"", 1},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"1900-02-29\"", 0},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2023-04-31\"", 0},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2023-12-31\"", 1},
        {"{\"type\":\"string\",\"format\":\"date-time\"}", "\"2023-12-31T23:59:59.5+01:00\"", 1},
        {"{\"type\":\"string\",\"format\":\"date-time\"}", "\"2023-12-31T24:00:00Z\"", 0},
        {"{\"type\":\"string\",\"format\":\"time\"}", "\"23:59:60Z\"", 0},
        {"{\"type\":\"string\",\"format\":\"time\"}", "\"08:30:00z\"", 1},
        {"{\"type\":\"string\",\"format\":\"duration\"}", "\"P1Y2M\"", 1},
        {"{\"type\":\"string\",\"format\":\"duration\"}", "\"PT5M\"", 1},
        {"{\"type\":\"string\",\"format\":\"duration\"}", "\"P3W\"", 1},
        {"{\"type\":\"string\",\"format\":\"duration\"}", "\"P\"", 0},
        {"{\"type\":\"string\",\"format\":\"duration\"}", "\"PT\"", 0},
        {"{\"type\":\"string\",\"format\":\"duration\"}", "\"P1YT\"", 0},
        {"{\"type\":\"string\",\"format\":\"hostname\"}", "\"a-b.example.com\"", 1},
        {"{\"type\":\"string\",\"format\":\"hostname\"}", "\"-a.com\"", 0},
        {"{\"type\":\"string\",\"format\":\"hostname\"}", "\"a.b.c.d\"", 0},
        {"{\"type\":\"string\",\"format\":\"ipv6\"}", "\"::1\"", 1},
        {"{\"type\":\"string\",\"format\":\"ipv6\"}", "\"1:2:3:4:5:6:7:8\"", 1},
        {"{\"type\":\"string\",\"format\":\"ipv6\"}", "\"fe80::\"", 1},
        {"{\"type\":\"string\",\"format\":\"ipv6\"}", "\":::\"", 0},
        {"{\"type\":\"string\",\"format\":\"ipv6\"}", "\"1:2\"", 0},
        {"{\"type\":\"string\",\"format\":\"uri\"}", "\"https://ex.com:8080/a/b?c=d&e#f\"", 1},
        {"{\"type\":\"string\",\"format\":\"uri\"}", "\"ex.com\"", 0},
        {"{\"type\":\"string\",\"format\":\"uri\"}", "\"http://a b\"", 0},
        {"{\"type\":\"string\",\"format\":\"email\"}", "\"a.b+c@ex-ample.co\"", 1},
        {"{\"type\":\"string\",\"format\":\"email\"}", "\"a@-b.co\"", 0},
        {"{\"type\":\"string\",\"format\":\"email\"}", "\"a@b\"", 0},
        {"{\"type\":\"string\",\"enum\":[\"a\",1,\"b\"]}", "\"a\"", 1}, /* type beside enum filters its values */
        {"{\"type\":\"string\",\"enum\":[\"a\",1,\"b\"]}", "1", 0},
        {"{\"type\":[\"integer\",\"null\"],\"enum\":[1.5,2,null,\"x\"]}", "2", 1},
        {"{\"type\":[\"integer\",\"null\"],\"enum\":[1.5,2,null,\"x\"]}", "1.5", 0},
        {"{\"type\":[\"integer\",\"null\"],\"enum\":[1.5,2,null,\"x\"]}", "null", 1},
        {"{\"type\":\"string\",\"const\":\"k\",\"description\":\"d\"}", "\"k\"", 1},
        {"{\"type\":\"integer\"}", "1.5", 0},
        {"{\"type\":\"integer\"}", "01", 0},
        {"{\"type\":\"number\"}", "1.5e-3", 1},
        {"{\"type\":\"integer\",\"minimum\":-5,\"exclusiveMaximum\":100}", "99", 1},
        {"{\"type\":\"integer\",\"minimum\":-5,\"exclusiveMaximum\":100}", "100", 0},
        {"{\"type\":\"integer\",\"minimum\":-5,\"exclusiveMaximum\":100}", "-5", 1},
        {"{\"type\":\"integer\",\"minimum\":-5,\"exclusiveMaximum\":100}", "-6", 0},
        {"{\"type\":\"integer\",\"minimum\":1.5}", "1", 0},
        {"{\"type\":\"integer\",\"minimum\":1.5}", "2", 1},
        {"{\"type\":\"integer\",\"exclusiveMinimum\":0}", "0", 0},
        {"{\"type\":\"boolean\"}", "false", 1},
        {"{\"type\":\"null\"}", "null", 1},
        {"{\"type\":[\"string\",\"null\"]}", "null", 1},
        {"{\"type\":[\"string\",\"null\"]}", "\"a\\\"b\"", 1},
        {"{\"type\":[\"string\",\"null\"]}", "1", 0},
        {"{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}", "\"ab\"", 1},
        {"{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}", "\"a\"", 0},
        {"{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}", "\"é\\n中\"", 1},
        {"{\"type\":\"string\",\"minLength\":2,\"maxLength\":3}", "\"abcd\"", 0},
        {"{\"type\":\"string\",\"pattern\":\"^[a-z]+[0-9]$\"}", "\"abc1\"", 1},
        {"{\"type\":\"string\",\"pattern\":\"^[a-z]+[0-9]$\"}", "\"abc\"", 0},
        {"{\"type\":\"string\",\"pattern\":\"[0-9]{3}\"}", "\"x123y\"", 1},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2024-02-29\"", 1},
        {"{\"type\":\"string\",\"format\":\"date\"}", "\"2024-13-01\"", 0},
        {"{\"type\":\"string\",\"format\":\"uuid\"}", "\"123e4567-e89b-12d3-a456-426614174000\"", 1},
        {"{\"enum\":[\"red\",1,null,{\"a\":[true]}]}", "{\"a\":[true]}", 1},
        {"{\"enum\":[\"red\",1,null,{\"a\":[true]}]}", "\"blue\"", 0},
        {"{\"const\":\"x\"}", "\"x\"", 1},
        {"{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"boolean\"}]}", "true", 1},
        {"{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"boolean\"}]}", "\"true\"", 0},
        {"true", "[{\"a\":1},\"x\",null]", 1},
        {"{}", "{\"k\":[1,2,{\"z\":false}]}", 1},
        {"{\"type\":\"string\",\"nullable\":true}", "null", 1},
    };
    check_cases(cs, sizeof cs / sizeof *cs, false, false);
}

#define PERSON_SCHEMA                                                                                \
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":\"integer\"}}," \
    "\"required\":[\"name\"]}"

/* declared_only (tool-call arguments, as llama.cpp and XGrammar read a
 * schema): an object that declares properties takes only those unless
 * additionalProperties says otherwise; one that declares none takes any */
static void test_declared_only(void) {
    static const jcase cs[] = {
        {PERSON_SCHEMA, "{\"name\":\"Al\",\"age\":3}", 1},
        {PERSON_SCHEMA, "{\"name\":\"Al\",\"age\":3,\"x\":1}", 0},
        {PERSON_SCHEMA, "{\"name\":\"Al\",\"x\":1}", 0},
        {"{\"type\":\"object\",\"properties\":{}}", "{}", 1},
        {"{\"type\":\"object\",\"properties\":{}}", "{\"x\":1}", 0},
        {"{\"type\":\"object\"}", "{\"x\":[1,{\"y\":2}]}", 1},
        {"{\"type\":\"object\",\"properties\":{\"m\":{\"type\":\"object\"}}}", "{\"m\":{\"k\":1}}", 1},
        {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":true}", "{\"a\":1,\"b\":2}", 1},
        {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":{\"type\":\"integer\"}}", "{\"b\":2}", 1},
        {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":{\"type\":\"integer\"}}", "{\"b\":\"2\"}", 0},
        /* a name the schema requires but does not declare is still taken */
        {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"required\":[\"b\"]}", "{\"b\":[true]}", 1},
        {"{\"type\":\"object\",\"properties\":{\"a\":{}},\"required\":[\"b\"]}", "{\"b\":1,\"c\":1}", 0},
    };
    const json_schema_opts o = {.declared_only = true};
    check_cases_opts(cs, sizeof cs / sizeof *cs, &o);
}

static void test_objects_arrays(void) {
#define PERSON                                                                                       \
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":\"integer\"}}," \
    "\"required\":[\"name\"]}"
    static const jcase strict[] = {
        {PERSON, "{\"name\":\"Al\",\"age\":3}", 1},
        {PERSON, "{\"name\":\"Al\"}", 1},
        {PERSON, "{\"age\":3}", 0},
        {PERSON, "{\"name\":\"Al\",\"age\":3,\"x\":1}", 0},
        {PERSON, "{\"name\":\"Al\",\"age\":\"3\"}", 0},
        {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":3}", "[1,2]", 1},
        {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":3}", "[1]", 0},
        {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":2,\"maxItems\":3}", "[1,2,3,4]", 0},
        {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}", "[]", 1},
        {"{\"type\":\"array\",\"items\":{\"type\":\"integer\"}}", "[1,\"a\"]", 0},
        {"{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"items\":false}", "[\"a\",1]", 1},
        {"{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"items\":false}", "[\"a\",1,2]", 0},
        {"{\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},\"next\":{\"$ref\":\"#/$defs/n\"}},"
         "\"required\":[\"v\"]}},\"$ref\":\"#/$defs/n\"}",
         "{\"v\":1,\"next\":{\"v\":2,\"next\":{\"v\":3}}}", 1},
        {"{\"$defs\":{\"n\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"integer\"},\"next\":{\"$ref\":\"#/$defs/n\"}},"
         "\"required\":[\"v\"]}},\"$ref\":\"#/$defs/n\"}",
         "{\"v\":1,\"next\":{\"next\":{\"v\":3}}}", 0},
    };
    check_cases(strict, sizeof strict / sizeof *strict, true, false);
    static const jcase loose[] = {
        {PERSON, "{\"name\":\"Al\",\"age\":3,\"x\":[1]}", 1},
        {PERSON, "{\"name\":\"Al\",\"nam\":1,\"names\":2}", 1},
        {PERSON, "{\"name\":\"Al\",\"name\":1}", 0}, /* a declared name is not a free key */
        {PERSON, "{\"name\":\"Al\",\"age\":1,\"age\":2}", 0},
        {"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}", "{\"a\":1,\"b\":2}", 1},
        {"{\"type\":\"object\",\"additionalProperties\":{\"type\":\"integer\"}}", "{\"a\":\"1\"}", 0},
    };
    check_cases(loose, sizeof loose / sizeof *loose, false, false);
#define COUNTED(lo, hi)                                                                                          \
    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"}},"                     \
    "\"additionalProperties\":{\"type\":\"boolean\"},\"minProperties\":" #lo ",\"maxProperties\":" #hi "}"
    static const jcase counted[] = {
        {COUNTED(1, 2), "{}", 0},
        {COUNTED(1, 2), "{\"b\":1}", 1},
        {COUNTED(1, 2), "{\"x\":true}", 1},
        {COUNTED(1, 2), "{\"a\":1,\"x\":true}", 1},
        {COUNTED(1, 2), "{\"a\":1,\"b\":2,\"x\":true}", 0},
        {COUNTED(1, 2), "{\"x\":true,\"y\":false,\"z\":true}", 0},
        {COUNTED(3, 3), "{\"a\":1,\"x\":true,\"y\":false}", 1},
        {COUNTED(3, 3), "{\"a\":1,\"b\":2}", 0},
        {COUNTED(0, 0), "{}", 1},
        {COUNTED(0, 0), "{\"a\":1}", 0},
        /* patternProperties beside additional properties: keys of the patterns only (a subset) */
        {"{\"type\":\"object\",\"properties\":{\"id\":{}},\"patternProperties\":{\"^x-\":{\"type\":\"integer\"},\"^y-\":{\"type\":\"integer\"}}}", "{\"id\":0,\"x-a\":1,\"y-b\":2}", 1},
        {"{\"type\":\"object\",\"properties\":{\"id\":{}},\"patternProperties\":{\"^x-\":{\"type\":\"integer\"},\"^y-\":{\"type\":\"integer\"}}}", "{\"x-a\":\"1\"}", 0},
        {"{\"type\":\"object\",\"properties\":{\"id\":{}},\"patternProperties\":{\"^x-\":{\"type\":\"integer\"},\"^y-\":{\"type\":\"integer\"}}}", "{\"z\":1}", 0},
        /* a property that admits no value never appears */
        {"{\"type\":\"object\",\"properties\":{\"a\":false,\"b\":{\"type\":\"array\",\"enum\":[\"x\"]},\"c\":{}}}", "{\"c\":1}", 1},
        {"{\"type\":\"object\",\"properties\":{\"a\":false,\"b\":{\"type\":\"array\",\"enum\":[\"x\"]},\"c\":{}}}", "{\"a\":1}", 0},
        {"{\"type\":\"object\",\"properties\":{\"a\":false,\"b\":{\"type\":\"array\",\"enum\":[\"x\"]},\"c\":{}}}", "{\"b\":\"x\"}", 0},
        /* a required name not declared: a property of the additional schema */
        {"{\"type\":\"object\",\"required\":[\"id\"],\"additionalProperties\":{\"type\":\"integer\"}}", "{\"id\":1}", 1},
        {"{\"type\":\"object\",\"required\":[\"id\"],\"additionalProperties\":{\"type\":\"integer\"}}", "{\"id\":\"1\"}", 0},
        {"{\"type\":\"object\",\"required\":[\"id\"]}", "{}", 0},
        {"{\"type\":\"object\",\"required\":[\"id\"]}", "{\"id\":[null]}", 1},
        /* a pattern over any characters: the strings it matches spelled without escapes */
        {"{\"type\":\"string\",\"pattern\":\"^[^<>]*$\"}", "\"a b\"", 1},
        {"{\"type\":\"string\",\"pattern\":\"^[^<>]*$\"}", "\"a<b\"", 0},
        {"{\"type\":\"string\",\"pattern\":\"^[^<>]*$\"}", "\"a\\\"b\"", 0},
        {"{\"type\":\"string\",\"pattern\":\"^.+$\"}", "\"x\"", 1},
        {"{\"type\":\"string\",\"format\":\"uri\"}", "\"urn:isbn:0451450523\"", 1},
        {"{\"type\":\"string\",\"format\":\"uri\"}", "\"https://a.b/c?d#e\"", 1},
        {"{\"type\":\"string\",\"format\":\"uri\"}", "\"1a:b\"", 0},
        /* conjunctions: allOf members, a $ref with keywords beside it, keywords beside anyOf */
        {"{\"$defs\":{\"a\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/a\",\"minLength\":2}", "\"ab\"", 1},
        {"{\"$defs\":{\"a\":{\"type\":\"string\"}},\"$ref\":\"#/$defs/a\",\"minLength\":2}", "\"a\"", 0},
        {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"maxLength\":2}", "\"ab\"", 1},
        {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"maxLength\":2}", "\"abc\"", 0},
        {"{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}],\"maxLength\":2}", "123", 1},
        {"{\"$defs\":{\"base\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}},"
         "\"allOf\":[{\"$ref\":\"#/$defs/base\"},{\"properties\":{\"id\":{\"minimum\":5},\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}]}",
         "{\"id\":7,\"name\":\"x\"}", 1},
        {"{\"$defs\":{\"base\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}},"
         "\"allOf\":[{\"$ref\":\"#/$defs/base\"},{\"properties\":{\"id\":{\"minimum\":5},\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}]}",
         "{\"id\":4,\"name\":\"x\"}", 0},
        {"{\"$defs\":{\"base\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}},"
         "\"allOf\":[{\"$ref\":\"#/$defs/base\"},{\"properties\":{\"id\":{\"minimum\":5},\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}]}",
         "{\"id\":7}", 0},
        {"{\"allOf\":[{\"type\":[\"number\",\"string\"]},{\"type\":[\"integer\",\"null\"]}]}", "3", 1},
        {"{\"allOf\":[{\"type\":[\"number\",\"string\"]},{\"type\":[\"integer\",\"null\"]}]}", "3.5", 0},
        {"{\"allOf\":[{\"type\":[\"number\",\"string\"]},{\"type\":[\"integer\",\"null\"]}]}", "null", 0},
        {"{\"allOf\":[{\"enum\":[1,2,3]},{\"enum\":[3,2,9]}]}", "2", 1},
        {"{\"allOf\":[{\"enum\":[1,2,3]},{\"enum\":[3,2,9]}]}", "1", 0},
        {"{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"}},\"required\":[\"k\"],"
         "\"oneOf\":[{\"properties\":{\"k\":{\"const\":\"a\"}}},{\"properties\":{\"k\":{\"const\":\"b\"}}}]}", "{\"k\":\"b\"}", 1},
        {"{\"type\":\"object\",\"properties\":{\"k\":{\"type\":\"string\"}},\"required\":[\"k\"],"
         "\"oneOf\":[{\"properties\":{\"k\":{\"const\":\"a\"}}},{\"properties\":{\"k\":{\"const\":\"b\"}}}]}", "{\"k\":\"c\"}", 0},
        /* oneOf over required properties: exactly one of them met */
#define XOR "{\"properties\":{\"a\":{\"type\":\"integer\"}},\"oneOf\":[{\"required\":[\"a\"]},{\"required\":[\"b\"]}]}"
        {XOR, "{\"a\":1}", 1},
        {XOR, "{\"b\":[]}", 1},
        {XOR, "{\"a\":1,\"b\":2}", 0},
        {XOR, "{}", 0},
        {XOR, "3", 0},
        {"{\"oneOf\":[{\"required\":[\"a\"]},{\"required\":[\"a\",\"b\"]}]}", "{\"a\":1}", 1},
        {"{\"oneOf\":[{\"required\":[\"a\"]},{\"required\":[\"a\",\"b\"]}]}", "{\"a\":1,\"b\":1}", 0},
        {"{\"oneOf\":[{\"const\":\"x\"},{\"enum\":[\"y\",1]}]}", "1", 1},
        {"{\"oneOf\":[{\"const\":\"x\"},{\"enum\":[\"y\",1]}]}", "\"z\"", 0},
        /* keywords no draft defines are annotations; known ones are honoured */
        {"{\"type\":\"string\",\"_format\":\"date\",\"readonly\":true,\"faker\":\"x\"}", "\"abc\"", 1},
        {"{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMaximum\":10}", "0.5", 1},
        {"{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMaximum\":10}", "9.999", 1},
        {"{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMaximum\":10}", "10", 0},
        {"{\"type\":\"number\",\"minimum\":0.5,\"exclusiveMaximum\":10}", "0.49", 0},
        {"{\"type\":\"number\",\"minimum\":-1,\"maximum\":1}", "-0.5", 1},
        {"{\"type\":\"number\",\"minimum\":-1,\"maximum\":1}", "-1.5", 0},
        {"{\"type\":\"number\",\"minimum\":0,\"exclusiveMinimum\":true}", "0", 0},
        {"{\"type\":\"number\",\"minimum\":0,\"exclusiveMinimum\":true}", "0.25", 1},
    };
    check_cases(counted, sizeof counted / sizeof *counted, false, false);
    static const jcase spaced[] = {
        {PERSON, " { \"name\" : \"Al\" ,\n \"age\": 3 } ", 1},
        {"{\"const\":{\"a\":[1,{\"b\":null}]}}", "{ \"a\" : [ 1, {\"b\": null} ] }", 1},
        {"{\"const\":{\"a\":[1,{\"b\":null}]}}", "{\"a\":[1,{\"b\":null}]}", 1},
        {"{\"const\":{\"a\":[1,{\"b\":null}]}}", "{\"a\":[1,{\"b\":0}]}", 0},
        {"{\"enum\":[[],{}]}", "[]", 1},
        {PERSON, "{\"name\":\"Al\"}", 1},
    };
    check_cases(spaced, sizeof spaced / sizeof *spaced, true, true);
    static const jcase compact[] = {{PERSON, "{ \"name\":\"Al\"}", 0}};
    check_cases(compact, 1, true, false);
}

static void refused(const char *schema, const char *what) {
    wick_error err = {0};
    const int r = run(schema, "", false, false, &err);
    CHECK_MSG(r == -1 && strstr(err.msg, what), "%s: %d, \"%s\" (want \"%s\")", schema, r, err.msg, what);
}

static void test_errors(void) {
    refused("{\"type\":\"integer\",\"multipleOf\":3}", "keyword \"multipleOf\" is not supported (#)");
    refused("{\"type\":\"number\",\"minimum\":1e300}", "beyond 2^53");
    refused("{\"type\":\"object\",\"required\":[\"x\",1]}", "names must be strings");
    refused("{\"type\":\"string\",\"pattern\":\"^[\\\"\\\\n]+$\"}", "no string without quotes");
    refused("{\"type\":\"number\",\"minimum\":2,\"exclusiveMaximum\":2}", "admit no number");
    refused("{\"type\":\"object\",\"if\":{}}", "keyword \"if\" is not supported");
    refused("{\"type\":\"object\",\"properties\":{\"a\":{}},\"maxProperties\":0,\"required\":[\"a\"]}", "no object meets the bounds");
    refused("{\"type\":\"object\",\"required\":[\"a\"],\"additionalProperties\":false}", "a required property that is neither declared");
    refused("{\"type\":\"integer\",\"minimum\":3,\"maximum\":2}", "admit no integer");
    refused("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"format\":\"iri\"}}}",
            "format \"iri\" is not supported (#/properties/a)");
    refused("{\"type\":\"string\",\"format\":\"date\",\"pattern\":\"^2\"}", "pattern together with format");
    refused("{\"oneOf\":[{\"type\":\"integer\"},{\"type\":\"number\"}]}", "oneOf (alternatives 0 and 1)");
    refused("{\"oneOf\":[{\"type\":\"object\",\"properties\":{\"k\":{\"enum\":[1,2]}},\"required\":[\"k\"]},"
            "{\"type\":\"object\",\"properties\":{\"k\":{\"const\":2}},\"required\":[\"k\"]}]}", "may both match");
    refused("{\"oneOf\":[{\"properties\":{\"k\":{\"const\":1}},\"required\":[\"k\"]},"
            "{\"properties\":{\"k\":{\"const\":2}},\"required\":[\"k\"]}]}", "may both match"); /* untyped: "x" matches both */
    refused("{\"type\":\"array\",\"uniqueItems\":true}", "uniqueItems");
    refused("{\"type\":\"object\",\"patternProperties\":{\"^a\":{},\"^b\":{\"type\":\"string\"}},\"additionalProperties\":false}", "patterns of different schemas");
    refused("{\"type\":\"object\",\"properties\":{\"ab\":{}},\"patternProperties\":{\"^a\":{}},\"additionalProperties\":false}", "a declared property that a pattern matches");
    refused("{\"type\":\"string\",\"anyOf\":[{\"type\":\"integer\"}]}", "no alternative meets the keywords beside it");
    refused("{\"$ref\":\"#/$defs/missing\"}", "$ref \"#/$defs/missing\"");
    refused("false", "false");
    refused("{\"type\":\"strin\"}", "type \"strin\"");
    refused("{\"type\":\"string\",\"pattern\":\"(a)\\\\1\"}", "backreference");
    refused("{\"enum\":[]}", "empty enum");
    refused("{\"enum\":[\"abc\"],\"maxLength\":1}", "keyword \"maxLength\" beside \"enum\"");
    refused("{\"type\":\"string\",\"enum\":[1]}", "no value of the enum");
    refused("{\"allOf\":[{\"type\":\"object\",\"properties\":{\"a\":{}},\"additionalProperties\":false},{\"properties\":{\"b\":{}}}]}",
            "additionalProperties: beside properties declared in another schema");
    refused("{\"allOf\":[{\"type\":\"string\",\"pattern\":\"a\"},{\"pattern\":\"b\"}]}", "pattern: in two schemas");
    refused("{\"allOf\":[{\"type\":\"string\"},{\"type\":\"integer\"}]}", "allOf: no value satisfies");
    refused("{\"$defs\":{\"a\":{\"allOf\":[{\"$ref\":\"#/$defs/a\"}],\"type\":\"string\"}},\"$ref\":\"#/$defs/a\"}", "expansion too deep");
}

static void test_simple_fronts(void) {
    cfg *g = cfg_new();
    CHECK(cfg_from_regex(g, "[0-9]{3}-[a-z]+", 15, NULL) == 0);
    CHECK(cfg_accepts(g, "123-ab") && !cfg_accepts(g, "12-ab") && !cfg_accepts(g, "123-"));
    cfg_free(g);
    g = cfg_new();
    static const char *const ch[] = {"yes", "no", "maybe so"};
    CHECK(cfg_from_choices(g, ch, 3, NULL) == 0);
    CHECK(cfg_accepts(g, "maybe so") && cfg_accepts(g, "no") && !cfg_accepts(g, "n") && !cfg_accepts(g, "yesno"));
    cfg_free(g);
    g = cfg_new();
    CHECK(cfg_json_object(g, true, NULL) == 0);
    CHECK(cfg_accepts(g, " {\"a\": [1, {\"b\": null}]} ") && cfg_accepts(g, "{}") && !cfg_accepts(g, "[1]") &&
          !cfg_accepts(g, "{\"a\":}"));
    cfg_free(g);
    wick_error err = {0};
    g = cfg_new();
    CHECK(cfg_from_regex(g, "a(?=b)", 6, &err) < 0 && strstr(err.msg, "lookaround"));
    cfg_free(g);
    g = cfg_new();
    CHECK(cfg_from_choices(g, ch, 0, &err) < 0 && strstr(err.msg, "empty"));
    cfg_free(g);
}

int main(void) {
    RUN(test_types);
    RUN(test_objects_arrays);
    RUN(test_declared_only);
    RUN(test_errors);
    RUN(test_simple_fronts);
    return check_summary("test_json_schema");
}
