/* spnl.c — spnl's span-query endpoint, POST /v1/query/execute (body: the
 * query's JSON, sent as text/plain or application/json; ?stream=true|false),
 * as spnl's patched vLLM serves it: the query is translated into a chat
 * request with span messages and answered as /v1/chat/completions answers
 * (a chat.completion object, or SSE chunks when streaming).
 *
 * The query is externally tagged JSON (IBM/spnl crates/spnl-core/src/ir):
 * {"g": {"model", "input", "max_tokens", "temperature"}} generates; spnl's
 * own client wraps it as {"repeat": {"n": 1, "g": {...}}}; {"monad": Q} runs
 * Q for its side effect only (here: the prompt is computed and cached, no
 * token generated). The input is a tree: "cross"/"seq" children in order,
 * a "plus" child's elements become spans (each a message {system|user|
 * assistant: text} or a string, rendered by the chat template on its own),
 * message leaves and strings (user) are ordinary messages. Children before
 * the plus form the prefix P, those after it the question Q. Other nodes
 * (par, zip, augment, print, map, repeat with n > 1, nested g) are 400s.
 * Query parameters anchor, positions and blend_first_k set span_cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/openai.h"

/* The node's tag: the one key of an externally tagged object. */
static const cJSON *tagged(const cJSON *q, const char **tag, fld_error *e) {
    if (!cJSON_IsObject(q) || !q->child || q->child->next)
        return fld_fail(e, 400, "query", "a query node must be an object with exactly one key (its kind)"), NULL;
    *tag = q->child->string;
    return q->child;
}

static bool is_role(const char *tag) {
    return !strcmp(tag, "system") || !strcmp(tag, "user") || !strcmp(tag, "assistant");
}

static int add_message(cJSON *msgs, const char *role, const char *text, bool span, fld_error *e) {
    cJSON *m = cJSON_CreateObject();
    if (!m || !cJSON_AddStringToObject(m, "role", role) || !cJSON_AddStringToObject(m, "content", text) ||
        (span && !cJSON_AddTrueToObject(m, "span"))) {
        cJSON_Delete(m);
        return fld_fail(e, 500, NULL, "out of memory");
    }
    cJSON_AddItemToArray(msgs, m);
    return 0;
}

/* Append the messages of input node q (span: inside a plus). */
static int flatten(const cJSON *q, bool span, int depth, cJSON *msgs, fld_error *e) {
    if (depth > 64) return fld_fail(e, 400, "query", "the query's input is nested too deeply");
    if (cJSON_IsString(q)) return add_message(msgs, "user", q->valuestring, span, e);
    const char *tag;
    const cJSON *v = tagged(q, &tag, e);
    if (!v) return -1;
    if (is_role(tag)) {
        if (!cJSON_IsString(v)) return fld_fail(e, 400, "query", "a \"%s\" message must be a string", tag);
        return add_message(msgs, tag, v->valuestring, span, e);
    }
    if (!strcmp(tag, "cross") || !strcmp(tag, "seq") || !strcmp(tag, "plus")) {
        const bool plus = !strcmp(tag, "plus");
        if (span)
            return fld_fail(e, 400, "query", "\"%s\" inside \"plus\" is not supported: each element of a plus is one message (one span)", tag);
        if (!cJSON_IsArray(v)) return fld_fail(e, 400, "query", "\"%s\" must be an array of queries", tag);
        const cJSON *child;
        cJSON_ArrayForEach(child, v) if (flatten(child, plus, depth + 1, msgs, e) < 0) return -1;
        return 0;
    }
    if (!strcmp(tag, "par") || !strcmp(tag, "zip") || !strcmp(tag, "augment") || !strcmp(tag, "print") ||
        !strcmp(tag, "repeat") || !strcmp(tag, "map") || !strcmp(tag, "monad") || !strcmp(tag, "g"))
        return fld_fail(e, 400, "query", "\"%s\" is not supported in the input of a generate by this server "
                        "(supported: cross, seq, plus, system, user, assistant)", tag);
    return fld_fail(e, 400, "query", "unknown query node \"%.60s\"", tag);
}

/* The generate node under q's wrappers: g, repeat (n = 1) and monad. */
static const cJSON *generate_of(const cJSON *q, bool *warm_only, fld_error *e) {
    for (int depth = 0; depth < 8; depth++) {
        const char *tag;
        const cJSON *v = tagged(q, &tag, e);
        if (!v) return NULL;
        if (!strcmp(tag, "g")) {
            if (!cJSON_IsObject(v)) return fld_fail(e, 400, "query", "\"g\" must be an object"), NULL;
            return v;
        }
        if (!strcmp(tag, "monad")) {
            *warm_only = true;
            q = v;
            continue;
        }
        if (!strcmp(tag, "repeat")) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, "n");
            if (!cJSON_IsObject(v)) return fld_fail(e, 400, "query", "\"repeat\" must be an object {n, g}"), NULL;
            if (n && !cJSON_IsNull(n) && (!cJSON_IsNumber(n) || n->valuedouble != 1))
                return fld_fail(e, 400, "query", "\"repeat\" with n other than 1 is not supported (one output per query)"), NULL;
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(v, "g");
            if (!cJSON_IsObject(g)) return fld_fail(e, 400, "query", "\"repeat\" needs a \"g\" object"), NULL;
            return g;
        }
        return fld_fail(e, 400, "query", "the query must be a generate (\"g\"), \"repeat\" (n = 1) or \"monad\" of one; "
                        "\"%.60s\" is not supported by this server", tag), NULL;
    }
    return fld_fail(e, 400, "query", "the query is nested too deeply"), NULL;
}

/* ?stream= and the span_cache query parameters into the chat body. */
static int query_params(http_call *c, cJSON *body, fld_error *e) {
    const char *st = http_query(c, "stream");
    if (st && strcmp(st, "true") && strcmp(st, "false") && strcmp(st, "1") && strcmp(st, "0") && *st)
        return fld_fail(e, 400, "stream", "the query parameter stream must be true or false");
    cJSON_AddBoolToObject(body, "stream", st && (!strcmp(st, "true") || !strcmp(st, "1")));
    const char *anchor = http_query(c, "anchor"), *pos = http_query(c, "positions"), *k = http_query(c, "blend_first_k");
    if (!anchor && !pos && !k) return 0;
    cJSON *sc = cJSON_AddObjectToObject(body, "span_cache");
    if (!sc) return fld_fail(e, 500, NULL, "out of memory");
    if (anchor) cJSON_AddStringToObject(sc, "anchor", anchor);
    if (pos) cJSON_AddStringToObject(sc, "positions", pos);
    if (k) {
        char *end;
        long v = strtol(k, &end, 10);
        if (!*k || *end || v < 0 || v > 1000000000)
            return fld_fail(e, 400, "blend_first_k", "the query parameter blend_first_k must be an integer of 0 or more");
        cJSON *bl = cJSON_AddObjectToObject(sc, "blend");
        if (bl) cJSON_AddNumberToObject(bl, "first_k", (double)v);
    }
    return 0;
}

/* The chat request body the query stands for. NULL with e. */
static cJSON *translate(http_call *c, const cJSON *query, bool *warm_only, fld_error *e) {
    const cJSON *g = generate_of(query, warm_only, e);
    if (!g) return NULL;
    cJSON *body = cJSON_CreateObject(), *msgs = cJSON_CreateArray();
    if (!body || !msgs) {
        cJSON_Delete(body);
        cJSON_Delete(msgs);
        return fld_fail(e, 500, NULL, "out of memory"), NULL;
    }
    cJSON_AddItemToObject(body, "messages", msgs);
    const cJSON *model = cJSON_GetObjectItemCaseSensitive(g, "model");
    const cJSON *input = cJSON_GetObjectItemCaseSensitive(g, "input");
    const cJSON *max = cJSON_GetObjectItemCaseSensitive(g, "max_tokens");
    const cJSON *temp = cJSON_GetObjectItemCaseSensitive(g, "temperature");
    int rc = 0;
    if (model && !cJSON_IsNull(model) && !cJSON_IsString(model))
        rc = fld_fail(e, 400, "model", "\"g.model\" must be a string");
    else if (!input || cJSON_IsNull(input))
        rc = fld_fail(e, 400, "query", "\"g.input\" is required");
    else if (max && !cJSON_IsNull(max) && (!cJSON_IsNumber(max) || max->valuedouble < 0 || max->valuedouble > 2147483647))
        rc = fld_fail(e, 400, "max_tokens", "\"g.max_tokens\" must be an integer of 0 or more (0 = no limit)");
    else if (temp && !cJSON_IsNull(temp) && !cJSON_IsNumber(temp))
        rc = fld_fail(e, 400, "temperature", "\"g.temperature\" must be a number");
    else
        rc = flatten(input, false, 0, msgs, e);
    if (rc == 0 && cJSON_GetArraySize(msgs) == 0) rc = fld_fail(e, 400, "query", "the query's input holds no message");
    if (rc == 0) rc = query_params(c, body, e);
    if (rc < 0) {
        cJSON_Delete(body);
        return NULL;
    }
    if (cJSON_IsString(model) && *model->valuestring) cJSON_AddStringToObject(body, "model", model->valuestring);
    /* spnl: max_tokens 0 (its default) = no limit; temperature defaults to 0.6 */
    if (cJSON_IsNumber(max) && max->valuedouble >= 1) cJSON_AddNumberToObject(body, "max_tokens", max->valuedouble);
    cJSON_AddNumberToObject(body, "temperature", cJSON_IsNumber(temp) ? temp->valuedouble : 0.6);
    return body;
}

void spnl_execute(serve_server *s, http_call *c, cJSON *query) {
    fld_error e = {0};
    bool warm_only = false;
    cJSON *body = translate(c, query, &warm_only, &e);
    if (!body) {
        reply_openai_error(c, &e);
        return;
    }
    oai_chat_run(s, c, body, warm_only);
    cJSON_Delete(body);
}
