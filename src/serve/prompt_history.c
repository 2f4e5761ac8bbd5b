/* prompt_history.c — a conversation's earlier turns put in the shape chat
 * templates expect (as llama.cpp and vLLM do before rendering): content
 * null becomes "", a call's "arguments" given as a JSON string becomes the
 * object it encodes (templates print it with tojson; a string would be
 * encoded twice), Ollama's "thinking" becomes reasoning_content, and every
 * tool result must answer a call of the assistant turn before it. */
#include "serve/prompt.h"

#include <stdio.h>
#include <string.h>

/* The calls of the last assistant turn, for the tool results after it. */
typedef struct calls_seen {
    const cJSON *calls; /* its tool_calls, NULL = no turn with calls yet */
} calls_seen;

static int norm_calls(cJSON *msg, int i, fld_error *e) {
    cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
    if (!calls || cJSON_IsNull(calls)) return 0;
    if (!cJSON_IsArray(calls)) return fld_fail(e, 400, "messages", "messages[%d].tool_calls must be an array", i);
    int k = 0;
    cJSON *call;
    cJSON_ArrayForEach(call, calls) {
        cJSON *fn = cJSON_GetObjectItemCaseSensitive(call, "function");
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(fn, "name");
        if (!cJSON_IsObject(call) || !cJSON_IsObject(fn) || !cJSON_IsString(name))
            return fld_fail(e, 400, "messages", "messages[%d].tool_calls[%d] must be {\"type\": \"function\", \"function\": {\"name\", \"arguments\"}}", i, k);
        cJSON *args = cJSON_GetObjectItemCaseSensitive(fn, "arguments");
        if (cJSON_IsString(args)) {
            cJSON *obj = cJSON_Parse(args->valuestring);
            if (!obj && !*args->valuestring) obj = cJSON_CreateObject();
            if (!obj)
                return fld_fail(e, 400, "messages", "messages[%d].tool_calls[%d].function.arguments is not valid JSON", i, k);
            cJSON_ReplaceItemInObjectCaseSensitive(fn, "arguments", obj);
        } else if (!args || cJSON_IsNull(args)) {
            if (args) cJSON_DeleteItemFromObjectCaseSensitive(fn, "arguments");
            cJSON_AddItemToObject(fn, "arguments", cJSON_CreateObject());
        }
        k++;
    }
    return 0;
}

/* A tool result answers a call of the assistant turn before it: its
 * tool_call_id is one of that turn's ids, or (Ollama) its tool_name one of
 * the names; with neither, any call. */
static int check_result(const cJSON *msg, int i, const calls_seen *seen, fld_error *e) {
    if (!seen->calls || cJSON_GetArraySize(seen->calls) == 0)
        return fld_fail(e, 400, "messages", "messages[%d] is a tool result, but no assistant message before it calls a tool", i);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "tool_call_id");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(msg, "tool_name");
    if (!cJSON_IsString(name)) name = cJSON_GetObjectItemCaseSensitive(msg, "name");
    const cJSON *call;
    if (cJSON_IsString(id)) {
        cJSON_ArrayForEach(call, seen->calls) {
            const cJSON *cid = cJSON_GetObjectItemCaseSensitive(call, "id");
            if (cJSON_IsString(cid) && strcmp(cid->valuestring, id->valuestring) == 0) return 0;
        }
        return fld_fail(e, 400, "messages", "messages[%d].tool_call_id \"%s\" answers no call of the assistant message before it", i, id->valuestring);
    }
    if (cJSON_IsString(name)) {
        cJSON_ArrayForEach(call, seen->calls) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(call, "function"), "name");
            if (cJSON_IsString(n) && strcmp(n->valuestring, name->valuestring) == 0) return 0;
        }
        return fld_fail(e, 400, "messages", "messages[%d] answers the tool \"%s\", which the assistant message before it does not call", i, name->valuestring);
    }
    return 0;
}

int prompt_history_norm(cJSON *msg, int i, prompt_history *h, fld_error *e) {
    const cJSON *role = cJSON_GetObjectItemCaseSensitive(msg, "role");
    cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    if (!content) cJSON_AddStringToObject(msg, "content", "");
    else if (cJSON_IsNull(content)) cJSON_ReplaceItemInObjectCaseSensitive(msg, "content", cJSON_CreateString(""));
    const char *r = role->valuestring;
    if (strcmp(r, "assistant") == 0) {
        if (norm_calls(msg, i, e) < 0) return -1;
        const cJSON *thinking = cJSON_GetObjectItemCaseSensitive(msg, "thinking");
        if (cJSON_IsString(thinking) && !cJSON_GetObjectItemCaseSensitive(msg, "reasoning_content"))
            cJSON_AddStringToObject(msg, "reasoning_content", thinking->valuestring);
        const cJSON *calls = cJSON_GetObjectItemCaseSensitive(msg, "tool_calls");
        h->calls = cJSON_IsArray(calls) ? calls : NULL;
    } else if (strcmp(r, "tool") == 0) {
        const calls_seen seen = {h->calls};
        if (check_result(msg, i, &seen, e) < 0) return -1;
    } else {
        h->calls = NULL;
    }
    return 0;
}
