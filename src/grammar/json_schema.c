/* json_schema.c — a JSON Schema compiled to a cfg whose sentences are the
 * JSON texts of the schema's instances (a subset of them: object properties
 * in the schema's order, enum/const values in their compact spelling,
 * strings spelled without escapes where a pattern or key is matched, numbers
 * without exponents where bounded). It never admits an invalid instance: a
 * keyword whose meaning it cannot keep exactly is a compile error naming the
 * keyword and its schema path.
 *
 * Supported: true/{} and false, type (and arrays of types; without type, a
 * value of any type under the keywords that apply to it), enum and const
 * (filtered by a type beside them), properties, required (a name not
 * declared is an additional property), additionalProperties (bool or schema;
 * absent means allowed, unless strict, or declared_only and properties are
 * declared), patternProperties (one pattern, no other additional keys),
 * minProperties/maxProperties, items (draft 4's array form too), prefixItems, additionalItems, minItems, maxItems, anyOf,
 * oneOf (provably disjoint alternatives), allOf and keywords beside $ref or
 * anyOf/oneOf (merged, json_schema_merge.c), $ref as a local JSON Pointer
 * (recursion allowed), minLength, maxLength, pattern, format (date, time,
 * date-time, duration, uuid, email, hostname, ipv4, ipv6, uri),
 * minimum/maximum/exclusive* on integers and numbers (draft 4's boolean
 * exclusive* too). Keywords no draft defines are annotations; the known ones
 * not honoured (json_schema_keywords.c) are refused by name. */
#include "grammar/json_schema.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "grammar/int_range.h"
#include "grammar/json_schema_keywords.h"
#include "grammar/json_schema_merge.h"
#include "grammar/num_range.h"

#define MAX_DEPTH 64

typedef struct jsc {
    cfg *g;
    const cJSON *root;
    json_schema_opts o;
    wick_error *err;
    bool failed;
    char path[512];
    cfg_sym ws;       /* whitespace between tokens: a terminal (ε when compact) */
    int32_t any;      /* any JSON value, built on first use (-1) */
    rx_id str_char;   /* one character of a JSON string, escapes included */
    /* $ref targets compiled: their nonterminals */
    const cJSON **ref_node;
    int32_t *ref_sym;
    size_t n_refs, refs_cap, refs_cap2;
    int depth;
} jsc;

static int32_t fail(jsc *c, const char *fmt, const char *what) {
    char where[sizeof c->path + 2];
    snprintf(where, sizeof where, "#%s", c->path);
    if (!c->failed) wick_fail(c->err, fmt, what, where);
    c->failed = true;
    return -1;
}

static rx_id re(jsc *c, const char *pattern) { return rx_parse(c->g->rx, pattern, strlen(pattern), NULL); }
static cfg_sym term(rx_id t) { return cfg_terminal(t); }
static cfg_sym lit(jsc *c, const char *s) { return term(rx_literal(c->g->rx, s, strlen(s))); }

static int32_t nonterm(jsc *c) {
    const int32_t n = cfg_nonterm(c->g);
    if (n < 0) c->failed = true;
    return n;
}

static void rule(jsc *c, int32_t lhs, const cfg_sym *rhs, int32_t n) {
    /* ε terminals are left out of right sides */
    cfg_sym buf[16];
    int32_t k = 0;
    for (int32_t i = 0; i < n && k < 16; i++)
        if (!(cfg_is_terminal(rhs[i]) && cfg_term_of(rhs[i]) == RX_EPSILON)) buf[k++] = rhs[i];
    if (cfg_add_rule(c->g, lhs, buf, k) < 0) c->failed = true;
}

static void rule_empty(jsc *c, int32_t lhs) {
    if (cfg_add_rule(c->g, lhs, NULL, 0) < 0) c->failed = true;
}

#define RULE(c, lhs, ...) rule((c), (lhs), (cfg_sym[]){__VA_ARGS__}, (int32_t)(sizeof((cfg_sym[]){__VA_ARGS__}) / sizeof(cfg_sym)))

/* ---- the generic JSON value ---- */

static const char *NUMBER_RE = "-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?";
static const char *INTEGER_RE = "-?(0|[1-9][0-9]*)";

static cfg_sym string_sym(jsc *c) { return term(rx_concat(c->g->rx, re(c, "\""), rx_concat(c->g->rx, rx_repeat(c->g->rx, c->str_char, 0, RX_INF), re(c, "\"")))); }

static int32_t any_value(jsc *c) {
    if (c->any >= 0) return c->any;
    const int32_t v = nonterm(c), obj = nonterm(c), members = nonterm(c), arr = nonterm(c), elems = nonterm(c);
    if (c->failed) return -1;
    c->any = v;
    const cfg_sym ws = c->ws, str = string_sym(c);
    RULE(c, v, obj);
    RULE(c, v, arr);
    RULE(c, v, str);
    RULE(c, v, term(re(c, NUMBER_RE)));
    RULE(c, v, term(re(c, "true|false|null")));
    RULE(c, obj, lit(c, "{"), ws, lit(c, "}"));
    RULE(c, obj, lit(c, "{"), ws, members, ws, lit(c, "}"));
    RULE(c, members, str, ws, lit(c, ":"), ws, v);
    RULE(c, members, members, ws, lit(c, ","), ws, str, ws, lit(c, ":"), ws, v);
    RULE(c, arr, lit(c, "["), ws, lit(c, "]"));
    RULE(c, arr, lit(c, "["), ws, elems, ws, lit(c, "]"));
    RULE(c, elems, v);
    RULE(c, elems, elems, ws, lit(c, ","), ws, v);
    return v;
}

/* ---- strings ---- */

/* The strings (as their characters, none needing an escape in JSON) in
 * which pattern p finds a match: the pattern with its unanchored ends
 * padded, less those needing an escape in JSON (so each has one spelling);
 * -1 (c failed) when it cannot be kept exact. */
static rx_id pattern_rx(jsc *c, const char *p) {
    rx_store *rx = c->g->rx;
    const size_t n = strlen(p);
    const bool a0 = n && p[0] == '^', a1 = n > 1 && p[n - 1] == '$' && p[n - 2] != '\\';
    wick_error e2 = {0};
    /* the strings spelled without escapes: a subset when the pattern allows others */
    rx_id r = rx_parse_plain_json(rx, p, n, &e2);
    if (r < 0) {
        char what[300];
        snprintf(what, sizeof what, "pattern: %.250s", e2.msg);
        return fail(c, "%s (%s)", what);
    }
    if (r == RX_NOTHING) return fail(c, "%s: no string without quotes, backslashes or control characters matches (%s)", "pattern");
    const rx_id anyc = rx_repeat(rx, re(c, "[^\"\\\\\\x00-\\x1f]"), 0, RX_INF);
    if (!a0) r = rx_concat(rx, anyc, r);
    if (!a1) r = rx_concat(rx, r, anyc);
    return r;
}

static cfg_sym string_schema(jsc *c, const cJSON *s) {
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(s, "minLength"), *mx = cJSON_GetObjectItemCaseSensitive(s, "maxLength");
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(s, "pattern"), *fmt = cJSON_GetObjectItemCaseSensitive(s, "format");
    rx_store *rx = c->g->rx;
    rx_id body;
    if (pat && fmt) return fail(c, "%s: pattern together with format is not supported (%s)", "format");
    if (pat) {
        if (!cJSON_IsString(pat)) return fail(c, "%s must be a string (%s)", "pattern");
        body = pattern_rx(c, pat->valuestring);
        if (body < 0) return -1;
        if (mn || mx) return fail(c, "%s together with pattern is not supported (%s)", "minLength/maxLength");
    } else if (fmt) {
        static const struct {
            const char *name, *re;
        } formats[] = {
#define YEAR "[0-9]{4}"
#define LEAP "([0-9]{2}(0[48]|[2468][048]|[13579][26])|([02468][048]|[13579][26])00)"
#define DATE                                                                                                   \
    "(" YEAR "-(0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|" YEAR "-(0[469]|11)-(0[1-9]|[12][0-9]|30)|" YEAR \
    "-02-(0[1-9]|1[0-9]|2[0-8])|" LEAP "-02-29)"
#define TIME "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])"
#define LABEL "[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
#define H16 "[0-9a-fA-F]{1,4}"
#define PCHAR "[a-zA-Z0-9._~!$&'()*+,;=:@-]"
#define DUR_DATE "([0-9]+Y([0-9]+M)?([0-9]+D)?|[0-9]+M([0-9]+D)?|[0-9]+D)"
#define DUR_TIME "T([0-9]+H([0-9]+M)?([0-9]+S)?|[0-9]+M([0-9]+S)?|[0-9]+S)"
            /* each a subset of what the format allows (RFC 3339, 1123, 3986, 4291, ISO 8601), so that
             * no text it admits is invalid: days checked per month and leap year, hostnames of at most
             * three labels (under 253 bytes), IPv6 in the full or a simple compressed form, absolute
             * URIs with an authority, no leap seconds */
            {"date", DATE},
            {"time", TIME},
            {"date-time", DATE "[Tt]" TIME},
            {"duration", "P(" DUR_DATE "(" DUR_TIME ")?|" DUR_TIME "|[0-9]+W)"},
            {"uuid", "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"},
            {"ipv4", "((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"},
            {"ipv6", "(" H16 ":){7}" H16 "|::|::(" H16 ":){0,6}" H16 "|(" H16 ":){1,7}:"},
            {"hostname", LABEL "(\\." LABEL "){0,2}"},
            {"email", "[a-zA-Z0-9_+-]+(\\.[a-zA-Z0-9_+-]+)*@" LABEL "(\\." LABEL ")*\\.[a-zA-Z]{2,63}"},
            /* RFC 3986: scheme ":" then "//" authority and a path, an absolute path, a rootless path or none */
            {"uri", "[a-zA-Z][a-zA-Z0-9+.-]*:(//[a-zA-Z0-9._~!$&'()*+,;=-]+(:[0-9]{1,5})?(/" PCHAR "*)*|/(" PCHAR "+(/" PCHAR "*)*)?|" PCHAR "+(/" PCHAR "*)*)?"
                    "(\\?(" PCHAR "|[/?])*)?(#(" PCHAR "|[/?])*)?"},
        };
        if (!cJSON_IsString(fmt)) return fail(c, "%s must be a string (%s)", "format");
        body = -1;
        for (size_t i = 0; i < sizeof formats / sizeof *formats; i++)
            if (strcmp(fmt->valuestring, formats[i].name) == 0) body = re(c, formats[i].re);
        if (body < 0) {
            char what[160];
            snprintf(what, sizeof what, "format \"%.100s\"", fmt->valuestring);
            return fail(c, "%s is not supported (%s)", what);
        }
        if (mn || mx) return fail(c, "%s together with format is not supported (%s)", "minLength/maxLength");
    } else {
        const double lo = cJSON_IsNumber(mn) ? mn->valuedouble : 0, hi = cJSON_IsNumber(mx) ? mx->valuedouble : -1;
        if ((mn && !cJSON_IsNumber(mn)) || (mx && !cJSON_IsNumber(mx)) || lo < 0 || lo > 100000 || hi > 100000 ||
            (hi >= 0 && hi < lo))
            return fail(c, "%s: bad bounds (%s)", "minLength/maxLength");
        body = rx_repeat(rx, c->str_char, (int32_t)lo, hi < 0 ? RX_INF : (int32_t)hi);
    }
    return term(rx_concat(rx, re(c, "\""), rx_concat(rx, body, re(c, "\""))));
}

/* ---- compiling a schema ---- */

static cfg_sym compile(jsc *c, const cJSON *s);
static bool admits_nothing(const cJSON *s);

static void path_push(jsc *c, size_t *mark, const char *seg) {
    *mark = strlen(c->path);
    snprintf(c->path + *mark, sizeof c->path - *mark, "/%s", seg);
}
static void path_pop(jsc *c, size_t mark) { c->path[mark] = 0; }

static cfg_sym compile_at(jsc *c, const cJSON *s, const char *seg) {
    size_t m;
    path_push(c, &m, seg);
    const cfg_sym r = compile(c, s);
    path_pop(c, m);
    return r;
}

/* A JSON string literal of name (as cJSON prints it). */
static cfg_sym key_literal(jsc *c, const char *name) {
    cJSON *j = cJSON_CreateString(name);
    char *t = j ? cJSON_PrintUnformatted(j) : NULL;
    const cfg_sym r = t ? lit(c, t) : (c->failed = true, -1);
    free(t);
    cJSON_Delete(j);
    return r;
}

/* ---- keys other than the declared ones ---- */

/* The code points of UTF-8 text s (n of them at most cap); -1 when invalid. */
static int decode(const char *s, uint32_t *out, int cap) {
    const uint8_t *u = (const uint8_t *)s;
    int k = 0;
    while (*u) {
        const int n = u[0] < 0x80 ? 1 : u[0] >= 0xF0 ? 4 : u[0] >= 0xE0 ? 3 : u[0] >= 0xC0 ? 2 : 0;
        if (!n || k == cap) return -1;
        uint32_t c = n == 1 ? u[0] : u[0] & (0x7F >> n);
        for (int i = 1; i < n; i++) {
            if ((u[i] & 0xC0) != 0x80) return -1;
            c = c << 6 | (u[i] & 63);
        }
        out[k++] = c;
        u += n;
    }
    return k;
}

/* A free key's characters: no escapes (so every key has one spelling). */
static bool plain_char(uint32_t c) { return c >= 0x20 && c != '"' && c != '\\'; }

static int cmp_u32(const void *a, const void *b) {
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Plain characters other than the sorted, distinct cps[0..k). */
static rx_id plain_except(jsc *c, const uint32_t *cps, int k) {
    static const uint32_t gaps[][2] = {{0x20, 0x21}, {0x23, 0x5B}, {0x5D, 0x10FFFF}};
    rx_store *rx = c->g->rx;
    rx_id r = RX_NOTHING;
    for (int gi = 0; gi < 3; gi++) {
        uint32_t lo = gaps[gi][0];
        for (int i = 0; i < k; i++) {
            if (cps[i] < lo || cps[i] > gaps[gi][1]) continue;
            if (cps[i] > lo) r = rx_or(rx, r, rx_codepoints(rx, lo, cps[i] - 1));
            lo = cps[i] + 1;
        }
        if (lo <= gaps[gi][1]) r = rx_or(rx, r, rx_codepoints(rx, lo, gaps[gi][1]));
    }
    return r;
}

typedef struct name_cps {
    uint32_t cp[256];
    int n;
} name_cps;

/* Plain strings that are none of names[0..m) (all sharing their first d characters). */
static rx_id not_in(jsc *c, const name_cps *names, int m, int d) {
    rx_store *rx = c->g->rx;
    bool ends = false;
    uint32_t next[256];
    int k = 0;
    for (int i = 0; i < m; i++) {
        if (names[i].n == d) ends = true;
        else if (k < 256) next[k++] = names[i].cp[d];
    }
    qsort(next, (size_t)k, sizeof *next, cmp_u32);
    int u = 0;
    for (int i = 0; i < k; i++)
        if (!u || next[u - 1] != next[i]) next[u++] = next[i];
    rx_id r = ends ? RX_NOTHING : RX_EPSILON;
    r = rx_or(rx, r, rx_concat(rx, plain_except(c, next, u), rx_repeat(rx, plain_except(c, NULL, 0), 0, RX_INF)));
    for (int j = 0; j < u; j++) {
        name_cps *sub = malloc(sizeof *sub * (size_t)m);
        int sm = 0;
        for (int i = 0; sub && i < m; i++)
            if (names[i].n > d && names[i].cp[d] == next[j]) sub[sm++] = names[i];
        if (!sub) {
            c->failed = true;
            return RX_NOTHING;
        }
        r = rx_or(rx, r, rx_concat(rx, rx_codepoints(rx, next[j], next[j]), not_in(c, sub, sm, d + 1)));
        free(sub);
    }
    return r;
}

/* A JSON string key, unescaped, that is not a declared property name. */
static cfg_sym free_key(jsc *c, const cJSON *props) {
    const int n = props ? cJSON_GetArraySize(props) : 0;
    name_cps *names = calloc((size_t)(n ? n : 1), sizeof *names);
    if (!names) return fail(c, "%s (%s)", "out of memory");
    int m = 0;
    for (const cJSON *p = props ? props->child : NULL; p; p = p->next) {
        const int k = decode(p->string, names[m].cp, 256);
        if (k < 0) {
            free(names);
            return fail(c, "%s: a property name over 256 characters or not UTF-8 (%s)", "properties");
        }
        bool plain = true;
        for (int i = 0; i < k; i++) plain = plain && plain_char(names[m].cp[i]);
        if (plain) names[m++].n = k; /* a name with escaped characters cannot be spelled by a free key */
    }
    rx_store *rx = c->g->rx;
    const rx_id body = not_in(c, names, m, 0);
    free(names);
    return term(rx_concat(rx, re(c, "\""), rx_concat(rx, body, re(c, "\""))));
}

/* The count bounds of an object (minProperties, maxProperties; -1 absent). */
static bool count_bound(jsc *c, const cJSON *s, const char *kw, int64_t *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(s, kw);
    *out = -1;
    if (!v) return true;
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble != floor(v->valuedouble) || v->valuedouble > 1e9) {
        fail(c, "%s must be a non-negative integer (%s)", kw);
        return false;
    }
    *out = (int64_t)v->valuedouble;
    return true;
}

static bool is_required(const cJSON *req, const char *name) {
    for (const cJSON *r = req ? req->child : NULL; r; r = r->next)
        if (cJSON_IsString(r) && strcmp(r->valuestring, name) == 0) return true;
    return false;
}

/* An object: the declared properties in their order (required ones always),
 * then other keys where allowed. With minProperties/maxProperties the chain
 * is a grid: A[i][t] / B[i][t] are the properties from i on (A with a comma
 * before the first) after t properties, t counted up to S; only states from
 * which the bounds can still be met are reachable, so no path dead-ends. */
static cfg_sym object_schema(jsc *c, const cJSON *s) {
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties");
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(s, "required");
    const cJSON *addl = cJSON_GetObjectItemCaseSensitive(s, "additionalProperties");
    const cJSON *pp = cJSON_GetObjectItemCaseSensitive(s, "patternProperties");
    if (props && !cJSON_IsObject(props)) return fail(c, "%s must be an object (%s)", "properties");
    if (req && !cJSON_IsArray(req)) return fail(c, "%s must be an array (%s)", "required");
    if (pp && !cJSON_IsObject(pp)) return fail(c, "%s must be an object (%s)", "patternProperties");
    /* additionalProperties absent: JSON Schema allows other keys; strict
     * closes every object, declared_only those that declare properties */
    const bool open_default = !c->o.strict;
    bool extra = open_default && !(c->o.declared_only && props), extra_schema = false;
    if (addl) {
        if (cJSON_IsBool(addl)) extra = cJSON_IsTrue(addl);
        else extra = extra_schema = true;
    }
    /* a required name not declared: a property of the additional properties' schema */
    cJSON *own = NULL;
    for (const cJSON *r = req ? req->child : NULL; r && !c->failed; r = r->next) {
        if (!cJSON_IsString(r)) {
            cJSON_Delete(own);
            return fail(c, "%s: names must be strings (%s)", "required");
        }
        if (cJSON_GetObjectItemCaseSensitive(props, r->valuestring)) continue;
        if (!(extra || (!addl && open_default)) || (pp && pp->child)) {
            cJSON_Delete(own);
            return fail(c, "%s: a required property that is neither declared nor an allowed additional property is not supported (%s)", "required");
        }
        if (!own && !(own = props ? cJSON_Duplicate(props, true) : cJSON_CreateObject())) return fail(c, "%s (%s)", "out of memory");
        cJSON *v = extra_schema ? cJSON_Duplicate(addl, true) : cJSON_CreateTrue();
        if (!v || !cJSON_AddItemToObject(own, r->valuestring, v)) {
            cJSON_Delete(v), cJSON_Delete(own);
            return fail(c, "%s (%s)", "out of memory");
        }
    }
    if (own) props = own;
    cfg_sym r = -1;
    const int n_props = props ? cJSON_GetArraySize(props) : 0;
    cfg_sym extra_val = 0;
    if (extra_schema) extra_val = compile_at(c, addl, "additionalProperties");
    /* patternProperties: their keys are the only ones beside the declared
     * names (where additional properties are allowed too, keys matching no
     * pattern are left out: a subset); several patterns must share one
     * schema (a key matching two would need both), and none may match a
     * declared name (it would need both schemas, and could come twice) */
    cfg_sym pkey = 0, pval = 0;
    bool pattern = false;
    if (pp && pp->child && !c->failed) {
        rx_id pr = RX_NOTHING;
        for (const cJSON *q = pp->child; q && !c->failed; q = q->next) {
            if (!cJSON_Compare(q, pp->child, true)) {
                r = fail(c, "%s with patterns of different schemas is not supported (%s)", "patternProperties");
                goto done;
            }
            const rx_id one = pattern_rx(c, q->string);
            if (one < 0) goto done;
            pr = rx_or(c->g->rx, pr, one);
        }
        for (const cJSON *p = props ? props->child : NULL; p; p = p->next)
            if (rx_matches(c->g->rx, pr, p->string, strlen(p->string))) {
                r = fail(c, "%s: a declared property that a pattern matches is not supported (%s)", "patternProperties");
                goto done;
            }
        char seg[300];
        snprintf(seg, sizeof seg, "patternProperties/%.250s", pp->child->string);
        pkey = term(rx_concat(c->g->rx, re(c, "\""), rx_concat(c->g->rx, pr, re(c, "\""))));
        pval = compile_at(c, pp->child, seg);
        extra = pattern = true;
    }
    int64_t lo, hi;
    if (c->failed || !count_bound(c, s, "minProperties", &lo) || !count_bound(c, s, "maxProperties", &hi)) goto done;
    const cJSON **list = malloc(sizeof *list * (size_t)(n_props ? n_props : 1));
    int *req_after = malloc(sizeof *req_after * (size_t)(n_props + 1)); /* required properties from i on */
    if (!list || !req_after) {
        free(list), free(req_after);
        r = fail(c, "%s (%s)", "out of memory");
        goto done;
    }
    int k = 0;
    for (const cJSON *p = props ? props->child : NULL; p; p = p->next) /* a property that admits no value never appears */
        if (!admits_nothing(p) || is_required(req, p->string)) list[k++] = p;
    const int n = k;
    req_after[n] = 0;
    for (int i = n - 1; i >= 0; i--) req_after[i] = req_after[i + 1] + is_required(req, list[i]->string);
    /* bounds that always hold are no bounds */
    if (lo >= 0 && lo <= req_after[0]) lo = -1;
    if (hi >= 0 && !extra && hi >= n) hi = -1;
    const int64_t S = hi >= 0 ? hi : lo >= 0 ? lo : 0; /* t counts up to S */
    if ((hi >= 0 && lo > hi) || (hi >= 0 && req_after[0] > hi) || (lo > n && !extra)) {
        free(list), free(req_after);
        r = fail(c, "%s: no object meets the bounds (%s)", "minProperties/maxProperties");
        goto done;
    }
    if ((int64_t)(n + 1) * (S + 1) > 20000) {
        free(list), free(req_after);
        r = fail(c, "%s: bounds too large for the properties (%s)", "minProperties/maxProperties");
        goto done;
    }
    const size_t W = (size_t)S + 1, cells = (size_t)(n + 1) * W;
    int32_t *A = malloc(sizeof *A * cells), *B = malloc(sizeof *B * cells);
    if (!A || !B) {
        free(A), free(B), free(list), free(req_after);
        r = fail(c, "%s (%s)", "out of memory");
        goto done;
    }
    /* state (i, t) can still end within the bounds */
#define VIABLE(i, t) ((hi < 0 || (t) + req_after[i] <= hi) && (lo < 0 || extra || (t) + (n - (i)) >= lo))
#define NEXT(t) ((t) < S ? (t) + 1 : S)
#define EMIT(t) (hi < 0 || (t) < hi)
    for (size_t x = 0; x < cells; x++) A[x] = B[x] = -1;
    for (int i = 0; i <= n && !c->failed; i++)
        for (int64_t t = 0; t <= S && !c->failed; t++)
            if (VIABLE(i, t)) A[(size_t)i * W + (size_t)t] = nonterm(c), B[(size_t)i * W + (size_t)t] = nonterm(c);
    const cfg_sym ws = c->ws, comma = lit(c, ","), colon = lit(c, ":");
    if (extra && !c->failed) { /* more keys after the declared ones, none of them a declared name */
        const cfg_sym v = pattern ? pval : extra_schema ? extra_val : any_value(c);
        const cfg_sym key = pattern ? pkey : free_key(c, props);
        for (int64_t t = 0; t <= S && !c->failed; t++) {
            const int32_t a = A[(size_t)n * W + (size_t)t], b = B[(size_t)n * W + (size_t)t];
            if (a < 0) continue;
            if (lo < 0 || t >= lo) rule_empty(c, a), rule_empty(c, b);
            if (!EMIT(t)) continue;
            const int32_t to = A[(size_t)n * W + (size_t)NEXT(t)];
            RULE(c, a, ws, comma, ws, key, ws, colon, ws, v, to);
            RULE(c, b, key, ws, colon, ws, v, to);
        }
    } else {
        for (int64_t t = 0; t <= S; t++)
            if (A[(size_t)n * W + (size_t)t] >= 0) rule_empty(c, A[(size_t)n * W + (size_t)t]), rule_empty(c, B[(size_t)n * W + (size_t)t]);
    }
    for (int i = n - 1; i >= 0 && !c->failed; i--) {
        const cJSON *p = list[i];
        const bool required = is_required(req, p->string);
        char seg[300];
        snprintf(seg, sizeof seg, "properties/%.250s", p->string);
        const cfg_sym v = compile_at(c, p, seg), key = key_literal(c, p->string);
        for (int64_t t = 0; t <= S && !c->failed; t++) {
            const int32_t a = A[(size_t)i * W + (size_t)t], b = B[(size_t)i * W + (size_t)t];
            if (a < 0) continue;
            const int32_t to = EMIT(t) ? A[(size_t)(i + 1) * W + (size_t)NEXT(t)] : -1;
            if (to >= 0) {
                RULE(c, b, key, ws, colon, ws, v, to);
                RULE(c, a, ws, comma, ws, key, ws, colon, ws, v, to);
            }
            const int32_t skip_a = A[(size_t)(i + 1) * W + (size_t)t], skip_b = B[(size_t)(i + 1) * W + (size_t)t];
            if (!required && skip_a >= 0) {
                RULE(c, b, skip_b);
                RULE(c, a, skip_a);
            }
        }
    }
#undef VIABLE
#undef NEXT
#undef EMIT
    if (!c->failed) {
        if (B[0] < 0) r = fail(c, "%s: no object meets the bounds (%s)", "minProperties/maxProperties");
        else {
            const int32_t obj = nonterm(c);
            RULE(c, obj, lit(c, "{"), ws, B[0], ws, lit(c, "}"));
            r = obj;
        }
    }
    free(list);
    free(req_after);
    free(A);
    free(B);
done:
    cJSON_Delete(own);
    return c->failed ? -1 : r;
}

static cfg_sym array_schema(jsc *c, const cJSON *s) {
    const cJSON *items = cJSON_GetObjectItemCaseSensitive(s, "items"), *prefix = cJSON_GetObjectItemCaseSensitive(s, "prefixItems");
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(s, "minItems"), *mx = cJSON_GetObjectItemCaseSensitive(s, "maxItems");
    if (cJSON_IsArray(items)) { /* the older drafts' tuple form */
        prefix = items;
        items = cJSON_GetObjectItemCaseSensitive(s, "additionalItems");
    }
    const int np = prefix ? cJSON_GetArraySize(prefix) : 0;
    const int lo = cJSON_IsNumber(mn) ? mn->valueint : 0, hi = cJSON_IsNumber(mx) ? mx->valueint : -1;
    const cJSON *uniq = cJSON_GetObjectItemCaseSensitive(s, "uniqueItems");
    if (uniq && !cJSON_IsBool(uniq)) return fail(c, "%s must be true or false (%s)", "uniqueItems");
    if (cJSON_IsTrue(uniq) && !(hi >= 0 && hi <= 1)) /* (one item at most: trivially unique) */
        return fail(c, "%s: true is not supported (%s)", "uniqueItems");
    if (lo < 0 || lo > 10000 || hi > 10000 || (hi >= 0 && hi < lo)) return fail(c, "%s: bad bounds (%s)", "minItems/maxItems");
    if (np && (lo > np || (hi >= 0 && hi < np))) return fail(c, "%s with prefixItems is not supported (%s)", "minItems/maxItems");
    cfg_sym item = 0; /* a symbol: terminals are negative, so no sentinel */
    bool more = true;
    if (items && cJSON_IsBool(items)) more = cJSON_IsTrue(items);
    if (items && !cJSON_IsBool(items)) item = compile_at(c, items, "items");
    else if (more) item = any_value(c);
    if (c->failed) return -1;
    const cfg_sym ws = c->ws, comma = lit(c, ",");
    const int32_t arr = nonterm(c);
    if (np) { /* the prefix in full (lo <= np checked), then more items */
        const int32_t tail = nonterm(c);
        rule_empty(c, tail);
        if (more) RULE(c, tail, ws, comma, ws, item, tail);
        int32_t next = tail;
        for (int i = np - 1; i >= 0; i--) {
            char seg[32];
            snprintf(seg, sizeof seg, "prefixItems/%d", i);
            const cfg_sym v = compile_at(c, cJSON_GetArrayItem(prefix, i), seg);
            const int32_t here = nonterm(c);
            if (i) RULE(c, here, ws, comma, ws, v, next);
            else RULE(c, here, v, next);
            next = here;
        }
        RULE(c, arr, lit(c, "["), ws, next, ws, lit(c, "]"));
        return c->failed ? -1 : arr;
    }
    if (!more || hi == 0) {
        RULE(c, arr, lit(c, "["), ws, lit(c, "]"));
        return c->failed ? -1 : arr;
    }
    /* lo..hi items: first item then (lo-1 .. hi-1) more */
    const int32_t rest = nonterm(c), unit = nonterm(c);
    RULE(c, unit, ws, comma, ws, item);
    const int mlo = lo > 0 ? lo - 1 : 0, mhi = hi < 0 ? -1 : hi - 1;
    /* rest: unit^mlo then up to (mhi - mlo) optional units (or any) */
    int32_t opt = nonterm(c);
    const int32_t opt_top = opt;
    if (mhi < 0) {
        rule_empty(c, opt);
        RULE(c, opt, unit, opt);
    } else {
        for (int k = 0; k < mhi - mlo; k++) {
            const int32_t nx = nonterm(c);
            rule_empty(c, opt);
            RULE(c, opt, unit, nx);
            opt = nx;
        }
        rule_empty(c, opt);
    }
    cfg_sym *rhs = malloc(sizeof *rhs * (size_t)(mlo + 1));
    if (!rhs) return fail(c, "%s (%s)", "out of memory");
    for (int k = 0; k < mlo; k++) rhs[k] = unit;
    rhs[mlo] = opt_top;
    if (cfg_add_rule(c->g, rest, rhs, mlo + 1) < 0) c->failed = true;
    free(rhs);
    RULE(c, arr, lit(c, "["), ws, item, rest, ws, lit(c, "]"));
    if (lo == 0) RULE(c, arr, lit(c, "["), ws, lit(c, "]"));
    return c->failed ? -1 : arr;
}

/* The bound keywords of a number schema: their presence, and the integer
 * range they leave (integers only: the bounds rounded inwards). */
static bool has_bounds(const cJSON *s) {
    static const char *k[] = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};
    for (int i = 0; i < 4; i++)
        if (cJSON_GetObjectItemCaseSensitive(s, k[i])) return true;
    return false;
}

static cfg_sym integer_schema(jsc *c, const cJSON *s) {
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(s, "minimum"), *mx = cJSON_GetObjectItemCaseSensitive(s, "maximum");
    const cJSON *xmn = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum"), *xmx = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum");
    if (!has_bounds(s)) return term(re(c, INTEGER_RE));
    bool has_lo = false, has_hi = false;
    double lo = 0, hi = 0;
    const double lim = 9e18;
    if (mn) {
        if (!cJSON_IsNumber(mn)) return fail(c, "%s must be a number (%s)", "minimum");
        has_lo = true, lo = ceil(mn->valuedouble);
        if (cJSON_IsTrue(xmn) && lo == mn->valuedouble) lo += 1; /* draft 4: exclusiveMinimum: true */
    }
    if (mx) {
        if (!cJSON_IsNumber(mx)) return fail(c, "%s must be a number (%s)", "maximum");
        has_hi = true, hi = floor(mx->valuedouble);
        if (cJSON_IsTrue(xmx) && hi == mx->valuedouble) hi -= 1;
    }
    if (cJSON_IsNumber(xmn)) {
        const double v = floor(xmn->valuedouble) + 1;
        if (!has_lo || v > lo) lo = v;
        has_lo = true;
    }
    if (cJSON_IsNumber(xmx)) {
        const double v = ceil(xmx->valuedouble) - 1;
        if (!has_hi || v < hi) hi = v;
        has_hi = true;
    }
    if ((xmn && !cJSON_IsNumber(xmn) && !cJSON_IsBool(xmn)) || (xmx && !cJSON_IsNumber(xmx) && !cJSON_IsBool(xmx)))
        return fail(c, "%s must be a number (%s)", "exclusiveMinimum/exclusiveMaximum");
    if ((has_lo && (lo < -lim || lo > lim)) || (has_hi && (hi < -lim || hi > lim)))
        return fail(c, "%s: bounds beyond 9e18 are not supported (%s)", "minimum/maximum");
    const rx_id r = rx_int_range(c->g->rx, has_lo, (int64_t)lo, has_hi, (int64_t)hi);
    if (r == RX_NOTHING) return fail(c, "%s: the bounds admit no integer (%s)", "minimum/maximum");
    return term(r);
}

/* A number's bounds: minimum/maximum, exclusive as draft 4's booleans or as
 * the later drafts' numbers (the tighter of two lower or upper bounds). */
static cfg_sym number_schema(jsc *c, const cJSON *s) {
    if (!has_bounds(s)) return term(re(c, NUMBER_RE));
    const cJSON *mn = cJSON_GetObjectItemCaseSensitive(s, "minimum"), *mx = cJSON_GetObjectItemCaseSensitive(s, "maximum");
    const cJSON *xmn = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMinimum"), *xmx = cJSON_GetObjectItemCaseSensitive(s, "exclusiveMaximum");
    if ((mn && !cJSON_IsNumber(mn)) || (mx && !cJSON_IsNumber(mx))) return fail(c, "%s must be a number (%s)", "minimum/maximum");
    if ((xmn && !cJSON_IsNumber(xmn) && !cJSON_IsBool(xmn)) || (xmx && !cJSON_IsNumber(xmx) && !cJSON_IsBool(xmx)))
        return fail(c, "%s must be a number (%s)", "exclusiveMinimum/exclusiveMaximum");
    bool has_lo = mn != NULL, has_hi = mx != NULL, lo_strict = mn && cJSON_IsTrue(xmn), hi_strict = mx && cJSON_IsTrue(xmx);
    double lo = mn ? mn->valuedouble : 0, hi = mx ? mx->valuedouble : 0;
    if (cJSON_IsNumber(xmn) && (!has_lo || xmn->valuedouble >= lo)) has_lo = lo_strict = true, lo = xmn->valuedouble;
    if (cJSON_IsNumber(xmx) && (!has_hi || xmx->valuedouble <= hi)) has_hi = hi_strict = true, hi = xmx->valuedouble;
    const rx_id r = rx_num_range(c->g->rx, has_lo, lo, lo_strict, has_hi, hi, hi_strict);
    if (r < 0) return fail(c, "%s: bounds beyond 2^53 are not supported (%s)", "minimum/maximum");
    if (r == RX_NOTHING) return fail(c, "%s: the bounds admit no number (%s)", "minimum/maximum");
    return term(r);
}

static cfg_sym typed(jsc *c, const cJSON *s, const char *type) {
    if (strcmp(type, "string") == 0) return string_schema(c, s);
    if (strcmp(type, "number") == 0) return number_schema(c, s);
    if (strcmp(type, "integer") == 0) return integer_schema(c, s);
    if (strcmp(type, "boolean") == 0) return term(re(c, "true|false"));
    if (strcmp(type, "null") == 0) return lit(c, "null");
    if (strcmp(type, "object") == 0) return object_schema(c, s);
    if (strcmp(type, "array") == 0) return array_schema(c, s);
    char what[120];
    snprintf(what, sizeof what, "type \"%.60s\"", type);
    return fail(c, "%s is not a JSON Schema type (%s)", what);
}

static bool annotation(const char *k) { return json_schema_annotation(k); }
static bool known_keyword(const char *k) { return !json_schema_refused(k); }

/* An enum or const takes no other validating keyword but type (which
 * filters its values): one would be ignored, so it is refused, naming it. */
static void only_with(jsc *c, const cJSON *s, const char *main, bool type_ok) {
    for (const cJSON *k = s->child; k && !c->failed; k = k->next) {
        if (strcmp(k->string, main) == 0 || annotation(k->string)) continue;
        if (type_ok && (strcmp(k->string, "type") == 0 || strcmp(k->string, "enum") == 0 || strcmp(k->string, "const") == 0)) continue;
        char what[200];
        snprintf(what, sizeof what, "keyword \"%.60s\" beside \"%s\"", k->string, main);
        fail(c, "%s is not supported (%s)", what);
    }
}

/* Does JSON value v have type name t ("integer": a number with no fraction)? */
static bool value_has_type(const cJSON *v, const char *t) {
    if (strcmp(t, "null") == 0) return cJSON_IsNull(v);
    if (strcmp(t, "boolean") == 0) return cJSON_IsBool(v);
    if (strcmp(t, "string") == 0) return cJSON_IsString(v);
    if (strcmp(t, "array") == 0) return cJSON_IsArray(v);
    if (strcmp(t, "object") == 0) return cJSON_IsObject(v);
    if (strcmp(t, "number") == 0) return cJSON_IsNumber(v);
    if (strcmp(t, "integer") == 0) return cJSON_IsNumber(v) && v->valuedouble == (double)(long long)v->valuedouble;
    return false;
}

/* Does v satisfy type (absent, a name, or an array of names)? */
static bool value_fits(const cJSON *v, const cJSON *type) {
    if (!type) return true;
    if (cJSON_IsString(type)) return value_has_type(v, type->valuestring);
    for (const cJSON *t = cJSON_IsArray(type) ? type->child : NULL; t; t = t->next)
        if (cJSON_IsString(t) && value_has_type(v, t->valuestring)) return true;
    return false;
}

static const cJSON *resolve_pointer(const cJSON *root, const char *ref) { return json_schema_resolve(root, ref); }

static cfg_sym ref_schema(jsc *c, const char *ref) {
    const cJSON *t = resolve_pointer(c->root, ref);
    if (!t) {
        char what[300];
        snprintf(what, sizeof what, "$ref \"%.250s\"", ref);
        return fail(c, "%s: not found or not supported (%s)", what);
    }
    for (size_t i = 0; i < c->n_refs; i++)
        if (c->ref_node[i] == t) return c->ref_sym[i];
    const int32_t n = nonterm(c); /* filed before compiling: recursion refers to it */
    if (n < 0 || !GROW_ARRAY(c->ref_node, c->n_refs + 1, &c->refs_cap) ||
        !GROW_ARRAY(c->ref_sym, c->n_refs + 1, &c->refs_cap2))
        return fail(c, "%s (%s)", "out of memory");
    c->ref_node[c->n_refs] = t, c->ref_sym[c->n_refs] = n, c->n_refs++;
    char saved[sizeof c->path];
    memcpy(saved, c->path, sizeof saved);
    snprintf(c->path, sizeof c->path, "%s", ref + 1); /* paths are kept without the leading # */
    const cfg_sym body = compile(c, t);
    memcpy(c->path, saved, sizeof saved);
    if (body < 0 && c->failed) return -1;
    RULE(c, n, body);
    return n;
}

/* ---- anyOf / oneOf ---- */

enum { T_NULL = 1, T_BOOL = 2, T_OBJ = 4, T_ARR = 8, T_STR = 16, T_NUM = 32, T_ALL = 63 };

static unsigned type_bit(const char *t) {
    return !strcmp(t, "null") ? T_NULL : !strcmp(t, "boolean") ? T_BOOL : !strcmp(t, "object") ? T_OBJ
         : !strcmp(t, "array") ? T_ARR : !strcmp(t, "string") ? T_STR
         : !strcmp(t, "number") || !strcmp(t, "integer") ? T_NUM : T_ALL;
}

static unsigned value_bit(const cJSON *v) {
    return cJSON_IsNull(v) ? T_NULL : cJSON_IsBool(v) ? T_BOOL : cJSON_IsObject(v) ? T_OBJ : cJSON_IsArray(v) ? T_ARR
         : cJSON_IsString(v) ? T_STR : T_NUM;
}

/* The JSON types some instance of s may have (a superset). */
static unsigned types_of(const cJSON *root, const cJSON *s, int depth) {
    if (depth > 16 || cJSON_IsTrue(s) || !cJSON_IsObject(s)) return cJSON_IsFalse(s) ? 0 : T_ALL;
    const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
    if (cJSON_IsString(ref)) {
        const cJSON *t = resolve_pointer(root, ref->valuestring);
        return t ? types_of(root, t, depth + 1) : T_ALL;
    }
    unsigned m = T_ALL;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(s, "type");
    if (cJSON_IsString(type)) m = type_bit(type->valuestring);
    else if (cJSON_IsArray(type)) {
        m = 0;
        for (const cJSON *t = type->child; t; t = t->next) m |= cJSON_IsString(t) ? type_bit(t->valuestring) : T_ALL;
    }
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum"), *cn = cJSON_GetObjectItemCaseSensitive(s, "const");
    if (cJSON_IsArray(en) || cn) {
        unsigned v = 0;
        for (const cJSON *e = cJSON_IsArray(en) ? en->child : cn; e; e = cJSON_IsArray(en) ? e->next : NULL) v |= value_bit(e);
        m &= v;
    }
    static const char *const lists[] = {"anyOf", "oneOf"};
    for (int l = 0; l < 2; l++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(s, lists[l]);
        if (!cJSON_IsArray(list)) continue;
        unsigned u = 0;
        for (const cJSON *b = list->child; b; b = b->next) u |= types_of(root, b, depth + 1);
        m &= u;
    }
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(s, "allOf");
    for (const cJSON *b = cJSON_IsArray(all) ? all->child : NULL; b; b = b->next) m &= types_of(root, b, depth + 1);
    return m;
}

/* The values property k of object schema s is limited to (its const or
 * enum), or NULL. */
static const cJSON *tag_values(const cJSON *root, const cJSON *s, const char *k, bool *is_enum) {
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(s, "properties"), *req = cJSON_GetObjectItemCaseSensitive(s, "required");
    bool required = false;
    for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next) required |= cJSON_IsString(r) && !strcmp(r->valuestring, k);
    const cJSON *p = required ? cJSON_GetObjectItemCaseSensitive(props, k) : NULL;
    const cJSON *ref = cJSON_IsObject(p) ? cJSON_GetObjectItemCaseSensitive(p, "$ref") : NULL;
    if (cJSON_IsString(ref)) p = resolve_pointer(root, ref->valuestring);
    if (!cJSON_IsObject(p)) return NULL;
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(p, "allOf"); /* a member's values bound the conjunction's */
    for (const cJSON *m = cJSON_IsArray(all) ? all->child : NULL; m; m = m->next) {
        const cJSON *mc = cJSON_GetObjectItemCaseSensitive(m, "const"), *me = cJSON_GetObjectItemCaseSensitive(m, "enum");
        if (mc || cJSON_IsArray(me)) p = m;
    }
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(p, "const"), *en = cJSON_GetObjectItemCaseSensitive(p, "enum");
    *is_enum = cn == NULL;
    return cn ? cn : cJSON_IsArray(en) ? en : NULL;
}

static bool values_meet(const cJSON *a, bool ae, const cJSON *b, bool be) {
    for (const cJSON *x = ae ? a->child : a; x; x = ae ? x->next : NULL)
        for (const cJSON *y = be ? b->child : b; y; y = be ? y->next : NULL)
            if (cJSON_Compare(x, y, true)) return true;
    return false;
}

/* Can no value match both a and b? By their types, or, for objects, by a
 * required property whose const/enum values differ (a discriminator). */
static bool disjoint(const cJSON *root, const cJSON *a, const cJSON *b) {
    const unsigned ta = types_of(root, a, 0), tb = types_of(root, b, 0);
    if (!(ta & tb)) return true;
    if (cJSON_IsObject(a) && cJSON_IsObject(b)) { /* values listed on both sides, none in common */
        const cJSON *ca = cJSON_GetObjectItemCaseSensitive(a, "const"), *ea = cJSON_GetObjectItemCaseSensitive(a, "enum");
        const cJSON *cb = cJSON_GetObjectItemCaseSensitive(b, "const"), *eb = cJSON_GetObjectItemCaseSensitive(b, "enum");
        const cJSON *va = ca ? ca : cJSON_IsArray(ea) ? ea : NULL, *vb = cb ? cb : cJSON_IsArray(eb) ? eb : NULL;
        if (va && vb && !values_meet(va, !ca, vb, !cb)) return true;
    }
    if (ta != T_OBJ || tb != T_OBJ) return false;
    for (int hop = 0; hop < 2; hop++) { /* the branches themselves, or what their $ref points at */
        const cJSON *ra = cJSON_GetObjectItemCaseSensitive(a, "$ref"), *rb = cJSON_GetObjectItemCaseSensitive(b, "$ref");
        if (cJSON_IsString(ra)) a = resolve_pointer(root, ra->valuestring);
        if (cJSON_IsString(rb)) b = resolve_pointer(root, rb->valuestring);
        if (!a || !b) return false;
    }
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(a, "properties");
    for (const cJSON *p = cJSON_IsObject(props) ? props->child : NULL; p; p = p->next) {
        bool ea, eb;
        const cJSON *va = tag_values(root, a, p->string, &ea), *vb = va ? tag_values(root, b, p->string, &eb) : NULL;
        if (va && vb && !values_meet(va, ea, vb, eb)) return true;
    }
    return false;
}

static cfg_sym any_or_one(jsc *c, const cJSON *list, bool one) {
    const char *kw = one ? "oneOf" : "anyOf";
    if (!cJSON_IsArray(list) || !list->child) return fail(c, "%s must be a non-empty array (%s)", kw);
    enum { MAX_BRANCHES = 256 };
    const cJSON *br[MAX_BRANCHES];
    int n = 0;
    for (const cJSON *m = list->child; m; m = m->next) {
        if (n == MAX_BRANCHES) return fail(c, "%s: more than 256 alternatives (%s)", kw);
        br[n++] = m;
    }
    for (int i = 0; one && i < n && !c->failed; i++)
        for (int j = i + 1; j < n && !c->failed; j++)
            if (!disjoint(c->root, br[i], br[j])) {
                char what[64];
                snprintf(what, sizeof what, "oneOf (alternatives %d and %d)", i, j);
                fail(c, "%s: alternatives that may both match are not supported (%s)", what);
            }
    int32_t nt = c->failed ? -1 : nonterm(c);
    for (int i = 0; i < n && !c->failed; i++) {
        char seg[32];
        snprintf(seg, sizeof seg, "%s/%d", kw, i);
        const cfg_sym v = compile_at(c, br[i], seg);
        if (!c->failed) RULE(c, nt, v);
    }
    return c->failed ? -1 : nt;
}

/* Are there validating keywords in s other than main? */
static bool has_siblings(const cJSON *s, const char *main) {
    for (const cJSON *k = s->child; k; k = k->next)
        if (strcmp(k->string, main) != 0 && !annotation(k->string)) return true;
    return false;
}

static void merge_failed(jsc *c, const json_merge *m, const char *kw) {
    char what[260];
    if (m->empty) snprintf(what, sizeof what, "%s: no value satisfies all of its schemas", kw);
    else snprintf(what, sizeof what, "%s", m->why);
    fail(c, "%s (%s)", what);
}

/* s with its allOf members and $ref target merged into one schema. */
static cfg_sym merged(jsc *c, const cJSON *s, const char *kw) {
    json_merge m = {.root = c->root, .strict = c->o.strict, .budget = 256};
    cJSON *x = json_schema_merge(&m, s, NULL);
    if (!x) {
        merge_failed(c, &m, kw);
        return -1;
    }
    const cfg_sym r = compile(c, x);
    cJSON_Delete(x);
    return r;
}

/* The names of a oneOf alternative that is only "required" (and
 * annotations), or NULL. */
static const cJSON *required_only(const cJSON *b) {
    if (!cJSON_IsObject(b)) return NULL;
    const cJSON *req = NULL;
    for (const cJSON *k = b->child; k; k = k->next) {
        if (!strcmp(k->string, "required") && cJSON_IsArray(k)) req = k;
        else if (!annotation(k->string)) return NULL;
    }
    for (const cJSON *r = req ? req->child : NULL; r; r = r->next)
        if (!cJSON_IsString(r)) return NULL;
    return req;
}

static bool names_have(const cJSON *names, const char *n) {
    for (const cJSON *r = names->child; r; r = r->next)
        if (!strcmp(r->valuestring, n)) return true;
    return false;
}

/* oneOf over alternatives that only require properties, as anyOf over
 * alternatives that exclude each other: alternative i also forbids, for
 * every other j, the one property j requires beyond i's (an object meeting
 * i meets j exactly when that property is there). NULL when some j requires
 * more than one property beyond i's (the exclusion would be a disjunction). */
static cJSON *exclusive_required(const cJSON *list) {
    for (const cJSON *b = list->child; b; b = b->next)
        if (!required_only(b)) return NULL;
    cJSON *alts = cJSON_CreateArray();
    for (const cJSON *b = list->child; b && alts; b = b->next) {
        const cJSON *ri = required_only(b);
        cJSON *alt = cJSON_CreateObject(), *props = cJSON_CreateObject();
        bool empty = false, ok = alt && props;
        for (const cJSON *o = list->child; o && ok; o = o->next) {
            if (o == b) continue;
            const cJSON *rj = required_only(o), *extra = NULL;
            int n = 0;
            for (const cJSON *r = rj->child; r; r = r->next)
                if (!names_have(ri, r->valuestring)) extra = r, n++;
            if (n == 0) empty = true; /* every object meeting i meets j too */
            else if (n > 1) ok = false;
            else if (!cJSON_GetObjectItemCaseSensitive(props, extra->valuestring)) cJSON_AddItemToObject(props, extra->valuestring, cJSON_CreateFalse());
        }
        if (!ok) {
            cJSON_Delete(alt), cJSON_Delete(props), cJSON_Delete(alts);
            return NULL;
        }
        if (empty) {
            cJSON_Delete(alt), cJSON_Delete(props);
            continue;
        }
        /* with two alternatives or more, a value other than an object meets them all */
        if (cJSON_GetArraySize(list) > 1) cJSON_AddItemToObject(alt, "type", cJSON_CreateString("object"));
        cJSON_AddItemToObject(alt, "required", cJSON_Duplicate(ri, true));
        cJSON_AddItemToObject(alt, "properties", props);
        cJSON_AddItemToArray(alts, alt);
    }
    return alts;
}

/* Does object schema x require a property whose schema admits nothing? */
static bool requires_nothing(const cJSON *x) {
    const cJSON *req = cJSON_GetObjectItemCaseSensitive(x, "required"), *props = cJSON_GetObjectItemCaseSensitive(x, "properties");
    for (const cJSON *r = cJSON_IsArray(req) ? req->child : NULL; r; r = r->next) {
        const cJSON *p = cJSON_IsString(r) ? cJSON_GetObjectItemCaseSensitive(props, r->valuestring) : NULL;
        if (p && admits_nothing(p)) return true;
    }
    return false;
}

/* anyOf/oneOf (list, s's list_kw) with other keywords beside it: each
 * alternative merged with them (alternatives that then admit nothing left
 * out), compiled as oneOf (one) or anyOf. */
static cfg_sym distributed(jsc *c, const cJSON *s, const char *list_kw, const cJSON *list, bool one) {
    const char *kw = one ? "oneOf" : "anyOf";
    if (!cJSON_IsArray(list) || !list->child) return fail(c, "%s must be a non-empty array (%s)", kw);
    cJSON *rest = cJSON_Duplicate(s, true), *alts = cJSON_CreateArray();
    if (!rest || !alts) {
        cJSON_Delete(rest), cJSON_Delete(alts);
        return fail(c, "%s (%s)", "out of memory");
    }
    cJSON_DeleteItemFromObjectCaseSensitive(rest, list_kw);
    for (const cJSON *b = list->child; b && !c->failed; b = b->next) {
        json_merge m = {.root = c->root, .strict = c->o.strict, .budget = 256};
        cJSON *x = json_schema_merge(&m, rest, b);
        if (x && requires_nothing(x)) cJSON_Delete(x); /* it admits no value */
        else if (x) cJSON_AddItemToArray(alts, x);
        else if (!m.empty) merge_failed(c, &m, kw);
    }
    cfg_sym r = -1;
    if (!c->failed && !alts->child) fail(c, "%s: no alternative meets the keywords beside it (%s)", kw);
    else if (!c->failed) r = any_or_one(c, alts, one);
    cJSON_Delete(rest);
    cJSON_Delete(alts);
    return c->failed ? -1 : r;
}

/* The JSON value v as the sentences spelling it: its compact form, with
 * whitespace between tokens where the grammar allows it. */
static cfg_sym value_literal(jsc *c, const cJSON *v) {
    const bool nested = (cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child;
    if (!nested || cfg_term_of(c->ws) == RX_EPSILON) {
        char *t = cJSON_PrintUnformatted(v);
        const cfg_sym r = t ? lit(c, t) : (c->failed = true, -1);
        free(t);
        return r;
    }
    const bool obj = cJSON_IsObject(v);
    const cfg_sym ws = c->ws;
    int32_t n = nonterm(c), prev = -1;
    /* n: the opening bracket, then one nonterminal a member each */
    for (const cJSON *x = v->child; x && !c->failed; x = x->next) {
        const int32_t m = nonterm(c);
        const cfg_sym val = value_literal(c, x);
        if (c->failed) break;
        if (obj) {
            const cfg_sym key = key_literal(c, x->string);
            if (prev < 0) RULE(c, m, lit(c, "{"), ws, key, ws, lit(c, ":"), ws, val);
            else RULE(c, m, prev, ws, lit(c, ","), ws, key, ws, lit(c, ":"), ws, val);
        } else {
            if (prev < 0) RULE(c, m, lit(c, "["), ws, val);
            else RULE(c, m, prev, ws, lit(c, ","), ws, val);
        }
        prev = m;
    }
    if (!c->failed) RULE(c, n, prev, ws, lit(c, obj ? "}" : "]"));
    return c->failed ? -1 : n;
}

/* Does s admit no value (false, or an enum/const none of whose values has
 * the type beside it)? */
static bool admits_nothing(const cJSON *s) {
    if (cJSON_IsFalse(s)) return true;
    if (!cJSON_IsObject(s)) return false;
    const cJSON *all = cJSON_GetObjectItemCaseSensitive(s, "allOf");
    for (const cJSON *m = cJSON_IsArray(all) ? all->child : NULL; m; m = m->next)
        if (admits_nothing(m)) return true;
    const cJSON *en = cJSON_GetObjectItemCaseSensitive(s, "enum"), *cn = cJSON_GetObjectItemCaseSensitive(s, "const"),
                *type = cJSON_GetObjectItemCaseSensitive(s, "type");
    if (!type || (!cJSON_IsArray(en) && !cn) || (en && cn)) return false;
    for (const cJSON *v = en ? en->child : cn; v; v = en ? v->next : NULL)
        if (value_fits(v, type)) return false;
    return true;
}

static cfg_sym compile(jsc *c, const cJSON *s) {
    if (c->failed) return -1;
    if (++c->depth > MAX_DEPTH) return fail(c, "%s (%s)", "schema nested too deeply");
    cfg_sym out = -1;
    if (cJSON_IsTrue(s)) out = any_value(c);
    else if (cJSON_IsFalse(s)) out = fail(c, "%s: the schema false admits no value (%s)", "false");
    else if (!cJSON_IsObject(s)) out = fail(c, "%s: a schema must be an object or a boolean (%s)", "schema");
    else {
        for (const cJSON *k = s->child; k && !c->failed; k = k->next)
            if (!known_keyword(k->string)) {
                char what[160];
                snprintf(what, sizeof what, "keyword \"%.100s\"", k->string);
                out = fail(c, "%s is not supported (%s)", what);
            }
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref"), *en = cJSON_GetObjectItemCaseSensitive(s, "enum"),
                    *cn = cJSON_GetObjectItemCaseSensitive(s, "const"), *any = cJSON_GetObjectItemCaseSensitive(s, "anyOf"),
                    *all = cJSON_GetObjectItemCaseSensitive(s, "allOf"), *type = cJSON_GetObjectItemCaseSensitive(s, "type"),
                    *one = cJSON_GetObjectItemCaseSensitive(s, "oneOf");
        const int kinds = !!ref + !!en + !!cn + !!any + !!all + !!one;
        cJSON *xor = NULL;
        if (c->failed) {
        } else if (all && (!cJSON_IsArray(all) || all->child == NULL || all->child->next || has_siblings(s, "allOf"))) {
            out = merged(c, s, "allOf");
        } else if (ref && has_siblings(s, "$ref")) { /* the keywords beside a $ref apply too (as from draft 2019-09) */
            out = merged(c, s, "$ref");
        } else if (one && !any && cJSON_IsArray(one) && (xor = exclusive_required(one)) != NULL) {
            out = distributed(c, s, "oneOf", xor, false);
            cJSON_Delete(xor);
        } else if ((any || one) && !(any && one) && has_siblings(s, any ? "anyOf" : "oneOf")) {
            out = distributed(c, s, any ? "anyOf" : "oneOf", any ? any : one, one != NULL);
        } else if (kinds == 1 && (any || one)) {
            out = any_or_one(c, any ? any : one, one != NULL);
        } else if (kinds > 1 || (kinds && type && !en && !cn)) {
            out = fail(c, "%s: several of $ref, enum, const, anyOf, oneOf, allOf, type in one schema are not supported (%s)", "combination");
        } else if (ref) { /* alone (keywords beside it are merged above) */
            out = cJSON_IsString(ref) ? ref_schema(c, ref->valuestring) : fail(c, "%s must be a string (%s)", "$ref");
        } else if (en || cn) { /* each value in its compact spelling, those of the type beside it (if any) */
            only_with(c, s, en ? "enum" : "const", true);
            if (type && !cJSON_IsString(type) && !cJSON_IsArray(type)) out = fail(c, "%s must be a string or an array (%s)", "type");
            const int32_t n = c->failed ? -1 : nonterm(c);
            const cJSON *v = en ? (cJSON_IsArray(en) ? en->child : NULL) : cn;
            if (en && !cJSON_IsArray(en)) out = fail(c, "%s must be an array (%s)", "enum");
            bool any_value = false;
            for (; v && !c->failed; v = en ? v->next : NULL) {
                if (!value_fits(v, type)) continue;
                any_value = true;
                RULE(c, n, value_literal(c, v));
            }
            if (!c->failed && en && !en->child) out = fail(c, "%s: an empty enum admits no value (%s)", "enum");
            else if (!c->failed && !any_value) out = fail(c, "%s: no value of the enum or const is of the given type (%s)", en ? "enum" : "const");
            else if (!c->failed) out = n;
        } else if (all) { /* one schema and annotations */
            out = compile_at(c, all->child, "allOf/0");
        } else if (cJSON_IsString(type)) {
            out = typed(c, s, type->valuestring);
            const cJSON *nl = cJSON_GetObjectItemCaseSensitive(s, "nullable");
            if (cJSON_IsTrue(nl) && !c->failed) {
                const int32_t n = nonterm(c);
                RULE(c, n, out);
                RULE(c, n, lit(c, "null"));
                out = n;
            }
        } else if (cJSON_IsArray(type)) {
            const int32_t n = nonterm(c);
            for (const cJSON *t = type->child; t && !c->failed; t = t->next) {
                if (!cJSON_IsString(t)) out = fail(c, "%s: type names must be strings (%s)", "type");
                else {
                    const cfg_sym v = typed(c, s, t->valuestring);
                    if (!c->failed) RULE(c, n, v);
                }
            }
            if (!c->failed) out = n;
        } else if (type) {
            out = fail(c, "%s must be a string or an array (%s)", "type");
        } else {
            /* no type: a value of any type, each under the keywords that
             * apply to it (minLength constrains strings only, ...) */
            static const char *const all[] = {"null", "boolean", "object", "array", "string", "number"};
            bool plain = true; /* no keyword but annotations: any value */
            for (const cJSON *k = s->child; k; k = k->next) plain = plain && annotation(k->string);
            if (plain) {
                out = any_value(c);
            } else {
                const int32_t n = nonterm(c);
                for (size_t i = 0; i < sizeof all / sizeof *all && !c->failed; i++) {
                    const cfg_sym v = typed(c, s, all[i]);
                    if (!c->failed) RULE(c, n, v);
                }
                out = c->failed ? -1 : n;
            }
        }
    }
    c->depth--;
    return c->failed ? -1 : out;
}

/* start -> framed values: item = prefix value suffix; start = item (sep
 * item){min-1, max-1}, the optional ones nested so each is a choice once. */
static void frame(jsc *c, int32_t start, cfg_sym top) {
    const int32_t item = nonterm(c);
    if (c->failed) return;
    RULE(c, item, lit(c, c->o.prefix), top, lit(c, c->o.suffix ? c->o.suffix : ""));
    const cfg_sym sep = lit(c, c->o.separator ? c->o.separator : "");
    const int lo = c->o.min_values > 1 ? c->o.min_values : 1;
    const int hi = c->o.max_values;
    /* more: the optional items after the first lo */
    int32_t more = nonterm(c);
    if (c->failed) return;
    if (hi == 0) { /* more -> ε | sep item more */
        rule_empty(c, more);
        RULE(c, more, sep, item, more);
    } else { /* more_k -> ε | sep item more_{k-1}, k = hi - lo optional items */
        int32_t next = -1;
        for (int k = 0; k < hi - lo && !c->failed; k++) {
            const int32_t m = k == hi - lo - 1 ? more : nonterm(c);
            rule_empty(c, m);
            if (next >= 0) RULE(c, m, sep, item, next);
            else RULE(c, m, sep, item);
            next = m;
        }
        if (hi - lo <= 0) rule_empty(c, more);
    }
    const int32_t first = nonterm(c); /* item (sep item){lo-1} */
    RULE(c, first, item);
    int32_t chain = first;
    for (int k = 1; k < lo && !c->failed; k++) {
        const int32_t n = nonterm(c);
        RULE(c, n, chain, sep, item);
        chain = n;
    }
    RULE(c, start, chain, more);
}

int json_schema_compile(cfg *g, const cJSON *schema, const json_schema_opts *opts, wick_error *err) {
    jsc c = {.g = g, .root = schema, .err = err, .any = -1};
    if (opts) c.o = *opts;
    c.ws = term(c.o.flexible_ws ? re(&c, "[ \\t\\n\\r]*") : c.o.single_space ? re(&c, " ?") : RX_EPSILON);
    /* one character: \\u escapes of surrogates are left out, so that a length in characters
     * is a count of these units (a pair would be two units for one character) */
    c.str_char = re(&c, "[^\"\\\\\\x00-\\x1f]|\\\\([\"\\\\/bfnrt]|u([0-9a-cA-Ce-fE-F][0-9a-fA-F]{3}|[dD][0-7][0-9a-fA-F]{2}))");
    const int32_t start = nonterm(&c);
    const cfg_sym top = compile(&c, schema);
    int rc = -1;
    if (!c.failed) {
        if (c.o.prefix) frame(&c, start, top);
        else RULE(&c, start, c.ws, top, c.ws);
        rc = c.failed ? wick_fail_code(err, WICK_E_NO_MEMORY, "json schema: out of memory") : cfg_finish(g, start, err);
    }
    free(c.ref_node);
    free(c.ref_sym);
    return rc;
}
