/* tool_parse_py.c — Llama 3.1+'s <|python_tag|> text when it is no JSON: a
 * call of a built-in tool written as Python, name.call(key="value", ...)
 * (brave_search, wolfram_alpha, ...), becomes a call of that name with the
 * keywords as its arguments object; any other text is code for the
 * "python" tool, {"code": text}. */
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "serve/tool_parse_int.h"

static bool ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool ident_char(char c) { return ident_start(c) || (c >= '0' && c <= '9'); }

static size_t skip_ws(const char *s, size_t n, size_t i) {
    while (i < n && tp_isws(s[i])) i++;
    return i;
}

/* A Python literal at s[*i]: a quoted string, a number, True/False/None. */
static cJSON *py_value(const char *s, size_t n, size_t *i) {
    size_t k = *i;
    if (k >= n) return NULL;
    if (s[k] == '"' || s[k] == '\'') {
        char q = s[k++];
        wbuf b = {0};
        while (k < n && s[k] != q) {
            char c = s[k++];
            if (c == '\\' && k < n) {
                c = s[k++];
                c = c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
            }
            wbuf_put(&b, &c, 1);
        }
        if (k >= n || b.oom) {
            wbuf_free(&b);
            return NULL;
        }
        *i = k + 1;
        cJSON *v = cJSON_CreateString(b.data ? b.data : "");
        wbuf_free(&b);
        return v;
    }
    size_t a = k;
    while (k < n && (ident_char(s[k]) || s[k] == '.' || s[k] == '-' || s[k] == '+')) k++;
    if (k == a) return NULL;
    *i = k;
    if (k - a == 4 && memcmp(s + a, "True", 4) == 0) return cJSON_CreateTrue();
    if (k - a == 5 && memcmp(s + a, "False", 5) == 0) return cJSON_CreateFalse();
    if (k - a == 4 && memcmp(s + a, "None", 4) == 0) return cJSON_CreateNull();
    char num[64];
    if (k - a >= sizeof num) return NULL;
    memcpy(num, s + a, k - a);
    num[k - a] = 0;
    char *e;
    double d = strtod(num, &e);
    return *e ? NULL : cJSON_CreateNumber(d);
}

/* name(.call)?(k=v, ...) as the whole text: the name into name (its
 * capacity cap) and the keywords into a new object; NULL if it is not that. */
static cJSON *py_call(const char *s, size_t n, char *name, size_t cap) {
    size_t i = skip_ws(s, n, 0), a = i;
    if (i >= n || !ident_start(s[i])) return NULL;
    while (i < n && ident_char(s[i])) i++;
    if (i - a >= cap) return NULL;
    memcpy(name, s + a, i - a);
    name[i - a] = 0;
    if (n - i >= 5 && memcmp(s + i, ".call", 5) == 0) i += 5;
    if (i >= n || s[i] != '(') return NULL;
    cJSON *o = cJSON_CreateObject();
    if (!o) return NULL;
    i = skip_ws(s, n, i + 1);
    while (i < n && s[i] != ')') {
        size_t ka = i;
        while (i < n && ident_char(s[i])) i++;
        size_t kb = i;
        i = skip_ws(s, n, i);
        if (kb == ka || i >= n || s[i] != '=') goto fail;
        i = skip_ws(s, n, i + 1);
        cJSON *v = py_value(s, n, &i);
        if (!v) goto fail;
        char key[128];
        if (kb - ka >= sizeof key) {
            cJSON_Delete(v);
            goto fail;
        }
        memcpy(key, s + ka, kb - ka);
        key[kb - ka] = 0;
        cJSON_AddItemToObject(o, key, v);
        i = skip_ws(s, n, i);
        if (i < n && s[i] == ',') i = skip_ws(s, n, i + 1);
        else if (i < n && s[i] != ')') goto fail;
    }
    if (i >= n || skip_ws(s, n, i + 1) != n) goto fail;
    return o;
fail:
    cJSON_Delete(o);
    return NULL;
}

void tp_py_call(tool_parser *p, const char *s, size_t n) {
    char name[128];
    cJSON *args = py_call(s, n, name, sizeof name);
    if (!args) {
        args = cJSON_CreateObject();
        wbuf code = {0};
        wbuf_put(&code, s, n);
        if (!args || code.oom || !cJSON_AddStringToObject(args, "code", code.data ? code.data : "")) {
            wbuf_free(&code);
            cJSON_Delete(args);
            if (!p->rc) p->rc = -1;
            return;
        }
        wbuf_free(&code);
        strcpy(name, "python");
    }
    char *text = cJSON_PrintUnformatted(args);
    cJSON_Delete(args);
    if (!text) {
        if (!p->rc) p->rc = -1;
        return;
    }
    tp_call_begin(p, name, NULL);
    tp_call_args(p, text, strlen(text));
    tp_call_end(p);
    free(text);
}
