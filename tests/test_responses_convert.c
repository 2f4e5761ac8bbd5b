/* test_responses_convert.c — the Responses API's translation on its own
 * (serve/responses_convert.c): requests into chat-completions bodies (input
 * items, instructions, tools, tool_choice, text.format, reasoning, limits,
 * the fields wick refuses, a stored conversation put first), a turn's parsed
 * events into output items and the SSE events that stream them (order,
 * sequence numbers, deltas adding up, blank text at the ends of items left
 * out, UTF-8 characters never split), the response object; and the bounded
 * response store (serve/resp_store.c). */
#include <pthread.h>
#include <string.h>

#include "check.h"
#include "serve/resp_store.h"
#include "serve/responses.h"

static const cJSON *get(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static const char *str(const cJSON *o, const char *k) {
    const cJSON *v = get(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}
static const cJSON *at(const cJSON *a, int i) { return cJSON_GetArrayItem(a, i); }

/* Convert a request given as JSON text (prev: a stored conversation's JSON
 * text or NULL): 0 or -1 with e. */
static int conv_text(const char *req, const char *prev, resp_conv *out, fld_error *e) {
    cJSON *b = cJSON_Parse(req), *p = prev ? cJSON_Parse(prev) : NULL;
    CHECK_MSG(b != NULL, "bad test JSON: %s", req);
    memset(e, 0, sizeof *e);
    int rc = resp_convert(b, p, out, e);
    cJSON_Delete(b);
    cJSON_Delete(p);
    return rc;
}

/* The request must be refused with status 400, naming param, the message containing needle. */
static void refused(const char *req, const char *param, const char *needle) {
    resp_conv c;
    fld_error e;
    CHECK_MSG(conv_text(req, NULL, &c, &e) < 0, "accepted: %s", req);
    CHECK_INT(e.status, 400);
    CHECK_STR(e.param, param);
    CHECK_MSG(strstr(e.msg, needle) != NULL, "message \"%s\" lacks \"%s\"", e.msg, needle);
    CHECK(c.chat == NULL && c.items == NULL && c.echo == NULL);
}

static void string_input(void) {
    resp_conv c;
    fld_error e;
    CHECK_INT(conv_text("{\"model\":\"m\",\"input\":\"Hi there\",\"instructions\":\"Be brief.\",\"max_output_tokens\":32,"
                        "\"temperature\":0,\"top_p\":0.5,\"metadata\":{\"k\":\"v\"},\"user\":\"u1\",\"seed\":7}",
                        NULL, &c, &e),
              0);
    const cJSON *m = get(c.chat, "messages");
    CHECK_STR(str(c.chat, "model"), "m");
    CHECK_INT(cJSON_GetArraySize(m), 2);
    CHECK_STR(str(at(m, 0), "role"), "system");
    CHECK_STR(str(at(m, 0), "content"), "Be brief.");
    CHECK_STR(str(at(m, 1), "role"), "user");
    CHECK_STR(str(at(m, 1), "content"), "Hi there");
    CHECK_INT(get(c.chat, "max_tokens")->valueint, 32);
    CHECK(get(c.chat, "temperature")->valuedouble == 0);
    CHECK(get(c.chat, "top_p")->valuedouble == 0.5);
    CHECK_INT(get(c.chat, "seed")->valueint, 7);
    CHECK(!get(c.chat, "stream") && !get(c.chat, "store") && !get(c.chat, "instructions") && !get(c.chat, "metadata"));
    CHECK(!c.stream && c.store);
    /* the items kept: the string as a user message (instructions are not carried on) */
    CHECK_INT(cJSON_GetArraySize(c.items), 1);
    CHECK_STR(str(at(c.items, 0), "role"), "user");
    CHECK_STR(str(at(c.items, 0), "content"), "Hi there");
    /* the echo */
    CHECK_STR(str(c.echo, "instructions"), "Be brief.");
    CHECK_INT(get(c.echo, "max_output_tokens")->valueint, 32);
    CHECK_STR(str(c.echo, "tool_choice"), "auto");
    CHECK_INT(cJSON_GetArraySize(get(c.echo, "tools")), 0);
    CHECK(cJSON_IsTrue(get(c.echo, "parallel_tool_calls")) && cJSON_IsTrue(get(c.echo, "store")));
    CHECK_STR(str(get(get(c.echo, "text"), "format"), "type"), "text");
    CHECK_STR(str(get(c.echo, "metadata"), "k"), "v");
    CHECK_STR(str(c.echo, "user"), "u1");
    CHECK(cJSON_IsNull(get(c.echo, "previous_response_id")));
    resp_conv_free(&c);

    /* null is absent, as every client may send it */
    CHECK_INT(conv_text("{\"input\":\"x\",\"text\":null,\"reasoning\":null,\"tools\":null,\"tool_choice\":null,"
                        "\"metadata\":null,\"instructions\":null,\"include\":null,\"truncation\":null,\"store\":null,"
                        "\"previous_response_id\":null,\"max_output_tokens\":null,\"temperature\":null}",
                        NULL, &c, &e),
              0);
    CHECK_INT(cJSON_GetArraySize(get(c.chat, "messages")), 1);
    CHECK(c.store && !get(c.chat, "temperature") && !get(c.chat, "tools") && !get(c.chat, "tool_choice"));
    resp_conv_free(&c);

    CHECK_INT(conv_text("{\"input\":\"x\",\"stream\":true,\"store\":false}", NULL, &c, &e), 0);
    CHECK(c.stream && !c.store && cJSON_IsTrue(get(c.chat, "stream")) && cJSON_IsFalse(get(c.echo, "store")));
    CHECK(!get(c.chat, "max_tokens") && cJSON_IsNull(get(c.echo, "max_output_tokens")));
    resp_conv_free(&c);
}

/* A whole tool loop's items as the Agents SDK sends them back. */
static void items(void) {
    resp_conv c;
    fld_error e;
    const char *req =
        "{\"input\":["
        "{\"role\":\"developer\",\"content\":\"Use tools.\"},"
        "{\"type\":\"message\",\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":\"Weather?\"},"
        "{\"type\":\"input_text\",\"text\":\"In Paris and Rome.\"}]},"
        "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"summary\":[],\"content\":[{\"type\":\"reasoning_text\",\"text\":\"Two calls.\"}]},"
        "{\"type\":\"message\",\"role\":\"assistant\",\"status\":\"completed\",\"content\":[{\"type\":\"output_text\",\"text\":\"Checking.\",\"annotations\":[]}]},"
        "{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"call_a\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\",\"status\":\"completed\"},"
        "{\"type\":\"function_call\",\"call_id\":\"call_b\",\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Rome\\\"}\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"call_a\",\"output\":\"sunny\"},"
        "{\"type\":\"function_call_output\",\"call_id\":\"call_b\",\"output\":[{\"type\":\"input_text\",\"text\":\"rain\"}]},"
        "{\"type\":\"reasoning\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"S1\"},{\"type\":\"summary_text\",\"text\":\"S2\"}]},"
        "{\"role\":\"assistant\",\"content\":\"Paris sunny, Rome rain.\"},"
        "{\"role\":\"user\",\"content\":\"Thanks\"}"
        "]}";
    CHECK_INT(conv_text(req, NULL, &c, &e), 0);
    const cJSON *m = get(c.chat, "messages");
    CHECK_INT(cJSON_GetArraySize(m), 7);
    CHECK_STR(str(at(m, 0), "role"), "system");
    CHECK_STR(str(at(m, 0), "content"), "Use tools.");
    CHECK_STR(str(at(m, 1), "role"), "user");
    CHECK_STR(str(at(m, 1), "content"), "Weather?\nIn Paris and Rome.");
    /* reasoning, text and both calls: one assistant message */
    const cJSON *a = at(m, 2);
    CHECK_STR(str(a, "role"), "assistant");
    CHECK_STR(str(a, "reasoning_content"), "Two calls.");
    CHECK_STR(str(a, "content"), "Checking.");
    const cJSON *tc = get(a, "tool_calls");
    CHECK_INT(cJSON_GetArraySize(tc), 2);
    CHECK_STR(str(at(tc, 0), "id"), "call_a");
    CHECK_STR(str(at(tc, 0), "type"), "function");
    CHECK_STR(str(get(at(tc, 0), "function"), "name"), "get_weather");
    CHECK_STR(str(get(at(tc, 0), "function"), "arguments"), "{\"city\":\"Paris\"}");
    CHECK_STR(str(get(at(tc, 1), "function"), "arguments"), "{\"city\":\"Rome\"}");
    CHECK_STR(str(at(m, 3), "role"), "tool");
    CHECK_STR(str(at(m, 3), "tool_call_id"), "call_a");
    CHECK_STR(str(at(m, 3), "name"), "get_weather");
    CHECK_STR(str(at(m, 3), "content"), "sunny");
    CHECK_STR(str(at(m, 4), "tool_call_id"), "call_b");
    CHECK_STR(str(at(m, 4), "content"), "rain");
    CHECK_STR(str(at(m, 5), "role"), "assistant");
    CHECK_STR(str(at(m, 5), "reasoning_content"), "S1\n\nS2");
    CHECK_STR(str(at(m, 5), "content"), "Paris sunny, Rome rain.");
    CHECK(!get(at(m, 5), "tool_calls"));
    CHECK_STR(str(at(m, 6), "content"), "Thanks");
    CHECK_INT(cJSON_GetArraySize(c.items), 11);
    resp_conv_free(&c);

    /* calls alone: an assistant message with empty content; a call after text closes nothing,
     * text after a call starts a new assistant message */
    CHECK_INT(conv_text("{\"input\":[{\"role\":\"user\",\"content\":\"q\"},"
                        "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{}\"},"
                        "{\"role\":\"assistant\",\"content\":\"after\"}]}",
                        NULL, &c, &e),
              0);
    m = get(c.chat, "messages");
    CHECK_INT(cJSON_GetArraySize(m), 3);
    CHECK_STR(str(at(m, 1), "content"), "");
    CHECK_INT(cJSON_GetArraySize(get(at(m, 1), "tool_calls")), 1);
    CHECK_STR(str(at(m, 2), "content"), "after");
    resp_conv_free(&c);

    refused("{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":\"x\"}]}]}", "input",
            "input_image");
    refused("{\"input\":[{\"type\":\"web_search_call\",\"id\":\"w\"}]}", "input", "web_search_call");
    refused("{\"input\":[{\"type\":\"item_reference\",\"id\":\"msg_1\"}]}", "input", "item_reference");
    refused("{\"input\":[{\"role\":\"tool\",\"content\":\"x\"}]}", "input", "role \"tool\"");
    refused("{\"input\":[{\"type\":\"function_call\",\"name\":\"f\",\"arguments\":\"{}\"}]}", "input", "call_id");
    refused("{\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"c\"}]}", "input", "output");
    refused("{\"input\":[]}", "input", "required");
    refused("{\"model\":\"m\"}", "input", "required");
    refused("{\"input\":5}", "input", "string or an array");
}

static void previous(void) {
    resp_conv c;
    fld_error e;
    const char *prev = "[{\"type\":\"message\",\"role\":\"user\",\"content\":\"What is 2+2?\"},"
                       "{\"type\":\"message\",\"id\":\"msg_x\",\"role\":\"assistant\",\"status\":\"completed\","
                       "\"content\":[{\"type\":\"output_text\",\"text\":\"4\",\"annotations\":[]}]}]";
    CHECK_INT(conv_text("{\"input\":\"And 3+3?\",\"instructions\":\"Math.\",\"previous_response_id\":\"resp_1\"}", prev,
                        &c, &e),
              0);
    const cJSON *m = get(c.chat, "messages");
    CHECK_INT(cJSON_GetArraySize(m), 4);
    CHECK_STR(str(at(m, 0), "content"), "Math.");
    CHECK_STR(str(at(m, 1), "content"), "What is 2+2?");
    CHECK_STR(str(at(m, 2), "role"), "assistant");
    CHECK_STR(str(at(m, 2), "content"), "4");
    CHECK_STR(str(at(m, 3), "content"), "And 3+3?");
    CHECK_INT(cJSON_GetArraySize(c.items), 3);
    CHECK_STR(str(c.echo, "previous_response_id"), "resp_1");
    resp_conv_free(&c);
    /* no new input is fine after a stored conversation */
    CHECK_INT(conv_text("{\"previous_response_id\":\"resp_1\"}", prev, &c, &e), 0);
    CHECK_INT(cJSON_GetArraySize(get(c.chat, "messages")), 2);
    resp_conv_free(&c);
    cJSON *b = cJSON_Parse("{\"previous_response_id\":7}");
    const char *id;
    CHECK_INT(resp_previous_id(b, &id, &e), -1);
    CHECK_STR(e.param, "previous_response_id");
    cJSON_Delete(b);
}

static void tools(void) {
    resp_conv c;
    fld_error e;
    CHECK_INT(conv_text("{\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"get_weather\",\"description\":\"d\","
                        "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}},\"strict\":true}],"
                        "\"tool_choice\":\"required\",\"parallel_tool_calls\":false}",
                        NULL, &c, &e),
              0);
    const cJSON *t = at(get(c.chat, "tools"), 0);
    CHECK_STR(str(t, "type"), "function");
    CHECK_STR(str(get(t, "function"), "name"), "get_weather");
    CHECK_STR(str(get(t, "function"), "description"), "d");
    CHECK_STR(str(get(get(t, "function"), "parameters"), "type"), "object");
    CHECK(cJSON_IsTrue(get(get(t, "function"), "strict")));
    CHECK_STR(str(c.chat, "tool_choice"), "required");
    CHECK(cJSON_IsFalse(get(c.chat, "parallel_tool_calls")) && cJSON_IsFalse(get(c.echo, "parallel_tool_calls")));
    CHECK_STR(str(at(get(c.echo, "tools"), 0), "name"), "get_weather");
    CHECK_STR(str(c.echo, "tool_choice"), "required");
    resp_conv_free(&c);

    CHECK_INT(conv_text("{\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"}],"
                        "\"tool_choice\":{\"type\":\"function\",\"name\":\"f\"}}",
                        NULL, &c, &e),
              0);
    CHECK_STR(str(get(c.chat, "tool_choice"), "type"), "function");
    CHECK_STR(str(get(get(c.chat, "tool_choice"), "function"), "name"), "f");
    CHECK_STR(str(get(c.echo, "tool_choice"), "name"), "f");
    CHECK(!get(get(at(get(c.chat, "tools"), 0), "function"), "parameters"));
    resp_conv_free(&c);

    CHECK_INT(conv_text("{\"input\":\"x\",\"tools\":[]}", NULL, &c, &e), 0);
    CHECK(!get(c.chat, "tools"));
    resp_conv_free(&c);

    refused("{\"input\":\"x\",\"tools\":[{\"type\":\"web_search\"}]}", "tools", "\"web_search\" tools are not supported");
    refused("{\"input\":\"x\",\"tools\":[{\"type\":\"function\",\"name\":\"f\"},{\"type\":\"file_search\",\"vector_store_ids\":[]}]}",
            "tools", "tools[1]: \"file_search\"");
    refused("{\"input\":\"x\",\"tools\":[{\"type\":\"function\"}]}", "tools", "name");
    refused("{\"input\":\"x\",\"tool_choice\":\"any\"}", "tool_choice", "must be");
    refused("{\"input\":\"x\",\"tool_choice\":{\"type\":\"file_search\"}}", "tool_choice", "\"file_search\"");
    refused("{\"input\":\"x\",\"tool_choice\":{\"type\":\"allowed_tools\",\"mode\":\"auto\",\"tools\":[]}}", "tool_choice",
            "\"allowed_tools\"");
}

static void text_format(void) {
    resp_conv c;
    fld_error e;
    CHECK_INT(conv_text("{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"person\",\"strict\":true,"
                        "\"schema\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}}",
                        NULL, &c, &e),
              0);
    const cJSON *rf = get(c.chat, "response_format");
    CHECK_STR(str(rf, "type"), "json_schema");
    CHECK_STR(str(get(rf, "json_schema"), "name"), "person");
    CHECK(cJSON_IsTrue(get(get(rf, "json_schema"), "strict")));
    CHECK_STR(str(get(get(rf, "json_schema"), "schema"), "type"), "object");
    CHECK_STR(str(get(get(c.echo, "text"), "format"), "name"), "person");
    resp_conv_free(&c);
    CHECK_INT(conv_text("{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_object\"}}}", NULL, &c, &e), 0);
    CHECK_STR(str(get(c.chat, "response_format"), "type"), "json_object");
    resp_conv_free(&c);
    CHECK_INT(conv_text("{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"text\"},\"verbosity\":\"medium\"}}", NULL, &c, &e), 0);
    CHECK(!get(c.chat, "response_format"));
    resp_conv_free(&c);
    refused("{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"grammar\"}}}", "text.format", "\"grammar\"");
    refused("{\"input\":\"x\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"n\"}}}", "text.format", "schema");
    refused("{\"input\":\"x\",\"text\":{\"verbosity\":\"low\"}}", "text.verbosity", "medium");
}

static void reasoning_and_refusals(void) {
    resp_conv c;
    fld_error e;
    CHECK_INT(conv_text("{\"input\":\"x\",\"reasoning\":{\"effort\":\"minimal\",\"summary\":\"auto\"}}", NULL, &c, &e), 0);
    CHECK(cJSON_IsFalse(get(get(c.chat, "chat_template_kwargs"), "enable_thinking")));
    CHECK_STR(str(get(c.echo, "reasoning"), "effort"), "minimal");
    resp_conv_free(&c);
    CHECK_INT(conv_text("{\"input\":\"x\",\"reasoning\":{\"effort\":\"high\"},\"include\":[],\"truncation\":\"disabled\","
                        "\"background\":false,\"service_tier\":\"auto\",\"prompt_cache_key\":\"k\",\"top_logprobs\":0}",
                        NULL, &c, &e),
              0);
    CHECK(!get(c.chat, "chat_template_kwargs"));
    resp_conv_free(&c);
    refused("{\"input\":\"x\",\"reasoning\":{\"effort\":\"huge\"}}", "reasoning.effort", "must be");
    refused("{\"input\":\"x\",\"reasoning\":{\"summary\":\"detailed\"}}", "reasoning.summary", "auto");
    refused("{\"input\":\"x\",\"background\":true}", "background", "background");
    refused("{\"input\":\"x\",\"truncation\":\"auto\"}", "truncation", "disabled");
    refused("{\"input\":\"x\",\"include\":[\"message.output_text.logprobs\"]}", "include", "message.output_text.logprobs");
    refused("{\"input\":\"x\",\"conversation\":\"conv_1\"}", "conversation", "previous_response_id");
    refused("{\"input\":\"x\",\"prompt\":{\"id\":\"p\"}}", "prompt", "template");
    refused("{\"input\":\"x\",\"top_logprobs\":3}", "top_logprobs", "not supported");
    refused("{\"input\":\"x\",\"service_tier\":\"flex\"}", "service_tier", "auto");
    refused("{\"input\":\"x\",\"max_tool_calls\":2}", "max_tool_calls", "not supported");
    refused("{\"input\":\"x\",\"messages\":[]}", "messages", "\"input\"");
    refused("{\"input\":\"x\",\"max_tokens\":5}", "max_tokens", "max_output_tokens");
    refused("{\"input\":\"x\",\"stop\":\"a\"}", "stop", "does not have");
    refused("{\"input\":\"x\",\"max_output_tokens\":0}", "max_output_tokens", "max_output_tokens");
    refused("{\"input\":\"x\",\"stream\":\"yes\"}", "stream", "stream");
    refused("{\"input\":\"x\",\"store\":1}", "store", "store");
    refused("{\"input\":\"x\",\"metadata\":{\"a\":1}}", "metadata", "strings");
    refused("{\"input\":\"x\",\"instructions\":3}", "instructions", "instructions");
    refused("{\"input\":\"x\",\"stream_options\":{}}", "stream_options", "stream");

    fld_error pe = {.status = 400};
    snprintf(pe.param, sizeof pe.param, "max_tokens");
    resp_error_param(&pe);
    CHECK_STR(pe.param, "max_output_tokens");
    snprintf(pe.param, sizeof pe.param, "messages");
    resp_error_param(&pe);
    CHECK_STR(pe.param, "input");
    snprintf(pe.param, sizeof pe.param, "temperature");
    resp_error_param(&pe);
    CHECK_STR(pe.param, "temperature");
}

/* ---- output */

static void ev(resp_out *o, tool_ev_kind k, const char *text) {
    tool_ev e = {.kind = k, .text = text, .len = text ? strlen(text) : 0};
    CHECK_INT(resp_out_event(o, &e), 0);
}
static void call_begin(resp_out *o, int index, const char *id, const char *name) {
    tool_ev e = {.kind = TOOL_EV_CALL_BEGIN, .index = index, .id = id, .name = name};
    CHECK_INT(resp_out_event(o, &e), 0);
}
static void call_ev(resp_out *o, tool_ev_kind k, int index, const char *text) {
    tool_ev e = {.kind = k, .index = index, .text = text, .len = strlen(text)};
    CHECK_INT(resp_out_event(o, &e), 0);
}

/* A whole turn: reasoning, text, a call. */
static void feed_turn(resp_out *o) {
    ev(o, TOOL_EV_REASONING, "\nLet me ");
    ev(o, TOOL_EV_REASONING, "think.\n");
    ev(o, TOOL_EV_CONTENT, "\n\n");
    ev(o, TOOL_EV_CONTENT, "Hello");
    ev(o, TOOL_EV_CONTENT, " world \n");
    ev(o, TOOL_EV_CONTENT, "\n");
    call_begin(o, 0, "call_abc", "get_weather");
    call_ev(o, TOOL_EV_CALL_ARGS, 0, "{\"city\": ");
    call_ev(o, TOOL_EV_CALL_ARGS, 0, "\"Paris\"}");
    call_ev(o, TOOL_EV_CALL_END, 0, "{\"city\": \"Paris\"}");
    ev(o, TOOL_EV_CONTENT, "\n");
    resp_out_end(o, false);
}

static void check_turn_output(const cJSON *out) {
    CHECK_INT(cJSON_GetArraySize(out), 3);
    const cJSON *r = at(out, 0), *m = at(out, 1), *f = at(out, 2);
    CHECK_STR(str(r, "type"), "reasoning");
    CHECK_STR(str(r, "id"), "rs_0123_0");
    CHECK_INT(cJSON_GetArraySize(get(r, "summary")), 0);
    CHECK_STR(str(at(get(r, "content"), 0), "type"), "reasoning_text");
    CHECK_STR(str(at(get(r, "content"), 0), "text"), "Let me think.");
    CHECK_STR(str(m, "type"), "message");
    CHECK_STR(str(m, "id"), "msg_0123_1");
    CHECK_STR(str(m, "role"), "assistant");
    CHECK_STR(str(m, "status"), "completed");
    const cJSON *p = at(get(m, "content"), 0);
    CHECK_STR(str(p, "type"), "output_text");
    CHECK_STR(str(p, "text"), "Hello world");
    CHECK(cJSON_IsArray(get(p, "annotations")) && cJSON_GetArraySize(get(p, "annotations")) == 0);
    CHECK_STR(str(f, "type"), "function_call");
    CHECK_STR(str(f, "id"), "fc_0123_2");
    CHECK_STR(str(f, "call_id"), "call_abc");
    CHECK_STR(str(f, "name"), "get_weather");
    CHECK_STR(str(f, "arguments"), "{\"city\": \"Paris\"}");
    CHECK_STR(str(f, "status"), "completed");
}

static void output_whole(void) {
    resp_out o;
    resp_out_init(&o, "resp_0123", 1700000000, "qwen", NULL);
    feed_turn(&o);
    CHECK(!o.oom);
    check_turn_output(o.output);
    const char *echo_text = "{\"instructions\":null,\"tools\":[],\"store\":true}";
    cJSON *echo = cJSON_Parse(echo_text);
    resp_usage u = {.input = 20, .cached = 4, .output = 9};
    cJSON *r = resp_object(&o, echo, "completed", &u, NULL, NULL);
    CHECK_STR(str(r, "id"), "resp_0123");
    CHECK_STR(str(r, "object"), "response");
    CHECK_INT(get(r, "created_at")->valuedouble, 1700000000);
    CHECK_STR(str(r, "status"), "completed");
    CHECK_STR(str(r, "model"), "qwen");
    CHECK(cJSON_IsNull(get(r, "error")) && cJSON_IsNull(get(r, "incomplete_details")));
    CHECK_STR(str(r, "output_text"), "Hello world");
    check_turn_output(get(r, "output"));
    const cJSON *us = get(r, "usage");
    CHECK_INT(get(us, "input_tokens")->valueint, 20);
    CHECK_INT(get(get(us, "input_tokens_details"), "cached_tokens")->valueint, 4);
    CHECK_INT(get(us, "output_tokens")->valueint, 9);
    CHECK_INT(get(get(us, "output_tokens_details"), "reasoning_tokens")->valueint, 0);
    CHECK_INT(get(us, "total_tokens")->valueint, 29);
    CHECK(cJSON_IsNull(get(r, "instructions")) && cJSON_IsTrue(get(r, "store")) && cJSON_IsArray(get(r, "tools")));
    cJSON_Delete(r);
    r = resp_object(&o, echo, "in_progress", NULL, NULL, NULL);
    CHECK_INT(cJSON_GetArraySize(get(r, "output")), 0);
    CHECK(cJSON_IsNull(get(r, "usage")));
    cJSON_Delete(r);
    r = resp_object(&o, echo, "failed", NULL, "server_error", "boom");
    CHECK_STR(str(get(r, "error"), "code"), "server_error");
    CHECK_STR(str(get(r, "error"), "message"), "boom");
    cJSON_Delete(r);
    cJSON_Delete(echo);
    resp_out_free(&o);

    /* cut short: the open message is incomplete, and so is the response */
    resp_out_init(&o, "resp_0123", 1, "m", NULL);
    ev(&o, TOOL_EV_CONTENT, "Once upon a ");
    resp_out_end(&o, true);
    CHECK_INT(cJSON_GetArraySize(o.output), 1);
    CHECK_STR(str(at(o.output, 0), "status"), "incomplete");
    CHECK_STR(str(at(get(at(o.output, 0), "content"), 0), "text"), "Once upon a");
    r = resp_object(&o, NULL, "incomplete", &u, NULL, NULL);
    CHECK_STR(str(get(r, "incomplete_details"), "reason"), "max_output_tokens");
    cJSON_Delete(r);
    resp_out_free(&o);

    /* nothing but blanks: one empty message */
    resp_out_init(&o, "resp_0123", 1, "m", NULL);
    ev(&o, TOOL_EV_CONTENT, " \n");
    resp_out_end(&o, false);
    CHECK_INT(cJSON_GetArraySize(o.output), 1);
    CHECK_STR(str(at(get(at(o.output, 0), "content"), 0), "text"), "");
    resp_out_free(&o);

    /* calls alone: no message added */
    resp_out_init(&o, "resp_0123", 1, "m", NULL);
    call_begin(&o, 0, "call_1", "a");
    call_ev(&o, TOOL_EV_CALL_END, 0, "{}");
    call_begin(&o, 1, "call_2", "b");
    call_ev(&o, TOOL_EV_CALL_ARGS, 1, "{\"x\":1}");
    call_ev(&o, TOOL_EV_CALL_END, 1, "{\"x\":1}");
    resp_out_end(&o, false);
    CHECK_INT(cJSON_GetArraySize(o.output), 2);
    CHECK_STR(str(at(o.output, 0), "arguments"), "{}");
    CHECK_STR(str(at(o.output, 1), "name"), "b");
    CHECK_STR(str(at(o.output, 1), "call_id"), "call_2");
    resp_out_free(&o);

    /* cut short inside the second call: it is incomplete, the first whole call is not */
    resp_out_init(&o, "resp_0123", 1, "m", NULL);
    call_begin(&o, 0, "call_1", "a");
    call_ev(&o, TOOL_EV_CALL_END, 0, "{\"x\":1}");
    call_begin(&o, 1, "call_2", "a");
    call_ev(&o, TOOL_EV_CALL_ARGS, 1, "{\"x\":");
    call_ev(&o, TOOL_EV_CALL_END, 1, "{\"x\":");
    call_ev(&o, TOOL_EV_CALL_ARGS, 1, "ignored after the end");
    resp_out_end(&o, true);
    CHECK_INT(cJSON_GetArraySize(o.output), 2);
    CHECK_STR(str(at(o.output, 0), "status"), "completed");
    CHECK_STR(str(at(o.output, 1), "status"), "incomplete");
    CHECK_STR(str(at(o.output, 1), "arguments"), "{\"x\":");
    resp_out_free(&o);
    /* a whole call when the turn was cut right after it: complete */
    resp_out_init(&o, "resp_0123", 1, "m", NULL);
    call_begin(&o, 0, "call_1", "a");
    call_ev(&o, TOOL_EV_CALL_END, 0, "{}");
    resp_out_end(&o, true);
    CHECK_STR(str(at(o.output, 0), "status"), "completed");
    resp_out_free(&o);
}

/* SSE text → array of {event, data} (data parsed); NULL when malformed. */
static cJSON *parse_sse(const char *s) {
    cJSON *out = cJSON_CreateArray();
    while (*s) {
        const char *end = strstr(s, "\n\n");
        if (!end || strncmp(s, "event: ", 7) != 0) goto bad;
        const char *nl = strchr(s, '\n');
        if (!nl || strncmp(nl + 1, "data: ", 6) != 0 || nl > end) goto bad;
        char *name = strndup(s + 7, (size_t)(nl - s - 7)), *data = strndup(nl + 7, (size_t)(end - nl - 7));
        cJSON *d = cJSON_Parse(data), *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "event", name);
        free(name);
        free(data);
        if (!d) {
            cJSON_Delete(e);
            goto bad;
        }
        cJSON_AddItemToObject(e, "data", d);
        cJSON_AddItemToArray(out, e);
        s = end + 2;
    }
    return out;
bad:
    cJSON_Delete(out);
    return NULL;
}

static void output_stream(void) {
    wbuf sse = {0};
    resp_out o;
    resp_out_init(&o, "resp_0123", 1700000000, "qwen", &sse);
    cJSON *echo = cJSON_Parse("{\"tools\":[]}");
    resp_sse_response(&o, "response.created", resp_object(&o, echo, "in_progress", NULL, NULL, NULL));
    resp_sse_response(&o, "response.in_progress", resp_object(&o, echo, "in_progress", NULL, NULL, NULL));
    feed_turn(&o);
    resp_usage u = {3, 0, 5};
    resp_sse_response(&o, "response.completed", resp_object(&o, echo, "completed", &u, NULL, NULL));
    cJSON *evs = parse_sse(sse.data);
    CHECK_MSG(evs != NULL, "malformed SSE: %s", sse.data);
    if (!evs) goto out;
    static const char *const want[] = {
        "response.created", "response.in_progress",
        "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
        "response.reasoning_text.delta", "response.reasoning_text.done", "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added", "response.content_part.added", "response.output_text.delta",
        "response.output_text.delta", "response.output_text.done", "response.content_part.done",
        "response.output_item.done",
        "response.output_item.added", "response.function_call_arguments.delta",
        "response.function_call_arguments.delta", "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    };
    const int n = (int)(sizeof want / sizeof want[0]);
    CHECK_INT(cJSON_GetArraySize(evs), n);
    wbuf reasoning = {0}, text = {0}, args = {0};
    for (int i = 0; i < n && i < cJSON_GetArraySize(evs); i++) {
        const cJSON *e = at(evs, i), *d = get(e, "data");
        CHECK_STR(str(e, "event"), want[i]);
        CHECK_STR(str(d, "type"), want[i]);
        CHECK_INT(get(d, "sequence_number")->valueint, i);
        const char *t = want[i];
        if (strstr(t, ".delta")) {
            const char *delta = str(d, "delta");
            wbuf *b = strstr(t, "reasoning") ? &reasoning : strstr(t, "output_text") ? &text : &args;
            wbuf_puts(b, delta ? delta : "");
            CHECK(get(d, "output_index") && str(d, "item_id"));
        }
        if (strcmp(t, "response.output_item.added") == 0) {
            const cJSON *it = get(d, "item");
            CHECK_STR(str(it, "status"), "in_progress");
            if (strcmp(str(it, "type"), "function_call") == 0) {
                CHECK_STR(str(it, "arguments"), "");
                CHECK_STR(str(it, "call_id"), "call_abc");
                CHECK_STR(str(it, "name"), "get_weather");
            } else {
                CHECK_INT(cJSON_GetArraySize(get(it, "content")), 0);
            }
        }
        if (strcmp(t, "response.output_text.done") == 0) {
            CHECK_STR(str(d, "text"), "Hello world");
            CHECK_STR(str(d, "item_id"), "msg_0123_1");
            CHECK_INT(get(d, "output_index")->valueint, 1);
            CHECK_INT(get(d, "content_index")->valueint, 0);
        }
        if (strcmp(t, "response.reasoning_text.done") == 0) CHECK_STR(str(d, "text"), "Let me think.");
        if (strcmp(t, "response.function_call_arguments.done") == 0) {
            CHECK_STR(str(d, "arguments"), "{\"city\": \"Paris\"}");
            CHECK_STR(str(d, "name"), "get_weather");
            CHECK_STR(str(d, "item_id"), "fc_0123_2");
            CHECK_INT(get(d, "output_index")->valueint, 2);
        }
        if (strcmp(t, "response.content_part.added") == 0) CHECK_STR(str(get(d, "part"), "text"), "");
    }
    CHECK_STR(reasoning.data, "Let me think.");
    CHECK_STR(text.data, "Hello world");
    CHECK_STR(args.data, "{\"city\": \"Paris\"}");
    const cJSON *created = get(get(at(evs, 0), "data"), "response");
    CHECK_STR(str(created, "status"), "in_progress");
    CHECK_INT(cJSON_GetArraySize(get(created, "output")), 0);
    const cJSON *done = get(get(at(evs, n - 1), "data"), "response");
    CHECK_STR(str(done, "status"), "completed");
    check_turn_output(get(done, "output"));
    /* an output_item.done's item is the item of the final response */
    cJSON *item_done = cJSON_Duplicate(get(get(at(evs, 15), "data"), "item"), 1);
    CHECK(cJSON_Compare(item_done, at(get(done, "output"), 1), true));
    cJSON_Delete(item_done);
    wbuf_free(&reasoning);
    wbuf_free(&text);
    wbuf_free(&args);
    cJSON_Delete(evs);
out:
    cJSON_Delete(echo);
    resp_out_free(&o);
    wbuf_free(&sse);
}

/* A character split between events is sent whole; deltas are always valid UTF-8. */
static void utf8_split(void) {
    wbuf sse = {0};
    resp_out o;
    resp_out_init(&o, "resp_1", 1, "m", &sse);
    ev(&o, TOOL_EV_CONTENT, "caf\xC3");
    ev(&o, TOOL_EV_CONTENT, "\xA9 \xE2\x82");
    ev(&o, TOOL_EV_CONTENT, "\xAC!");
    resp_out_end(&o, false);
    cJSON *evs = parse_sse(sse.data);
    CHECK(evs != NULL);
    const char *want[] = {"caf", "\xC3\xA9", " \xE2\x82\xAC!"};
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        if (strcmp(str(e, "event"), "response.output_text.delta") != 0) continue;
        if (k < 3) CHECK_STR(str(get(e, "data"), "delta"), want[k]);
        k++;
    }
    CHECK_INT(k, 3);
    CHECK_STR(str(at(get(at(o.output, 0), "content"), 0), "text"), "caf\xC3\xA9 \xE2\x82\xAC!");
    cJSON_Delete(evs);
    resp_out_free(&o);
    wbuf_free(&sse);
}

/* ---- store */

static void store_basic(void) {
    resp_store *st = resp_store_new(3, 1000);
    char *r = NULL, *i = NULL;
    CHECK(!resp_store_get(st, "a", &r, &i) && !r && !i);
    CHECK(resp_store_put(st, "a", "{\"id\":\"a\"}", "[1]"));
    CHECK(resp_store_get(st, "a", &r, &i));
    CHECK_STR(r, "{\"id\":\"a\"}");
    CHECK_STR(i, "[1]");
    free(r);
    free(i);
    CHECK(resp_store_get(st, "a", NULL, &i));
    CHECK_STR(i, "[1]");
    free(i);
    /* the same id again: replaced, not doubled */
    CHECK(resp_store_put(st, "a", "{\"v\":2}", "[2]"));
    size_t n, bytes;
    resp_store_usage(st, &n, &bytes);
    CHECK_INT(n, 1);
    CHECK_INT(bytes, 1 + 7 + 3);
    CHECK(resp_store_get(st, "a", &r, NULL));
    CHECK_STR(r, "{\"v\":2}");
    free(r);
    /* the count bound drops the oldest */
    CHECK(resp_store_put(st, "b", "B", "[]"));
    CHECK(resp_store_put(st, "c", "C", "[]"));
    CHECK(resp_store_put(st, "d", "D", "[]"));
    CHECK(!resp_store_get(st, "a", NULL, NULL));
    CHECK(resp_store_get(st, "b", NULL, NULL) && resp_store_get(st, "d", NULL, NULL));
    /* delete */
    CHECK(resp_store_delete(st, "c"));
    CHECK(!resp_store_delete(st, "c"));
    CHECK(!resp_store_get(st, "c", NULL, NULL));
    resp_store_usage(st, &n, NULL);
    CHECK_INT(n, 2);
    /* the byte bound: a big entry pushes out old ones; one over the bound is refused */
    char big[700];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    CHECK(resp_store_put(st, "e", big, "[]"));
    CHECK(resp_store_put(st, "f", big, "[]"));
    CHECK(!resp_store_get(st, "e", NULL, NULL) && resp_store_get(st, "f", NULL, NULL));
    resp_store_usage(st, &n, &bytes);
    CHECK(bytes <= 1000);
    char huge[1100];
    memset(huge, 'y', sizeof huge - 1);
    huge[sizeof huge - 1] = 0;
    CHECK(!resp_store_put(st, "g", huge, "[]"));
    CHECK(resp_store_get(st, "f", NULL, NULL));
    resp_store_free(st);
    resp_store_free(NULL);
}

typedef struct { resp_store *st; int t; int found; } worker_arg;

static void *worker(void *p) {
    worker_arg *a = p;
    char id[32], body[64];
    for (int k = 0; k < 2000; k++) {
        snprintf(id, sizeof id, "t%d-%d", a->t, k % 50);
        snprintf(body, sizeof body, "{\"t\":%d,\"k\":%d}", a->t, k);
        resp_store_put(a->st, id, body, "[]");
        char *r = NULL;
        if (resp_store_get(a->st, id, &r, NULL)) {
            a->found += strncmp(r, "{\"t\":", 5) == 0;
            free(r);
        }
        if (k % 7 == 0) resp_store_delete(a->st, id);
    }
    return NULL;
}

static void store_threads(void) {
    resp_store *st = resp_store_new(64, 1 << 20);
    pthread_t th[4];
    worker_arg a[4];
    for (int t = 0; t < 4; t++) {
        a[t] = (worker_arg){st, t, 0};
        pthread_create(&th[t], NULL, worker, &a[t]);
    }
    for (int t = 0; t < 4; t++) pthread_join(th[t], NULL);
    size_t n;
    resp_store_usage(st, &n, NULL);
    CHECK(n <= 64);
    for (int t = 0; t < 4; t++) CHECK(a[t].found > 0);
    resp_store_free(st);
}

int main(void) {
    RUN(string_input);
    RUN(items);
    RUN(previous);
    RUN(tools);
    RUN(text_format);
    RUN(reasoning_and_refusals);
    RUN(output_whole);
    RUN(output_stream);
    RUN(utf8_split);
    RUN(store_basic);
    RUN(store_threads);
    return check_summary("test_responses_convert");
}
