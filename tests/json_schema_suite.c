/* json_schema_suite.c — runs the JSON-Schema-Test-Suite's files through the
 * grammar engine (tests/json_schema_suite.test.sh drives it):
 *
 *   json_schema_suite [-v] FILE.json...
 *
 * Each group's schema is compiled (a refusal, naming the keyword, is
 * counted, never an error); each test's data is then serialized compactly
 * (the grammar's default form) and fed byte by byte: a valid instance must
 * be accepted, an invalid one refused. Objects are serialized with their
 * keys in the schema's property order (the order the grammar generates),
 * under an anyOf, in each alternative's order, and (for a top-level object of
 * at most five keys) in every order of its keys, since a merged schema's
 * order is the merge's: an instance counts as accepted when any of its
 * serializations is. Prints one line per file:
 *   FILE groups G compiled C tests T valid_accepted VA/V invalid_refused IR/I
 * and a line per failing test (-v: also each refused group and why); exits 1
 * when an invalid instance was accepted or a valid one refused. */
#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fileio.h"
#include "grammar/json_schema.h"
#include "grammar_check.h"

#define MAX_VARIANTS 140 /* 8, and 5! orders of a top-level object's keys */

static const cJSON *resolve(const cJSON *root, const cJSON *s) {
    for (int hops = 0; hops < 16 && cJSON_IsObject(s); hops++) {
        const cJSON *ref = cJSON_GetObjectItemCaseSensitive(s, "$ref");
        if (!cJSON_IsString(ref)) return s;
        const char *r = ref->valuestring;
        if (strcmp(r, "#") == 0) s = root;
        else if (strncmp(r, "#/definitions/", 14) == 0)
            s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "definitions"), r + 14);
        else if (strncmp(r, "#/$defs/", 8) == 0)
            s = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "$defs"), r + 8);
        else return NULL;
    }
    return s;
}

/* A copy of data with object keys in schema s's property order (recursively). */
static cJSON *canon(const cJSON *root, const cJSON *s, const cJSON *data) {
    s = resolve(root, s);
    const cJSON *all = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "allOf") : NULL;
    if (cJSON_IsArray(all) && all->child) s = resolve(root, all->child);
    if (cJSON_IsObject(data)) {
        cJSON *o = cJSON_CreateObject();
        const cJSON *props = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "properties") : NULL;
        const cJSON *addl = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "additionalProperties") : NULL;
        for (const cJSON *p = props ? props->child : NULL; p; p = p->next) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, p->string);
            if (v) cJSON_AddItemToObject(o, p->string, canon(root, p, v));
        }
        for (const cJSON *v = data->child; v; v = v->next)
            if (!props || !cJSON_GetObjectItemCaseSensitive(props, v->string))
                cJSON_AddItemToObject(o, v->string, canon(root, cJSON_IsObject(addl) ? addl : NULL, v));
        return o;
    }
    if (cJSON_IsArray(data)) {
        cJSON *a = cJSON_CreateArray();
        const cJSON *items = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "items") : NULL;
        const cJSON *prefix = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "prefixItems") : NULL;
        if (cJSON_IsArray(items)) prefix = items, items = NULL; /* draft 4's tuple form */
        int i = 0;
        for (const cJSON *v = data->child; v; v = v->next, i++) {
            const cJSON *sub = prefix ? cJSON_GetArrayItem(prefix, i) : NULL;
            cJSON_AddItemToArray(a, canon(root, sub ? sub : cJSON_IsObject(items) ? items : NULL, v));
        }
        return a;
    }
    return cJSON_Duplicate(data, true);
}

/* The serializations to try: as written, in the schema's order, in each anyOf alternative's. */
static int variants(const cJSON *root, const cJSON *data, char **out) {
    int n = 0;
    out[n++] = cJSON_PrintUnformatted(data);
    cJSON *c = canon(root, root, data);
    out[n++] = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    const cJSON *s = resolve(root, root);
    const cJSON *any = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "anyOf") : NULL;
    for (const cJSON *b = cJSON_IsArray(any) ? any->child : NULL; b && n < 8; b = b->next) {
        c = canon(root, b, data);
        out[n++] = cJSON_PrintUnformatted(c);
        cJSON_Delete(c);
    }
    const int k = cJSON_IsObject(data) ? cJSON_GetArraySize(data) : 0;
    if (k < 2 || k > 5) return n;
    int perm[5] = {0, 1, 2, 3, 4};
    for (;;) { /* each order of the keys, in lexicographic order of perm */
        cJSON *o = cJSON_CreateObject();
        for (int i = 0; i < k; i++) {
            const cJSON *v = cJSON_GetArrayItem(data, perm[i]);
            cJSON_AddItemToObject(o, v->string, cJSON_Duplicate(v, true));
        }
        out[n++] = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        int i = k - 2;
        while (i >= 0 && perm[i] > perm[i + 1]) i--;
        if (i < 0) break;
        int j = k - 1;
        while (perm[j] < perm[i]) j--;
        const int t = perm[i];
        perm[i] = perm[j], perm[j] = t;
        for (int a = i + 1, b = k - 1; a < b; a++, b--) {
            const int u = perm[a];
            perm[a] = perm[b], perm[b] = u;
        }
    }
    return n;
}

int main(int argc, char **argv) {
    int bad = 0;
    bool verbose = false;
    for (int f = 1; f < argc; f++) {
        if (strcmp(argv[f], "-v") == 0) {
            verbose = true;
            continue;
        }
        size_t len;
        wick_error err;
        char *text = file_read_all(argv[f], &len, &err);
        cJSON *doc = text ? cJSON_ParseWithLength(text, len) : NULL;
        free(text);
        if (!cJSON_IsArray(doc)) {
            printf("FAIL: %s: not a suite file\n", argv[f]);
            bad++;
            cJSON_Delete(doc);
            continue;
        }
        int groups = 0, compiled = 0, v_all = 0, v_ok = 0, i_all = 0, i_ok = 0;
        for (const cJSON *grp = doc->child; grp; grp = grp->next) {
            groups++;
            const cJSON *schema = cJSON_GetObjectItemCaseSensitive(grp, "schema");
            const char *gd = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(grp, "description"));
            cfg *g = cfg_new();
            const json_schema_opts o = {.strict = false, .flexible_ws = false};
            if (!g || json_schema_compile(g, schema, &o, &err) < 0) {
                if (verbose) printf("REFUSED %s / %s: %s\n", argv[f], gd ? gd : "?", err.msg);
                cfg_free(g);
                continue;
            }
            compiled++;
            const cJSON *tests = cJSON_GetObjectItemCaseSensitive(grp, "tests");
            for (const cJSON *t = tests ? tests->child : NULL; t; t = t->next) {
                const cJSON *data = cJSON_GetObjectItemCaseSensitive(t, "data");
                const bool valid = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(t, "valid"));
                char *var[MAX_VARIANTS];
                const int nv = variants(schema, data, var);
                bool acc = false;
                for (int k = 0; k < nv; k++) acc = acc || (var[k] && cfg_accepts(g, var[k]));
                const char *td = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(t, "description"));
                if (valid) {
                    v_all++, v_ok += acc;
                    if (!acc) printf("VALID REFUSED %s / %s / %s: %s\n", argv[f], gd, td, var[1] ? var[1] : "?");
                    bad += !acc;
                } else {
                    i_all++, i_ok += !acc;
                    if (acc) printf("INVALID ACCEPTED %s / %s / %s: %s\n", argv[f], gd, td, var[0] ? var[0] : "?");
                    bad += acc;
                }
                for (int k = 0; k < nv; k++) free(var[k]);
            }
            cfg_free(g);
        }
        printf("%s groups %d compiled %d valid_accepted %d/%d invalid_refused %d/%d\n", argv[f], groups,
               compiled, v_ok, v_all, i_ok, i_all);
        cJSON_Delete(doc);
    }
    return bad ? 1 : 0;
}
