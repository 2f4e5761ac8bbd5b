/* test_serve_input.c — the request-input checks of `wick serve` on their
 * own: strict JSON (serve/json_strict.c: the RFC 8259 grammar, what C
 * strings cannot carry, nesting, the last of duplicate keys winning, also
 * past the hash-set threshold), browser origins and Host names
 * (serve/origin.c), and the fields other engines define that wick does not
 * implement (serve/fields_known.c). */
#include <string.h>

#include "check.h"
#include "serve/fields_known.h"
#include "serve/json_strict.h"
#include "serve/origin.h"

static int strict(const char *s) {
    char why[160];
    size_t at;
    return json_strict_check(s, strlen(s), &at, why, sizeof why);
}

static void json_grammar(void) {
    const char *good[] = {
        "{}", "[]", " {\"a\" : [1, -2, 3.5, 1e9, 1E-9, -0, 0.0, 2e+3]} ", "\"x\"", "true", "null", "-1",
        "{\"a\":\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u00e9 \\uD83D\\uDE00\"}", "[[[[[]]]]]",
        "{\"\xc3\xa9\":\"\xe2\x82\xac\"}",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) CHECK_MSG(strict(good[i]) == 0, "rejected: %s", good[i]);
    const char *bad[] = {
        "", " ", "{", "{\"a\":}", "{\"a\" 1}", "{a:1}", "{'a':1}", "[1,]", "{\"a\":1,}", "[01]", "[1.]", "[.5]",
        "[+1]", "[1e]", "[0x10]", "[NaN]", "[Infinity]", "[tru]", "[nul]", "\"a\nb\"", "\"a\tb\"",
        "\"\\x41\"", "\"\\u12\"", "\"\\u0000\"", "\"\\uD800\"", "\"\\uDC00\"", "\"\\uD800\\u0041\"", "\"abc",
        "{} {}", "{}x", "[1] 2",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) CHECK_MSG(strict(bad[i]) < 0, "accepted: %s", bad[i]);
    /* a NUL byte ends nothing: bytes after it are data after the value */
    const char nul[] = "{\"a\":1}\0GARBAGE";
    char why[160];
    size_t at = 0;
    CHECK(json_strict_check(nul, sizeof nul - 1, &at, why, sizeof why) < 0);
    CHECK_INT(at, 7);
    const char raw_nul[] = "{\"a\":\"x\0y\"}";
    CHECK(json_strict_check(raw_nul, sizeof raw_nul - 1, &at, why, sizeof why) < 0);
    /* nesting: JSON_STRICT_MAX_DEPTH levels pass, one more does not */
    char *deep = malloc(2 * JSON_STRICT_MAX_DEPTH + 4);
    for (int extra = 0; extra <= 1; extra++) {
        int d = JSON_STRICT_MAX_DEPTH + extra;
        memset(deep, '[', (size_t)d);
        memset(deep + d, ']', (size_t)d);
        deep[2 * d] = 0;
        CHECK_INT(strict(deep), extra ? -1 : 0);
    }
    free(deep);
}

/* Parse s (strict), resolve duplicates, and return the value of key k as an int. */
static int last_wins(const char *s, const char *k) {
    CHECK(strict(s) == 0);
    cJSON *j = cJSON_Parse(s);
    json_keep_last(j);
    int n = 0;
    for (const cJSON *it = j ? j->child : NULL; it; it = it->next) n += strcmp(it->string, k) == 0;
    CHECK_MSG(n == 1, "key %s appears %d times after json_keep_last", k, n);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, k);
    int r = cJSON_IsNumber(v) ? v->valueint : -1;
    cJSON_Delete(j);
    return r;
}

static void json_duplicates(void) {
    CHECK_INT(last_wins("{\"a\":1,\"b\":2,\"a\":3}", "a"), 3);
    CHECK_INT(last_wins("{\"a\":1,\"a\":2,\"a\":3,\"b\":4}", "a"), 3);
    /* past the hash-set threshold: 40 keys, each twice, the second value wins */
    char buf[4096];
    size_t o = 0;
    o += (size_t)snprintf(buf + o, sizeof buf - o, "{");
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < 40; i++)
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s\"k%d\":%d", o > 1 ? "," : "", i, round * 100 + i);
    snprintf(buf + o, sizeof buf - o, "}");
    CHECK_INT(last_wins(buf, "k0"), 100);
    CHECK_INT(last_wins(buf, "k39"), 139);
    /* nested objects are resolved too */
    cJSON *j = cJSON_Parse("{\"o\":{\"x\":1,\"x\":2},\"arr\":[{\"y\":1,\"y\":5}]}");
    json_keep_last(j);
    CHECK_INT(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(j, "o"), "x")->valueint, 2);
    CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(j, "o")), 1);
    const cJSON *e = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "arr"), 0);
    CHECK_INT(cJSON_GetObjectItemCaseSensitive(e, "y")->valueint, 5);
    cJSON_Delete(j);
}

static void origins(void) {
    origin_policy p;
    CHECK(origin_policy_init(&p, NULL, "127.0.0.1") == 0);
    const char *yes[] = {"http://localhost", "http://localhost:3000", "https://127.0.0.1:8443", "http://127.9.9.9",
                         "http://[::1]:5173", "http://0.0.0.0:80", "http://app.localhost:1", "app://x", "tauri://localhost",
                         "vscode-webview://abc"};
    const char *no[] = {"null", "http://evil.example", "http://localhost.evil.example", "http://127.0.0.1.evil.example",
                        "http://localhost:80x", "http://localhost:", "ftp://localhost", "http://128.0.0.1",
                        "http://[::2]", "file://"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) CHECK_MSG(origin_allowed(&p, yes[i]), "refused: %s", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) CHECK_MSG(!origin_allowed(&p, no[i]), "allowed: %s", no[i]);
    CHECK(origin_allowed(&p, NULL)); /* not a browser */
    CHECK(origin_host_allowed(&p, "localhost:8080"));
    CHECK(origin_host_allowed(&p, "127.0.0.1"));
    CHECK(origin_host_allowed(&p, "[::1]:8080"));
    CHECK(!origin_host_allowed(&p, "evil.example"));
    CHECK(!origin_host_allowed(&p, "127.0.0.1.evil.example:8080"));
    CHECK(origin_host_allowed(&p, NULL));
    origin_policy_free(&p);

    CHECK(origin_policy_init(&p, " https://app.example.com/ ,*.example.org,http://host:*", "0.0.0.0") == 0);
    CHECK_INT(p.n, 3);
    CHECK(origin_allowed(&p, "https://app.example.com"));
    CHECK(origin_allowed(&p, "HTTPS://APP.EXAMPLE.COM"));
    CHECK(!origin_allowed(&p, "https://app.example.com.evil"));
    CHECK(origin_allowed(&p, "https://a.b.example.org"));
    CHECK(!origin_allowed(&p, "https://example.org.evil"));
    CHECK(origin_allowed(&p, "http://host:8080"));
    CHECK(!origin_allowed(&p, "http://hostile:8080"));
    CHECK(origin_host_allowed(&p, "anything.example")); /* not bound to loopback: Host is not checked */
    /* the web chat opened at a LAN address calls its own server */
    CHECK(origin_same_site(&p, "http://192.168.1.5:8080", "192.168.1.5:8080"));
    CHECK(origin_same_site(&p, "https://[fd00::5]:8080", "[fd00::5]:8080"));
    CHECK(!origin_same_site(&p, "http://192.168.1.5:8080", "192.168.1.5:8081"));
    CHECK(!origin_same_site(&p, "http://rebound.example:8080", "rebound.example:8080")); /* a name: DNS rebinding */
    CHECK(!origin_same_site(&p, "ftp://192.168.1.5:8080", "192.168.1.5:8080"));
    CHECK(!origin_same_site(&p, "http://192.168.1.5:8080", NULL));
    origin_policy_free(&p);

    CHECK(origin_policy_init(&p, "*", "localhost") == 0);
    CHECK(origin_allowed(&p, "https://anywhere.example"));
    CHECK(!origin_host_allowed(&p, "anywhere.example"));
    origin_policy_free(&p);
}

static int unsupported(const char *body, bool chat, bool ollama, char *param) {
    cJSON *j = cJSON_Parse(body);
    fld_error e = {0};
    int rc = ollama ? fld_unsupported_ollama(j, &e) : fld_unsupported_openai(j, chat, &e);
    if (param) strcpy(param, e.param);
    cJSON_Delete(j);
    return rc;
}

static void known_fields(void) {
    char param[64];
    CHECK_INT(unsupported("{\"prompt\":\"x\",\"unknown_to_all\":5,\"use_beam_search\":false,\"length_penalty\":1,"
                          "\"stop_token_ids\":[],\"min_tokens\":0,\"skip_special_tokens\":true,\"typical_p\":1,"
                          "\"id_slot\":-1,\"top_n_sigma\":-1,\"n_cmpl\":1,\"modalities\":[\"text\"],\"store\":false}",
                          false, false, NULL),
              0);
    CHECK_INT(unsupported("{\"min_tokens\":3}", false, false, param), -1);
    CHECK_STR(param, "min_tokens");
    CHECK_INT(unsupported("{\"modalities\":[\"text\",\"audio\"]}", true, false, param), -1);
    CHECK_STR(param, "modalities");
    CHECK_INT(unsupported("{\"t_max_predict_ms\":100}", false, false, param), -1);
    CHECK_STR(param, "t_max_predict_ms");
    CHECK_INT(unsupported("{\"use_beam_search\":\"yes\"}", false, false, param), -1); /* wrong type */
    CHECK_INT(unsupported("{\"add_special_tokens\":true}", true, false, param), -1);
    CHECK_INT(unsupported("{\"add_special_tokens\":true}", false, false, param), 0);
    CHECK_INT(unsupported("{\"add_special_tokens\":false}", false, false, param), -1);
    CHECK_INT(unsupported("{\"options\":{\"num_thread\":4,\"num_gpu\":0,\"mirostat\":0}}", false, true, NULL), 0);
    CHECK_INT(unsupported("{\"options\":{\"tfs_z\":0.9}}", false, true, param), -1);
    CHECK_STR(param, "options.tfs_z");
    CHECK_INT(unsupported("{\"template\":\"\"}", false, true, NULL), 0);
    CHECK_INT(unsupported("{\"template\":\"{{ .Prompt }}\"}", false, true, param), -1);
}

int main(void) {
    RUN(json_grammar);
    RUN(json_duplicates);
    RUN(origins);
    RUN(known_fields);
    return check_summary("serve_input");
}
