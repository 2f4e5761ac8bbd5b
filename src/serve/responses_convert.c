/* responses_convert.c — the Responses API's translation, with no server in
 * it (see responses.h): a request's input items, instructions, tools,
 * tool_choice, text.format and limits become an OpenAI chat-completions
 * body; a chat turn's parsed events become output items (message,
 * reasoning, function_call) and, streamed, the Responses SSE events; and
 * the response object around them. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve/json_out.h"
#include "serve/responses.h"

/* ---------------------------------------------------------------- request */

static bool present(const cJSON *j) { return j && !cJSON_IsNull(j); }

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static bool str_is(const cJSON *j, const char *s) { return cJSON_IsString(j) && strcmp(j->valuestring, s) == 0; }

/* Fields of the Responses API that wick does not implement: a 400 naming
 * each when its value asks for anything. */
static int unsupported(const cJSON *b, fld_error *e) {
    const cJSON *v;
    if ((v = get(b, "background")) && !cJSON_IsNull(v) && !cJSON_IsFalse(v))
        return fld_fail(e, 400, "background", "\"background\" responses are not supported");
    if (present(get(b, "conversation")))
        return fld_fail(e, 400, "conversation", "\"conversation\" is not supported; chain responses with \"previous_response_id\"");
    if ((v = get(b, "context_management")) && present(v) && !(cJSON_IsArray(v) && !cJSON_GetArraySize(v)))
        return fld_fail(e, 400, "context_management", "\"context_management\" is not supported");
    if (present(get(b, "prompt")))
        return fld_fail(e, 400, "prompt", "\"prompt\" (stored prompt templates) is not supported");
    if (present(get(b, "moderation"))) return fld_fail(e, 400, "moderation", "\"moderation\" is not supported");
    if (present(get(b, "max_tool_calls")))
        return fld_fail(e, 400, "max_tool_calls", "\"max_tool_calls\" is not supported");
    if ((v = get(b, "include")) && present(v)) {
        if (!cJSON_IsArray(v)) return fld_fail(e, 400, "include", "\"include\" must be an array");
        const cJSON *x = cJSON_GetArrayItem(v, 0);
        if (x) return fld_fail(e, 400, "include", "\"include\": %s%s%s is not supported", cJSON_IsString(x) ? "\"" : "",
                               cJSON_IsString(x) ? x->valuestring : "a value", cJSON_IsString(x) ? "\"" : "");
    }
    if ((v = get(b, "top_logprobs")) && present(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0))
        return fld_fail(e, 400, "top_logprobs", "\"top_logprobs\" is not supported");
    if ((v = get(b, "truncation")) && present(v) && !str_is(v, "disabled"))
        return fld_fail(e, 400, "truncation", "\"truncation\" may only be \"disabled\": a conversation longer than the context is refused, not cut");
    if ((v = get(b, "service_tier")) && present(v) && !str_is(v, "auto") && !str_is(v, "default"))
        return fld_fail(e, 400, "service_tier", "\"service_tier\" may be \"auto\" or \"default\"");
    /* the Chat Completions spellings: a client that sends them to this route would lose them */
    static const struct { const char *name, *use; } chat_only[] = {
        {"messages", "input"}, {"max_tokens", "max_output_tokens"}, {"max_completion_tokens", "max_output_tokens"},
        {"response_format", "text.format"}, {"stop", NULL}, {"n", NULL}, {"logprobs", NULL}, {"functions", "tools"},
        {"function_call", "tool_choice"}, {"reasoning_effort", "reasoning.effort"},
    };
    for (size_t i = 0; i < sizeof chat_only / sizeof chat_only[0]; i++) {
        if (!present(get(b, chat_only[i].name))) continue;
        if (chat_only[i].use)
            return fld_fail(e, 400, chat_only[i].name, "\"%s\" is a Chat Completions field; the Responses API calls it \"%s\"",
                            chat_only[i].name, chat_only[i].use);
        return fld_fail(e, 400, chat_only[i].name, "\"%s\" is a Chat Completions field the Responses API does not have",
                        chat_only[i].name);
    }
    return 0;
}

/* The text of a content value: a string, or an array of text parts
 * (input_text, output_text, text; a refusal's text) joined by newlines.
 * NULL + e for anything else (images, files, audio). */
static char *content_text(const cJSON *c, const char *where, int idx, fld_error *e) {
    if (cJSON_IsString(c)) return strdup(c->valuestring);
    if (!cJSON_IsArray(c)) {
        fld_fail(e, 400, "input", "%s[%d].content must be a string or an array of content parts", where, idx);
        return NULL;
    }
    wbuf s = {0};
    int k = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, c) {
        const cJSON *type = get(p, "type"), *text = get(p, "text");
        if (str_is(type, "refusal")) text = get(p, "refusal");
        const bool ok = cJSON_IsString(type) && cJSON_IsString(text) &&
                        (str_is(type, "input_text") || str_is(type, "output_text") || str_is(type, "text") ||
                         str_is(type, "refusal"));
        if (!ok) {
            wbuf_free(&s);
            fld_fail(e, 400, "input", "%s[%d]: content parts of type %s%s%s are not supported (text only)", where, idx,
                     cJSON_IsString(type) ? "\"" : "", cJSON_IsString(type) ? type->valuestring : "(none)",
                     cJSON_IsString(type) ? "\"" : "");
            return NULL;
        }
        if (k++) wbuf_put(&s, "\n", 1);
        wbuf_puts(&s, text->valuestring);
    }
    char *out = wbuf_take(&s, NULL);
    if (!out) fld_fail(e, 500, NULL, "out of memory");
    return out;
}

/* Input items into chat messages. An assistant turn (reasoning, message
 * text, function calls) gathers into one assistant message until something
 * else comes. */
typedef struct conv {
    cJSON *msgs;
    cJSON *pend; /* the assistant message being gathered, or NULL */
    fld_error *e;
} conv;

static void flush(conv *cv) {
    if (!cv->pend) return;
    if (!get(cv->pend, "content")) cJSON_AddStringToObject(cv->pend, "content", "");
    cJSON_AddItemToArray(cv->msgs, cv->pend);
    cv->pend = NULL;
}

static cJSON *assistant(conv *cv) {
    if (!cv->pend) {
        cv->pend = cJSON_CreateObject();
        cJSON_AddStringToObject(cv->pend, "role", "assistant");
    }
    return cv->pend;
}

/* The name of the call call_id among the messages so far (NULL if none). */
static const char *call_name(const conv *cv, const char *call_id) {
    for (const cJSON *m = cv->msgs ? cv->msgs->child : NULL; m; m = m->next) {
        const cJSON *tc;
        cJSON_ArrayForEach(tc, get(m, "tool_calls")) {
            if (str_is(get(tc, "id"), call_id)) {
                const cJSON *n = get(get(tc, "function"), "name");
                return cJSON_IsString(n) ? n->valuestring : NULL;
            }
        }
    }
    return NULL;
}

static int add_message(conv *cv, const cJSON *it, const char *where, int i) {
    fld_error *e = cv->e;
    const cJSON *role = get(it, "role");
    if (!cJSON_IsString(role))
        return fld_fail(e, 400, "input", "%s[%d]: a message needs a string \"role\"", where, i);
    const char *r = role->valuestring;
    const bool asst = strcmp(r, "assistant") == 0;
    if (!asst && strcmp(r, "user") != 0 && strcmp(r, "system") != 0 && strcmp(r, "developer") != 0)
        return fld_fail(e, 400, "input", "%s[%d]: role \"%s\" is not one of user, assistant, system, developer", where,
                        i, r);
    char *text = content_text(get(it, "content"), where, i, e);
    if (!text) return -1;
    if (asst) {
        if (cv->pend && (get(cv->pend, "content") || get(cv->pend, "tool_calls"))) flush(cv);
        cJSON_AddStringToObject(assistant(cv), "content", text);
    } else {
        flush(cv);
        cJSON *m = cJSON_CreateObject();
        /* developer messages are the system's words; chat templates know "system" */
        cJSON_AddStringToObject(m, "role", strcmp(r, "user") == 0 ? "user" : "system");
        cJSON_AddStringToObject(m, "content", text);
        cJSON_AddItemToArray(cv->msgs, m);
    }
    free(text);
    return 0;
}

static int add_call(conv *cv, const cJSON *it, const char *where, int i) {
    const cJSON *id = get(it, "call_id"), *name = get(it, "name"), *args = get(it, "arguments");
    if (!cJSON_IsString(id) || !cJSON_IsString(name))
        return fld_fail(cv->e, 400, "input", "%s[%d]: a function_call needs string \"call_id\" and \"name\"", where, i);
    if (!cJSON_IsString(args) && !cJSON_IsObject(args))
        return fld_fail(cv->e, 400, "input", "%s[%d]: a function_call's \"arguments\" must be a JSON string", where, i);
    cJSON *a = assistant(cv), *calls = cJSON_GetObjectItemCaseSensitive(a, "tool_calls");
    if (!calls) calls = cJSON_AddArrayToObject(a, "tool_calls");
    cJSON *tc = cJSON_CreateObject(), *fn = cJSON_CreateObject();
    cJSON_AddStringToObject(tc, "id", id->valuestring);
    cJSON_AddStringToObject(tc, "type", "function");
    cJSON_AddStringToObject(fn, "name", name->valuestring);
    if (cJSON_IsString(args)) {
        cJSON_AddStringToObject(fn, "arguments", args->valuestring);
    } else {
        char *s = cJSON_PrintUnformatted(args);
        cJSON_AddStringToObject(fn, "arguments", s ? s : "{}");
        free(s);
    }
    cJSON_AddItemToObject(tc, "function", fn);
    cJSON_AddItemToArray(calls, tc);
    return 0;
}

static int add_call_output(conv *cv, const cJSON *it, const char *where, int i) {
    const cJSON *id = get(it, "call_id"), *out = get(it, "output");
    if (!cJSON_IsString(id))
        return fld_fail(cv->e, 400, "input", "%s[%d]: a function_call_output needs a string \"call_id\"", where, i);
    if (!present(out))
        return fld_fail(cv->e, 400, "input", "%s[%d]: a function_call_output needs an \"output\"", where, i);
    char *text = content_text(out, where, i, cv->e);
    if (!text) return -1;
    flush(cv);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "role", "tool");
    cJSON_AddStringToObject(m, "tool_call_id", id->valuestring);
    const char *name = call_name(cv, id->valuestring);
    if (name) cJSON_AddStringToObject(m, "name", name);
    cJSON_AddStringToObject(m, "content", text);
    cJSON_AddItemToArray(cv->msgs, m);
    free(text);
    return 0;
}

/* A reasoning item: its reasoning_text content, else its summary's text. */
static int add_reasoning(conv *cv, const cJSON *it, const char *where, int i) {
    wbuf s = {0};
    const cJSON *p;
    int k = 0;
    cJSON_ArrayForEach(p, get(it, "content")) {
        const cJSON *t = get(p, "text");
        if (!cJSON_IsString(t)) continue;
        if (k++) wbuf_put(&s, "\n", 1);
        wbuf_puts(&s, t->valuestring);
    }
    if (!k) cJSON_ArrayForEach(p, get(it, "summary")) {
        const cJSON *t = get(p, "text");
        if (!cJSON_IsString(t)) continue;
        if (k++) wbuf_put(&s, "\n\n", 2);
        wbuf_puts(&s, t->valuestring);
    }
    if (s.oom) {
        wbuf_free(&s);
        return fld_fail(cv->e, 500, NULL, "out of memory");
    }
    (void)where;
    (void)i;
    if (!k) return 0; /* nothing readable (an encrypted reasoning item from elsewhere) */
    if (cv->pend && (get(cv->pend, "content") || get(cv->pend, "tool_calls"))) flush(cv);
    cJSON *a = assistant(cv);
    const cJSON *old = get(a, "reasoning_content");
    if (cJSON_IsString(old)) {
        wbuf j = {0};
        wbuf_puts(&j, old->valuestring);
        wbuf_puts(&j, "\n");
        wbuf_put(&j, s.data, s.len);
        cJSON_ReplaceItemInObjectCaseSensitive(a, "reasoning_content", cJSON_CreateString(j.data ? j.data : ""));
        wbuf_free(&j);
    } else {
        cJSON_AddStringToObject(a, "reasoning_content", s.data);
    }
    wbuf_free(&s);
    return 0;
}

static int add_item(conv *cv, const cJSON *it, const char *where, int i) {
    if (!cJSON_IsObject(it)) return fld_fail(cv->e, 400, "input", "%s[%d] must be an object", where, i);
    const cJSON *type = get(it, "type");
    if (!present(type) || str_is(type, "message")) return add_message(cv, it, where, i);
    if (!cJSON_IsString(type)) return fld_fail(cv->e, 400, "input", "%s[%d].type must be a string", where, i);
    if (str_is(type, "function_call")) return add_call(cv, it, where, i);
    if (str_is(type, "function_call_output")) return add_call_output(cv, it, where, i);
    if (str_is(type, "reasoning")) return add_reasoning(cv, it, where, i);
    if (str_is(type, "item_reference"))
        return fld_fail(cv->e, 400, "input", "%s[%d]: \"item_reference\" items are not supported; send the item itself or use \"previous_response_id\"", where, i);
    return fld_fail(cv->e, 400, "input", "%s[%d]: items of type \"%s\" are not supported (message, function_call, function_call_output and reasoning are)",
                    where, i, type->valuestring);
}

/* tools: function tools only, into the chat shape; the echo keeps them as given. */
static int convert_tools(const cJSON *b, cJSON *chat, cJSON *echo, fld_error *e) {
    const cJSON *tools = NULL;
    if (fld_array(b, "tools", &tools, e) < 0) return -1;
    cJSON *ct = cJSON_CreateArray(), *et = cJSON_CreateArray();
    cJSON_AddItemToObject(echo, "tools", et);
    int i = 0;
    const cJSON *t;
    cJSON_ArrayForEach(t, tools) {
        const cJSON *type = get(t, "type"), *name = get(t, "name");
        if (!cJSON_IsObject(t) || !cJSON_IsString(type)) {
            cJSON_Delete(ct);
            return fld_fail(e, 400, "tools", "tools[%d] must be an object with a string \"type\"", i);
        }
        if (!str_is(type, "function")) {
            cJSON_Delete(ct);
            return fld_fail(e, 400, "tools", "tools[%d]: \"%s\" tools are not supported; only \"function\" tools are",
                            i, type->valuestring);
        }
        if (!cJSON_IsString(name) || !name->valuestring[0]) {
            cJSON_Delete(ct);
            return fld_fail(e, 400, "tools", "tools[%d]: a function tool needs a string \"name\"", i);
        }
        cJSON *fn = cJSON_CreateObject(), *w = cJSON_CreateObject();
        cJSON_AddStringToObject(fn, "name", name->valuestring);
        static const char *const keys[] = {"description", "parameters", "strict"};
        for (size_t k = 0; k < 3; k++) {
            const cJSON *v = get(t, keys[k]);
            if (present(v)) cJSON_AddItemToObject(fn, keys[k], cJSON_Duplicate(v, 1));
        }
        cJSON_AddStringToObject(w, "type", "function");
        cJSON_AddItemToObject(w, "function", fn);
        cJSON_AddItemToArray(ct, w);
        cJSON_AddItemToArray(et, cJSON_Duplicate(t, 1));
        i++;
    }
    if (i) cJSON_AddItemToObject(chat, "tools", ct);
    else cJSON_Delete(ct);
    return 0;
}

static int convert_tool_choice(const cJSON *b, cJSON *chat, cJSON *echo, fld_error *e) {
    const cJSON *tc = get(b, "tool_choice");
    if (!present(tc)) {
        cJSON_AddStringToObject(echo, "tool_choice", "auto");
        return 0;
    }
    if (cJSON_IsString(tc)) {
        if (!str_is(tc, "auto") && !str_is(tc, "none") && !str_is(tc, "required"))
            return fld_fail(e, 400, "tool_choice", "\"tool_choice\" must be \"auto\", \"none\", \"required\" or {\"type\": \"function\", \"name\": ...}");
        cJSON_AddStringToObject(chat, "tool_choice", tc->valuestring);
    } else if (cJSON_IsObject(tc)) {
        const cJSON *type = get(tc, "type"), *name = get(tc, "name");
        if (!str_is(type, "function"))
            return fld_fail(e, 400, "tool_choice", "\"tool_choice\" of type %s%s%s is not supported (\"auto\", \"none\", \"required\" and {\"type\": \"function\", \"name\": ...} are)",
                            cJSON_IsString(type) ? "\"" : "", cJSON_IsString(type) ? type->valuestring : "(none)",
                            cJSON_IsString(type) ? "\"" : "");
        if (!cJSON_IsString(name)) return fld_fail(e, 400, "tool_choice", "\"tool_choice.name\" must be a string");
        cJSON *o = cJSON_CreateObject(), *fn = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "type", "function");
        cJSON_AddStringToObject(fn, "name", name->valuestring);
        cJSON_AddItemToObject(o, "function", fn);
        cJSON_AddItemToObject(chat, "tool_choice", o);
    } else {
        return fld_fail(e, 400, "tool_choice", "\"tool_choice\" must be a string or an object");
    }
    cJSON_AddItemToObject(echo, "tool_choice", cJSON_Duplicate(tc, 1));
    return 0;
}

/* text: {format: {type: "text" | "json_object" | "json_schema", name, schema,
 * strict, description}, verbosity} */
static int convert_text(const cJSON *b, cJSON *chat, cJSON *echo, fld_error *e) {
    const cJSON *text = NULL, *fmt = NULL;
    if (fld_object(b, "text", &text, e) < 0) return -1;
    if (text && fld_object(text, "format", &fmt, e) < 0) return fld_fail(e, 400, "text.format", "\"text.format\" must be an object");
    const cJSON *verb = text ? get(text, "verbosity") : NULL;
    if (present(verb) && !str_is(verb, "medium"))
        return fld_fail(e, 400, "text.verbosity", "\"text.verbosity\" other than \"medium\" is not supported");
    cJSON *et = cJSON_AddObjectToObject(echo, "text");
    cJSON_AddStringToObject(et, "verbosity", "medium");
    if (!fmt) {
        cJSON *f = cJSON_AddObjectToObject(et, "format");
        cJSON_AddStringToObject(f, "type", "text");
        return 0;
    }
    const cJSON *type = get(fmt, "type");
    if (!cJSON_IsString(type)) return fld_fail(e, 400, "text.format", "\"text.format.type\" must be a string");
    cJSON_AddItemToObject(et, "format", cJSON_Duplicate(fmt, 1));
    if (str_is(type, "text")) return 0;
    cJSON *rf = cJSON_CreateObject();
    cJSON_AddItemToObject(chat, "response_format", rf);
    if (str_is(type, "json_object")) {
        cJSON_AddStringToObject(rf, "type", "json_object");
        return 0;
    }
    if (!str_is(type, "json_schema"))
        return fld_fail(e, 400, "text.format", "\"text.format.type\" \"%s\" is not supported (text, json_object, json_schema are)",
                        type->valuestring);
    const cJSON *schema = get(fmt, "schema"), *name = get(fmt, "name"), *strict = get(fmt, "strict");
    if (!cJSON_IsObject(schema) && !cJSON_IsBool(schema))
        return fld_fail(e, 400, "text.format", "\"text.format\" of type \"json_schema\" needs a \"schema\" object");
    if (present(name) && !cJSON_IsString(name)) return fld_fail(e, 400, "text.format", "\"text.format.name\" must be a string");
    if (present(strict) && !cJSON_IsBool(strict))
        return fld_fail(e, 400, "text.format", "\"text.format.strict\" must be true or false");
    cJSON_AddStringToObject(rf, "type", "json_schema");
    cJSON *js = cJSON_AddObjectToObject(rf, "json_schema");
    cJSON_AddStringToObject(js, "name", cJSON_IsString(name) ? name->valuestring : "response");
    cJSON_AddItemToObject(js, "schema", cJSON_Duplicate(schema, 1));
    if (present(strict)) cJSON_AddBoolToObject(js, "strict", cJSON_IsTrue(strict));
    return 0;
}

/* reasoning: {effort, summary}. Effort "none" / "minimal" turns the
 * template's thinking off; the others leave the model as it is. Summaries
 * are never written (the reasoning itself comes as reasoning_text), so only
 * "auto" may ask for one. */
static int convert_reasoning(const cJSON *b, cJSON *chat, cJSON *echo, fld_error *e) {
    const cJSON *r = NULL;
    if (fld_object(b, "reasoning", &r, e) < 0) return -1;
    cJSON *er = cJSON_AddObjectToObject(echo, "reasoning");
    const cJSON *effort = r ? get(r, "effort") : NULL, *summary = r ? get(r, "summary") : NULL;
    const cJSON *gen = r ? get(r, "generate_summary") : NULL;
    if (present(effort)) {
        static const char *const ok[] = {"none", "minimal", "low", "medium", "high", "xhigh"};
        bool known = false;
        for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) known |= str_is(effort, ok[i]);
        if (!known)
            return fld_fail(e, 400, "reasoning.effort", "\"reasoning.effort\" must be none, minimal, low, medium, high or xhigh");
        if (str_is(effort, "none") || str_is(effort, "minimal")) {
            cJSON *kw = cJSON_AddObjectToObject(chat, "chat_template_kwargs");
            cJSON_AddBoolToObject(kw, "enable_thinking", false);
        }
        cJSON_AddItemToObject(er, "effort", cJSON_Duplicate(effort, 1));
    } else {
        cJSON_AddNullToObject(er, "effort");
    }
    if (present(gen) && !present(summary)) summary = gen;
    if (present(summary) && !str_is(summary, "auto"))
        return fld_fail(e, 400, "reasoning.summary", "reasoning summaries are not written (the reasoning comes whole as reasoning_text); \"reasoning.summary\" may only be \"auto\"");
    if (present(summary)) cJSON_AddItemToObject(er, "summary", cJSON_Duplicate(summary, 1));
    else cJSON_AddNullToObject(er, "summary");
    return 0;
}

int resp_previous_id(const cJSON *body, const char **id, fld_error *e) {
    *id = NULL;
    if (fld_str(body, "previous_response_id", id, e) < 0) return -1;
    if (*id && !**id) *id = NULL;
    return 0;
}

/* Copy a field into the chat body as it is (the chat route checks it). */
static void pass(const cJSON *b, cJSON *chat, const char *key) {
    const cJSON *v = get(b, key);
    if (present(v)) cJSON_AddItemToObject(chat, key, cJSON_Duplicate(v, 1));
}

static void echo_or_null(const cJSON *b, cJSON *echo, const char *key) {
    const cJSON *v = get(b, key);
    if (present(v)) cJSON_AddItemToObject(echo, key, cJSON_Duplicate(v, 1));
    else cJSON_AddNullToObject(echo, key);
}

static int convert_input(const cJSON *b, const cJSON *prev, resp_conv *out, fld_error *e) {
    conv cv = {.msgs = cJSON_AddArrayToObject(out->chat, "messages"), .e = e};
    const char *instr = NULL;
    if (fld_str(b, "instructions", &instr, e) < 0) return -1;
    if (instr && *instr) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "role", "system");
        cJSON_AddStringToObject(m, "content", instr);
        cJSON_AddItemToArray(cv.msgs, m);
    }
    out->items = cJSON_CreateArray();
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, prev) {
        if (add_item(&cv, it, "previous_response_id's items", i++) < 0) goto fail;
        cJSON_AddItemToArray(out->items, cJSON_Duplicate(it, 1));
    }
    const cJSON *in = get(b, "input");
    if (cJSON_IsString(in)) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "type", "message");
        cJSON_AddStringToObject(m, "role", "user");
        cJSON_AddStringToObject(m, "content", in->valuestring);
        cJSON_AddItemToArray(out->items, m);
        if (add_item(&cv, m, "input", 0) < 0) goto fail;
    } else if (cJSON_IsArray(in)) {
        i = 0;
        cJSON_ArrayForEach(it, in) {
            if (add_item(&cv, it, "input", i++) < 0) goto fail;
            cJSON_AddItemToArray(out->items, cJSON_Duplicate(it, 1));
        }
    } else if (present(in)) {
        fld_fail(e, 400, "input", "\"input\" must be a string or an array of input items");
        goto fail;
    }
    flush(&cv);
    if (cJSON_GetArraySize(out->items) == 0) return fld_fail(e, 400, "input", "\"input\" is required");
    return 0;
fail:
    cJSON_Delete(cv.pend);
    return -1;
}

int resp_convert(const cJSON *b, const cJSON *prev, resp_conv *out, fld_error *e) {
    memset(out, 0, sizeof *out);
    out->store = true;
    out->chat = cJSON_CreateObject();
    out->echo = cJSON_CreateObject();
    if (!out->chat || !out->echo) {
        fld_fail(e, 500, NULL, "out of memory");
        goto fail;
    }
    if (unsupported(b, e) < 0) goto fail;
    const char *prev_id;
    if (resp_previous_id(b, &prev_id, e) < 0) goto fail;
    if (fld_bool(b, "stream", &out->stream, e) < 0 || fld_bool(b, "store", &out->store, e) < 0) goto fail;
    const cJSON *so = NULL, *meta = NULL;
    if (fld_object(b, "stream_options", &so, e) < 0) goto fail;
    if (so && !out->stream) {
        fld_fail(e, 400, "stream_options", "\"stream_options\" needs \"stream\": true");
        goto fail;
    }
    if (fld_object(b, "metadata", &meta, e) < 0) goto fail;
    const cJSON *kv;
    cJSON_ArrayForEach(kv, meta) {
        if (!cJSON_IsString(kv)) {
            fld_fail(e, 400, "metadata", "\"metadata\" values must be strings");
            goto fail;
        }
    }
    static const char *const strings[] = {"user", "safety_identifier", "prompt_cache_key", "prompt_cache_retention"};
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++) {
        const char *sv;
        if (fld_str(b, strings[k], &sv, e) < 0) goto fail;
    }
    long long max_out;
    int r = fld_int(b, "max_output_tokens", 1, INT_MAX, &max_out, e);
    if (r < 0) goto fail;

    pass(b, out->chat, "model");
    if (convert_input(b, prev, out, e) < 0) goto fail;
    if (convert_tools(b, out->chat, out->echo, e) < 0 || convert_tool_choice(b, out->chat, out->echo, e) < 0) goto fail;
    bool parallel = true;
    if (fld_bool(b, "parallel_tool_calls", &parallel, e) < 0) goto fail;
    if (present(get(b, "parallel_tool_calls"))) cJSON_AddBoolToObject(out->chat, "parallel_tool_calls", parallel);
    if (convert_text(b, out->chat, out->echo, e) < 0 || convert_reasoning(b, out->chat, out->echo, e) < 0) goto fail;
    if (r) cJSON_AddNumberToObject(out->chat, "max_tokens", (double)max_out);
    pass(b, out->chat, "temperature");
    pass(b, out->chat, "top_p");
    /* wick's (and vLLM's) sampling extensions, as the chat route reads them */
    static const char *const ext[] = {"seed", "top_k", "min_p", "presence_penalty", "frequency_penalty",
                                      "repetition_penalty", "ignore_eos", "cache_salt", "speculative"};
    for (size_t k = 0; k < sizeof ext / sizeof ext[0]; k++) pass(b, out->chat, ext[k]);
    if (out->stream) cJSON_AddBoolToObject(out->chat, "stream", true);

    /* the rest of the echo, in the order OpenAI writes it */
    cJSON *echo = out->echo;
    cJSON_AddBoolToObject(echo, "background", false);
    echo_or_null(b, echo, "instructions");
    echo_or_null(b, echo, "max_output_tokens");
    cJSON_AddBoolToObject(echo, "parallel_tool_calls", parallel);
    echo_or_null(b, echo, "previous_response_id");
    echo_or_null(b, echo, "prompt_cache_key");
    echo_or_null(b, echo, "safety_identifier");
    cJSON_AddStringToObject(echo, "service_tier", "default");
    cJSON_AddBoolToObject(echo, "store", out->store);
    echo_or_null(b, echo, "temperature");
    echo_or_null(b, echo, "top_p");
    cJSON_AddStringToObject(echo, "truncation", "disabled");
    echo_or_null(b, echo, "user");
    if (meta) cJSON_AddItemToObject(echo, "metadata", cJSON_Duplicate(meta, 1));
    else cJSON_AddObjectToObject(echo, "metadata");
    return 0;
fail:
    resp_conv_free(out);
    return -1;
}

void resp_conv_free(resp_conv *c) {
    cJSON_Delete(c->chat);
    cJSON_Delete(c->items);
    cJSON_Delete(c->echo);
    memset(c, 0, sizeof *c);
}

void resp_error_param(fld_error *e) {
    static const struct { const char *chat, *resp; } names[] = {
        {"messages", "input"},           {"max_tokens", "max_output_tokens"}, {"response_format", "text.format"},
        {"chat_template_kwargs", "reasoning"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(e->param, names[i].chat) == 0) snprintf(e->param, sizeof e->param, "%s", names[i].resp);
}

/* ----------------------------------------------------------------- output */

void resp_out_init(resp_out *o, const char *id, long long created_at, const char *model, wbuf *sse) {
    memset(o, 0, sizeof *o);
    snprintf(o->id, sizeof o->id, "%s", id);
    o->created_at = created_at;
    o->model = strdup(model ? model : "");
    o->sse = sse;
    o->output = cJSON_CreateArray();
    if (!o->model || !o->output) o->oom = true;
}

void resp_out_free(resp_out *o) {
    free(o->model);
    cJSON_Delete(o->output);
    wbuf_free(&o->text);
    wbuf_free(&o->pend);
    free(o->call_id);
    free(o->name);
    memset(o, 0, sizeof *o);
}

void resp_sse(resp_out *o, const char *type, cJSON *j) {
    char *body = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!o->sse) {
        free(body);
        return;
    }
    wbuf_printf(o->sse, "event: %s\ndata: {\"type\":\"%s\",\"sequence_number\":%lld", type, type, o->seq++);
    if (body && body[0] == '{' && body[1] != '}') {
        wbuf_puts(o->sse, ",");
        wbuf_puts(o->sse, body + 1);
    } else {
        wbuf_puts(o->sse, "}");
    }
    wbuf_puts(o->sse, "\n\n");
    if (!body) o->oom = true;
    free(body);
}

void resp_sse_response(resp_out *o, const char *type, cJSON *obj) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddItemToObject(j, "response", obj);
    resp_sse(o, type, j);
}

static const char *const ITEM_PREFIX[] = {"", "msg_", "rs_", "fc_"};

/* "output_index" and "item_id" (+ "content_index") of the open item. */
static cJSON *ev_head(const resp_out *o, bool content_index) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "item_id", o->item_id);
    cJSON_AddNumberToObject(j, "output_index", cJSON_GetArraySize(o->output));
    if (content_index) cJSON_AddNumberToObject(j, "content_index", 0);
    return j;
}

/* The open item as it is now (text: what was sent so far). */
static cJSON *item_json(const resp_out *o, const char *status) {
    cJSON *it = cJSON_CreateObject();
    cJSON_AddStringToObject(it, "id", o->item_id);
    const char *text = o->text.data ? o->text.data : "";
    switch (o->open) {
    case RESP_ITEM_MESSAGE: {
        cJSON_AddStringToObject(it, "type", "message");
        cJSON_AddStringToObject(it, "status", status);
        cJSON_AddStringToObject(it, "role", "assistant");
        cJSON *content = cJSON_AddArrayToObject(it, "content");
        if (strcmp(status, "in_progress") != 0) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "type", "output_text");
            cJSON_AddStringToObject(p, "text", text);
            cJSON_AddArrayToObject(p, "annotations");
            cJSON_AddArrayToObject(p, "logprobs");
            cJSON_AddItemToArray(content, p);
        }
        break;
    }
    case RESP_ITEM_REASONING: {
        cJSON_AddStringToObject(it, "type", "reasoning");
        cJSON_AddArrayToObject(it, "summary");
        cJSON *content = cJSON_AddArrayToObject(it, "content");
        if (strcmp(status, "in_progress") != 0) {
            cJSON *p = cJSON_CreateObject();
            cJSON_AddStringToObject(p, "type", "reasoning_text");
            cJSON_AddStringToObject(p, "text", text);
            cJSON_AddItemToArray(content, p);
        }
        cJSON_AddStringToObject(it, "status", status);
        break;
    }
    case RESP_ITEM_CALL:
        cJSON_AddStringToObject(it, "type", "function_call");
        cJSON_AddStringToObject(it, "status", status);
        cJSON_AddStringToObject(it, "arguments", text);
        cJSON_AddStringToObject(it, "call_id", o->call_id ? o->call_id : "");
        cJSON_AddStringToObject(it, "name", o->name ? o->name : "");
        break;
    case RESP_ITEM_NONE: break;
    }
    return it;
}

static cJSON *part_json(const resp_out *o) {
    cJSON *p = cJSON_CreateObject();
    const char *text = o->text.data ? o->text.data : "";
    if (o->open == RESP_ITEM_MESSAGE) {
        cJSON_AddStringToObject(p, "type", "output_text");
        cJSON_AddStringToObject(p, "text", text);
        cJSON_AddArrayToObject(p, "annotations");
        cJSON_AddArrayToObject(p, "logprobs");
    } else {
        cJSON_AddStringToObject(p, "type", "reasoning_text");
        cJSON_AddStringToObject(p, "text", text);
    }
    return p;
}

static void open_item(resp_out *o, resp_item_kind k) {
    o->open = k;
    snprintf(o->item_id, sizeof o->item_id, "%s%s_%d", ITEM_PREFIX[k], o->id + (strncmp(o->id, "resp_", 5) ? 0 : 5),
             o->n_ids++);
    wbuf_reset(&o->text);
    wbuf_reset(&o->pend);
    if (k == RESP_ITEM_MESSAGE) o->any_message = true;
    if (k == RESP_ITEM_CALL) o->any_call = true;
    if (!o->sse) return;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "output_index", cJSON_GetArraySize(o->output));
    cJSON_AddItemToObject(j, "item", item_json(o, "in_progress"));
    resp_sse(o, "response.output_item.added", j);
    if (k == RESP_ITEM_CALL) return;
    j = ev_head(o, true);
    cJSON_AddItemToObject(j, "part", part_json(o));
    resp_sse(o, "response.content_part.added", j);
}

/* Send n bytes of the open item's text (a delta event when streamed). */
static void send_text(resp_out *o, const char *s, size_t n) {
    if (!n) return;
    if (!wbuf_put(&o->text, s, n)) o->oom = true;
    if (!o->sse) return;
    const char *type = o->open == RESP_ITEM_MESSAGE ? "response.output_text.delta"
                       : o->open == RESP_ITEM_REASONING ? "response.reasoning_text.delta"
                                                         : "response.function_call_arguments.delta";
    wbuf *b = o->sse;
    wbuf_printf(b, "event: %s\ndata: {\"type\":\"%s\",\"sequence_number\":%lld,\"item_id\":\"%s\",\"output_index\":%d,",
                type, type, o->seq++, o->item_id, cJSON_GetArraySize(o->output));
    if (o->open != RESP_ITEM_CALL) wbuf_puts(b, "\"content_index\":0,");
    wbuf_puts(b, "\"delta\":");
    json_put_str(b, s, n);
    if (o->open == RESP_ITEM_MESSAGE) wbuf_puts(b, ",\"logprobs\":[]");
    wbuf_puts(b, "}\n\n");
}

static bool blank(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

/* Send what of pend can go: all but trailing blanks and a character's
 * unfinished first bytes (at the end: all but trailing blanks). */
static void send_pend(resp_out *o, bool end) {
    wbuf *p = &o->pend;
    size_t n = p->len;
    if (!end) {
        size_t ok = utf8_valid_len(p->data, n);
        if (n - ok < 4) n = ok; /* an unfinished character waits; bytes that can never be one go now */
    }
    while (n > 0 && blank(p->data[n - 1])) n--;
    if (!n) return;
    send_text(o, p->data, n);
    memmove(p->data, p->data + n, p->len - n);
    p->len -= n;
    p->data[p->len] = 0;
}

static void close_item(resp_out *o, bool incomplete) {
    if (o->open == RESP_ITEM_NONE) return;
    if (o->open == RESP_ITEM_CALL && incomplete) { /* a call the cut left whole is complete */
        cJSON *args = cJSON_ParseWithLength(o->text.data ? o->text.data : "", o->text.len);
        incomplete = !cJSON_IsObject(args);
        cJSON_Delete(args);
    }
    const char *status = incomplete ? "incomplete" : "completed";
    if (o->open != RESP_ITEM_CALL) send_pend(o, true);
    if (o->sse) {
        const char *text = o->text.data ? o->text.data : "";
        cJSON *j;
        if (o->open == RESP_ITEM_CALL) {
            j = ev_head(o, false);
            cJSON_AddStringToObject(j, "name", o->name ? o->name : "");
            cJSON_AddStringToObject(j, "arguments", text);
            resp_sse(o, "response.function_call_arguments.done", j);
        } else {
            const bool msg = o->open == RESP_ITEM_MESSAGE;
            j = ev_head(o, true);
            cJSON_AddStringToObject(j, "text", text);
            if (msg) cJSON_AddArrayToObject(j, "logprobs");
            resp_sse(o, msg ? "response.output_text.done" : "response.reasoning_text.done", j);
            j = ev_head(o, true);
            cJSON_AddItemToObject(j, "part", part_json(o));
            resp_sse(o, "response.content_part.done", j);
        }
        j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "output_index", cJSON_GetArraySize(o->output));
        cJSON_AddItemToObject(j, "item", item_json(o, status));
        resp_sse(o, "response.output_item.done", j);
    }
    cJSON_AddItemToArray(o->output, item_json(o, status));
    o->open = RESP_ITEM_NONE;
    o->call_ended = false;
    wbuf_reset(&o->text);
    wbuf_reset(&o->pend);
}

/* Text for a message or reasoning item. */
static void add_text(resp_out *o, resp_item_kind k, const char *s, size_t n) {
    if (o->open != k) {
        while (n > 0 && blank(*s)) s++, n--;
        if (!n) return; /* blank text between items belongs to none */
        close_item(o, false);
        open_item(o, k);
    }
    if (!wbuf_put(&o->pend, s, n)) o->oom = true;
    send_pend(o, false);
}

int resp_out_event(void *user, const tool_ev *ev) {
    resp_out *o = user;
    switch (ev->kind) {
    case TOOL_EV_CONTENT: add_text(o, RESP_ITEM_MESSAGE, ev->text, ev->len); break;
    case TOOL_EV_REASONING: add_text(o, RESP_ITEM_REASONING, ev->text, ev->len); break;
    case TOOL_EV_CALL_BEGIN:
        close_item(o, false);
        free(o->call_id);
        free(o->name);
        o->call_id = strdup(ev->id ? ev->id : "");
        o->name = strdup(ev->name ? ev->name : "");
        if (!o->call_id || !o->name) o->oom = true;
        open_item(o, RESP_ITEM_CALL);
        break;
    case TOOL_EV_CALL_ARGS:
        if (o->open == RESP_ITEM_CALL && !o->call_ended) send_text(o, ev->text, ev->len);
        break;
    case TOOL_EV_CALL_END:
        if (o->open != RESP_ITEM_CALL || o->call_ended) break;
        /* the whole arguments are what the call says, whatever the deltas added up to; the item
         * closes with what comes next, or at the end (incomplete if the turn was cut inside it) */
        wbuf_reset(&o->text);
        if (!wbuf_put(&o->text, ev->text ? ev->text : "", ev->text ? ev->len : 0)) o->oom = true;
        o->call_ended = true;
        break;
    }
    return 0;
}

void resp_out_end(resp_out *o, bool incomplete) {
    close_item(o, incomplete);
    if (o->any_message || o->any_call) return;
    open_item(o, RESP_ITEM_MESSAGE);
    close_item(o, incomplete);
}

/* output_text: the messages' text, joined */
static void add_output_text(cJSON *r, const cJSON *output) {
    wbuf s = {0};
    const cJSON *it, *p;
    cJSON_ArrayForEach(it, output) {
        if (!str_is(get(it, "type"), "message")) continue;
        cJSON_ArrayForEach(p, get(it, "content")) {
            const cJSON *t = get(p, "text");
            if (str_is(get(p, "type"), "output_text") && cJSON_IsString(t)) wbuf_puts(&s, t->valuestring);
        }
    }
    cJSON_AddStringToObject(r, "output_text", s.data ? s.data : "");
    wbuf_free(&s);
}

cJSON *resp_object(const resp_out *o, const cJSON *echo, const char *status, const resp_usage *u,
                   const char *error_code, const char *error_msg) {
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "id", o->id);
    cJSON_AddStringToObject(r, "object", "response");
    cJSON_AddNumberToObject(r, "created_at", (double)o->created_at);
    cJSON_AddStringToObject(r, "status", status);
    const bool done = strcmp(status, "in_progress") != 0;
    if (done) cJSON_AddNumberToObject(r, "completed_at", (double)time(NULL));
    else cJSON_AddNullToObject(r, "completed_at");
    if (strcmp(status, "failed") == 0) {
        cJSON *err = cJSON_AddObjectToObject(r, "error");
        cJSON_AddStringToObject(err, "code", error_code ? error_code : "server_error");
        cJSON_AddStringToObject(err, "message", error_msg ? error_msg : "");
    } else {
        cJSON_AddNullToObject(r, "error");
    }
    if (strcmp(status, "incomplete") == 0) {
        cJSON *d = cJSON_AddObjectToObject(r, "incomplete_details");
        cJSON_AddStringToObject(d, "reason", "max_output_tokens");
    } else {
        cJSON_AddNullToObject(r, "incomplete_details");
    }
    cJSON_AddStringToObject(r, "model", o->model ? o->model : "");
    if (done) cJSON_AddItemToObject(r, "output", cJSON_Duplicate(o->output, 1));
    else cJSON_AddArrayToObject(r, "output");
    if (done) add_output_text(r, o->output);
    if (u && done) {
        cJSON *us = cJSON_AddObjectToObject(r, "usage");
        cJSON_AddNumberToObject(us, "input_tokens", u->input);
        cJSON *d = cJSON_AddObjectToObject(us, "input_tokens_details");
        cJSON_AddNumberToObject(d, "cached_tokens", u->cached);
        cJSON_AddNumberToObject(us, "output_tokens", u->output);
        d = cJSON_AddObjectToObject(us, "output_tokens_details");
        cJSON_AddNumberToObject(d, "reasoning_tokens", 0);
        cJSON_AddNumberToObject(us, "total_tokens", u->input + u->output);
    } else {
        cJSON_AddNullToObject(r, "usage");
    }
    const cJSON *kv;
    cJSON_ArrayForEach(kv, echo) cJSON_AddItemToObject(r, kv->string, cJSON_Duplicate(kv, 1));
    return r;
}
