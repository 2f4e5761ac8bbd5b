/* chat_tools.c — tools and tool_choice of a chat request (chat_tools.h). */
#include "serve/chat_tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text/tokenizer.h"

static bool name_ok(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 128) return false;
    for (size_t i = 0; i < n; i++) {
        const unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == '"' || c == '\\' || c == 0x7f) return false;
    }
    return true;
}

static const cJSON *fn_of(const cJSON *tool) { return cJSON_GetObjectItemCaseSensitive(tool, "function"); }
static const char *name_of(const cJSON *tool) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(fn_of(tool), "name");
    return cJSON_IsString(n) ? n->valuestring : NULL;
}

static int check_tool(const cJSON *t, int i, fld_error *e) {
    char p[64];
    snprintf(p, sizeof p, "tools[%d]", i);
    if (!cJSON_IsObject(t)) return fld_fail(e, 400, p, "\"%s\" must be an object", p);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(t, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "function") != 0)
        return fld_fail(e, 400, p, "\"%s.type\" must be \"function\" (the only tool type supported)", p);
    const cJSON *f = fn_of(t);
    if (!cJSON_IsObject(f)) return fld_fail(e, 400, p, "\"%s.function\" must be an object", p);
    const char *name = name_of(t);
    if (!name || !name_ok(name))
        return fld_fail(e, 400, p, "\"%s.function.name\" must be a non-empty string of at most 128 printable characters", p);
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(f, "description");
    if (d && !cJSON_IsNull(d) && !cJSON_IsString(d))
        return fld_fail(e, 400, p, "\"%s.function.description\" must be a string", p);
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(f, "parameters");
    if (params && !cJSON_IsNull(params) && !cJSON_IsObject(params))
        return fld_fail(e, 400, p, "\"%s.function.parameters\" must be a JSON Schema object", p);
    const cJSON *ty = cJSON_GetObjectItemCaseSensitive(params, "type");
    if (ty && !(cJSON_IsString(ty) && strcmp(ty->valuestring, "object") == 0))
        return fld_fail(e, 400, p, "\"%s.function.parameters\" must describe an object (\"type\": \"object\")", p);
    const cJSON *strict = cJSON_GetObjectItemCaseSensitive(f, "strict");
    if (strict && !cJSON_IsNull(strict) && !cJSON_IsBool(strict))
        return fld_fail(e, 400, p, "\"%s.function.strict\" must be true or false", p);
    return 0;
}

const cJSON *chat_tools_find(const chat_tools *t, const char *name) {
    const cJSON *it;
    cJSON_ArrayForEach(it, t->tools) {
        const char *n = name_of(it);
        if (n && strcmp(n, name) == 0) return fn_of(it);
    }
    return NULL;
}

int chat_tools_parse(const cJSON *b, chat_tools *t, fld_error *e) {
    memset(t, 0, sizeof *t);
    t->parallel = true;
    const cJSON *tools = NULL;
    if (fld_array(b, "tools", &tools, e) < 0) return -1;
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, tools) {
        if (check_tool(it, i, e) < 0) return -1;
        const cJSON *o;
        int j = 0;
        cJSON_ArrayForEach(o, tools) {
            if (j++ >= i) break;
            if (strcmp(name_of(o), name_of(it)) == 0)
                return fld_fail(e, 400, "tools", "two tools are named \"%s\"", name_of(it));
        }
        i++;
    }
    if (tools && cJSON_GetArraySize(tools) > 0) {
        t->tools = tools;
        t->choice = CHAT_TOOLS_AUTO;
    }
    if (fld_bool(b, "parallel_tool_calls", &t->parallel, e) < 0) return -1;
    const cJSON *tc = cJSON_GetObjectItemCaseSensitive(b, "tool_choice");
    if (!tc || cJSON_IsNull(tc)) return 0;
    if (cJSON_IsString(tc)) {
        const char *v = tc->valuestring;
        if (strcmp(v, "none") == 0) t->choice = CHAT_TOOLS_NONE;
        else if (strcmp(v, "auto") == 0) { /* the default */
        } else if (strcmp(v, "required") == 0) {
            if (!t->tools) return fld_fail(e, 400, "tool_choice", "\"tool_choice\": \"required\" needs \"tools\"");
            t->choice = CHAT_TOOLS_REQUIRED;
        } else {
            return fld_fail(e, 400, "tool_choice", "\"tool_choice\" must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}");
        }
    } else if (cJSON_IsObject(tc)) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(tc, "type");
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(tc, "function");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(f, "name");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "function") != 0 || !cJSON_IsString(n))
            return fld_fail(e, 400, "tool_choice", "\"tool_choice\" as an object must be {\"type\": \"function\", \"function\": {\"name\": ...}}");
        if (!t->tools || !chat_tools_find(t, n->valuestring))
            return fld_fail(e, 400, "tool_choice", "\"tool_choice\" names \"%s\", which is not among \"tools\"", n->valuestring);
        t->choice = CHAT_TOOLS_NAMED;
        t->name = n->valuestring;
    } else {
        return fld_fail(e, 400, "tool_choice", "\"tool_choice\" must be a string or an object");
    }
    if (t->choice == CHAT_TOOLS_NONE) t->tools = NULL;
    t->forced = t->choice == CHAT_TOOLS_REQUIRED || t->choice == CHAT_TOOLS_NAMED;
    return 0;
}

/* {"type":"object","properties":{"name":{"const":N},key:params},"required":[...],"additionalProperties":false} */
static cJSON *call_schema(const cJSON *fn, const char *key) {
    cJSON *o = cJSON_CreateObject(), *props = cJSON_CreateObject(), *nm = cJSON_CreateObject();
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(fn, "parameters");
    cJSON_AddStringToObject(o, "type", "object");
    cJSON_AddStringToObject(nm, "const", name->valuestring);
    cJSON_AddItemToObject(props, "name", nm);
    if (cJSON_IsObject(params)) cJSON_AddItemToObject(props, key, cJSON_Duplicate(params, true));
    else cJSON_AddItemToObject(props, key, cJSON_Parse("{\"type\":\"object\"}"));
    cJSON_AddItemToObject(o, "properties", props);
    cJSON *req = cJSON_AddArrayToObject(o, "required");
    cJSON_AddItemToArray(req, cJSON_CreateString("name"));
    cJSON_AddItemToArray(req, cJSON_CreateString(key));
    cJSON_AddBoolToObject(o, "additionalProperties", false);
    return o;
}

/* Can the grammar write text (is it no special token)? */
static bool writable(const wick_tokenizer *tok, const char *text) {
    const tokenizer *t = (const tokenizer *)tok;
    int32_t *ids = NULL;
    size_t n = 0;
    wick_error err;
    if (!t || wick_tokenizer_encode(tok, text, strlen(text), false, &ids, &n, NULL, &err) < 0) return true;
    bool ok = true;
    for (size_t i = 0; i < n; i++)
        if (tok_is_special(t, ids[i])) ok = false;
    free(ids);
    return ok;
}

/* The one token text encodes to (special or not), or -1. */
static int32_t single_token(const wick_tokenizer *tok, const char *text) {
    int32_t *ids = NULL;
    size_t n = 0;
    wick_error err;
    if (!tok || wick_tokenizer_encode(tok, text, strlen(text), false, &ids, &n, NULL, &err) < 0) return -1;
    const int32_t id = n == 1 ? ids[0] : -1;
    free(ids);
    return id;
}

/* The call grammar of family f into g: many = several calls allowed. The
 * opening tag goes into the grammar where it can write it, else into *lead
 * (the prompt's end, forced calls) and the grammar starts after it. */
static int call_grammar(const chat_tools *t, const tool_format *f, const wick_tokenizer *tok, bool many,
                        fld_grammar *g, char **lead, fld_error *e) {
    const char *key = f->family == TOOL_FAMILY_LLAMA3 ? "parameters" : "arguments";
    cJSON *any = cJSON_CreateArray();
    bool strict = true;
    const cJSON *it;
    cJSON_ArrayForEach(it, t->tools) {
        const cJSON *fn = fn_of(it);
        if (t->choice == CHAT_TOOLS_NAMED && strcmp(name_of(it), t->name) != 0) continue;
        strict = strict && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(fn, "strict"));
        cJSON_AddItemToArray(any, call_schema(fn, key));
    }
    cJSON *call = cJSON_GetArraySize(any) == 1 ? cJSON_DetachItemFromArray(any, 0) : NULL;
    if (call) cJSON_Delete(any);
    else {
        call = cJSON_CreateObject();
        cJSON_AddItemToObject(call, "anyOf", any);
    }
    const char *open = NULL, *close = "", *sep = "";
    bool array = false;
    switch (f->family) {
    case TOOL_FAMILY_HERMES: open = "<tool_call>\n", close = "\n</tool_call>", sep = "\n"; break;
    case TOOL_FAMILY_MISTRAL: open = "[TOOL_CALLS]", array = true; break;
    case TOOL_FAMILY_GRANITE: open = "<|tool_call|>", array = true; break;
    case TOOL_FAMILY_LLAMA3: open = ""; break; /* the JSON form: one call */
    default: open = "", array = many; break;
    }
    cJSON *value = call;
    if (array) {
        value = cJSON_CreateObject();
        cJSON_AddStringToObject(value, "type", "array");
        cJSON_AddItemToObject(value, "items", call);
        cJSON_AddNumberToObject(value, "minItems", 1);
        if (!many) cJSON_AddNumberToObject(value, "maxItems", 1);
    }
    g->text = cJSON_PrintUnformatted(value);
    cJSON_Delete(value);
    if (!g->text) return fld_fail(e, 500, NULL, "out of memory");
    g->spec.kind = WICK_GRAMMAR_JSON_SCHEMA;
    g->spec.text = g->text;
    g->spec.strict = strict;
    g->spec.declared_only = true; /* no argument the function does not declare */
    g->spec.single_space = true;
    g->spec.min_values = 1;
    g->spec.max_values = many && !array && f->family == TOOL_FAMILY_HERMES ? 0 : 1;
    g->spec.suffix = close;
    g->spec.separator = sep;
    snprintf(g->param, sizeof g->param, "tools");
    if (*open && !writable(tok, open)) { /* the prompt (or the trigger) writes the opening tag: one opening */
        if (lead && !(*lead = strdup(open))) return fld_fail(e, 500, NULL, "out of memory");
        g->spec.prefix = "";
        g->spec.max_values = 1;
    } else {
        g->spec.prefix = open;
    }
    return 0;
}

int chat_tools_grammar(const chat_tools *t, const tool_format *f, const wick_tokenizer *tok, fld_grammar *g,
                       char **lead, fld_error *e) {
    *lead = NULL;
    return call_grammar(t, f, tok, t->parallel && t->choice == CHAT_TOOLS_REQUIRED, g, lead, e);
}

int chat_tools_lazy_grammar(const chat_tools *t, const tool_format *f, const wick_tokenizer *tok,
                            const char *chat_template, fld_grammar *g, fld_error *e) {
    if (t->choice != CHAT_TOOLS_AUTO || !t->tools) return 0;
    const char *tag = NULL;
    switch (f->family) {
    case TOOL_FAMILY_HERMES:
        /* Qwen3-Coder's templates ask for <function=...> XML inside the tag:
         * a JSON grammar would change what the model writes */
        if (chat_template && strstr(chat_template, "<function=")) return 0;
        tag = "<tool_call>";
        break;
    case TOOL_FAMILY_MISTRAL: tag = "[TOOL_CALLS]"; break;
    case TOOL_FAMILY_GRANITE: tag = "<|tool_call|>"; break;
    case TOOL_FAMILY_LLAMA3: tag = "<|python_tag|>"; break;
    default: return 0;
    }
    const int32_t trigger = single_token(tok, tag);
    if (trigger < 0) return 0;
    if (call_grammar(t, f, tok, t->parallel, g, NULL, e) < 0) return -1;
    g->triggers[0] = trigger;
    g->n_triggers = 1;
    return 0;
}
