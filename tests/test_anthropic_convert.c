/* test_anthropic_convert.c — the Anthropic Messages translations on their
 * own (serve/anthropic_convert.c): Messages request bodies into the exact
 * OpenAI chat-completions bodies the chat turn runs (system, text, tool_use,
 * tool_result, thinking, prefill, tools, tool_choice, thinking config,
 * output_config, sampling and stop fields), the 400s that name the field,
 * and parsed turn events back into content blocks, whole and as the exact
 * SSE events. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "serve/anthropic.h"

/* The translated body as compact JSON (NULL on error; e filled). */
static char *conv(const char *body, bool count, anth_req_opts *opts, fld_error *e) {
    cJSON *b = cJSON_Parse(body);
    if (!b) return strdup("(bad test JSON)");
    anth_req_opts o;
    memset(e, 0, sizeof *e);
    cJSON *out = anth_to_openai(b, count, opts ? opts : &o, e);
    cJSON_Delete(b);
    if (!out) return NULL;
    char *s = cJSON_PrintUnformatted(out);
    cJSON_Delete(out);
    return s;
}

static void expect_conv(const char *body, bool count, const char *want) {
    fld_error e;
    char *got = conv(body, count, NULL, &e);
    CHECK_MSG(got && strcmp(got, want) == 0, "\n  body %s\n  got  %s\n  want %s\n  (error: %s)", body,
              got ? got : "NULL", want, got ? "" : e.msg);
    free(got);
}

/* The body is refused with 400 naming param; the message contains part. */
static void expect_400(const char *body, bool count, const char *param, const char *part) {
    fld_error e;
    char *got = conv(body, count, NULL, &e);
    CHECK_MSG(!got, "accepted: %s -> %s", body, got ? got : "");
    free(got);
    CHECK_MSG(e.status == 400, "%s: status %d", body, e.status);
    CHECK_MSG(strcmp(e.param, param) == 0, "%s: param \"%s\", want \"%s\" (%s)", body, e.param, param, e.msg);
    CHECK_MSG(strstr(e.msg, part) != NULL, "%s: message \"%s\" lacks \"%s\"", body, e.msg, part);
}

static void basic(void) {
    expect_conv("{\"model\":\"m\",\"max_tokens\":64,\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}", false,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],\"model\":\"m\",\"max_tokens\":64}");
    /* system as a string and as text blocks; sampling, stop and stream */
    expect_conv("{\"model\":\"m\",\"system\":\"Be brief.\",\"max_tokens\":8,\"temperature\":0,\"top_p\":0.5,"
                "\"top_k\":3,\"stop_sequences\":[\"END\",\"###\"],\"stream\":true,\"metadata\":{\"user_id\":\"u\"},"
                "\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"a\"},"
                "{\"type\":\"text\",\"text\":\"b\",\"cache_control\":{\"type\":\"ephemeral\"}}]}]}",
                false,
                "{\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"a\\nb\"}],"
                "\"model\":\"m\",\"max_tokens\":8,\"temperature\":0,\"top_p\":0.5,\"top_k\":3,\"stream\":true,"
                "\"stop\":[\"END\",\"###\"]}");
    expect_conv("{\"max_tokens\":8,\"system\":[{\"type\":\"text\",\"text\":\"one\"},{\"type\":\"text\",\"text\":\"two\"}],"
                "\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}",
                false,
                "{\"messages\":[{\"role\":\"system\",\"content\":\"one\\ntwo\"},{\"role\":\"user\",\"content\":\"q\"}],"
                "\"max_tokens\":8}");
    /* an empty system prompt adds no message */
    expect_conv("{\"max_tokens\":8,\"system\":\"\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}", false,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}],\"max_tokens\":8}");
    anth_req_opts o;
    fld_error e;
    char *s = conv("{\"max_tokens\":8,\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}", false, &o, &e);
    CHECK(s && o.stream && !o.omit_thinking);
    free(s);
    s = conv("{\"max_tokens\":8,\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}", false, &o, &e);
    CHECK(s && !o.stream && !o.prefill_only);
    free(s);
    /* max_tokens 0 warms the cache: no max_tokens in the body, prefill_only */
    s = conv("{\"max_tokens\":0,\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}", false, &o, &e);
    CHECK_STR(s, "{\"messages\":[{\"role\":\"user\",\"content\":\"q\"}]}");
    CHECK(o.prefill_only);
    free(s);
}

static void tool_turns(void) {
    /* assistant: text, thinking, two tool_use blocks; user: two results (one an
     * error, one as text blocks) and a text block after them */
    expect_conv(
        "{\"max_tokens\":100,\"messages\":["
        "{\"role\":\"user\",\"content\":\"Weather in Paris and Rome?\"},"
        "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"Need tools.\",\"signature\":\"\"},"
        "{\"type\":\"text\",\"text\":\"Checking.\"},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\",\"days\":[1,2]}},"
        "{\"type\":\"tool_use\",\"id\":\"toolu_2\",\"name\":\"get_weather\",\"input\":{}}]},"
        "{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"18C\"},"
        "{\"type\":\"tool_result\",\"tool_use_id\":\"toolu_2\",\"is_error\":true,"
        "\"content\":[{\"type\":\"text\",\"text\":\"no city\"},{\"type\":\"text\",\"text\":\"given\"}]},"
        "{\"type\":\"text\",\"text\":\"Go on.\"}]}]}",
        false,
        "{\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris and Rome?\"},"
        "{\"role\":\"assistant\",\"content\":\"Checking.\",\"reasoning_content\":\"Need tools.\",\"tool_calls\":["
        "{\"id\":\"toolu_1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\",\\\"days\\\":[1,2]}\"}},"
        "{\"id\":\"toolu_2\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},"
        "{\"role\":\"tool\",\"tool_call_id\":\"toolu_1\",\"content\":\"18C\"},"
        "{\"role\":\"tool\",\"tool_call_id\":\"toolu_2\",\"content\":\"Error: no city\\ngiven\"},"
        "{\"role\":\"user\",\"content\":\"Go on.\"}],\"max_tokens\":100}");
    /* text before a tool_result: the result first, then the text as the user's message */
    expect_conv("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"Results:\"},"
                "{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"Sunny\"}]}]}",
                false,
                "{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"t\",\"content\":\"Sunny\"},"
                "{\"role\":\"user\",\"content\":\"Results:\"}],\"max_tokens\":5}");
    /* a tool_result with no content; a final assistant message that calls a tool is no prefill */
    expect_conv("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\"}]},"
                "{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"x\",\"name\":\"f\",\"input\":{\"a\":1}}]}]}",
                false,
                "{\"messages\":[{\"role\":\"tool\",\"tool_call_id\":\"t\",\"content\":\"\"},"
                "{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"id\":\"x\",\"type\":\"function\","
                "\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}]}],\"max_tokens\":5}");
    /* prefill: a final assistant text message is continued */
    expect_conv("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":\"Greek for Sun?\"},"
                "{\"role\":\"assistant\",\"content\":\"The answer is (\"}]}",
                false,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"Greek for Sun?\"},{\"role\":\"assistant\",\"content\":"
                "\"The answer is (\"}],\"continue_final_message\":true,\"add_generation_prompt\":false,\"max_tokens\":5}");
}

static void tools_and_choice(void) {
    const char *tools = "\"tools\":[{\"name\":\"get_weather\",\"description\":\"Weather of a city\","
                        "\"input_schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},"
                        "\"required\":[\"city\"]},\"cache_control\":{\"type\":\"ephemeral\"}},"
                        "{\"type\":\"custom\",\"name\":\"noop\",\"input_schema\":{\"type\":\"object\"},\"strict\":true}]";
    const char *fn = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"description\":"
                     "\"Weather of a city\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":"
                     "\"string\"}},\"required\":[\"city\"]}}},{\"type\":\"function\",\"function\":{\"name\":\"noop\","
                     "\"parameters\":{\"type\":\"object\"},\"strict\":true}}]";
    static const struct {
        const char *choice, *want;
    } C[] = {
        {"", ""},
        {",\"tool_choice\":{\"type\":\"auto\"}", ",\"tool_choice\":\"auto\""},
        {",\"tool_choice\":{\"type\":\"any\"}", ",\"tool_choice\":\"required\""},
        {",\"tool_choice\":{\"type\":\"none\"}", ",\"tool_choice\":\"none\""},
        {",\"tool_choice\":{\"type\":\"tool\",\"name\":\"get_weather\"}",
         ",\"tool_choice\":{\"function\":{\"name\":\"get_weather\"},\"type\":\"function\"}"},
        {",\"tool_choice\":{\"type\":\"auto\",\"disable_parallel_tool_use\":true}",
         ",\"tool_choice\":\"auto\",\"parallel_tool_calls\":false"},
        {",\"tool_choice\":{\"type\":\"any\",\"disable_parallel_tool_use\":false}", ",\"tool_choice\":\"required\""},
    };
    for (size_t i = 0; i < sizeof C / sizeof C[0]; i++) {
        char body[2048], want[2048];
        snprintf(body, sizeof body, "{\"max_tokens\":9,\"messages\":[{\"role\":\"user\",\"content\":\"w\"}],%s%s}", tools,
                 C[i].choice);
        snprintf(want, sizeof want, "{\"messages\":[{\"role\":\"user\",\"content\":\"w\"}],%s%s,\"max_tokens\":9}", fn,
                 C[i].want);
        expect_conv(body, false, want);
    }
}

static void thinking_and_format(void) {
    const char *m = "\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"}]";
    char body[512];
    snprintf(body, sizeof body, "{\"max_tokens\":50,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":1024},%s}", m);
    expect_conv(body, false,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"}],\"chat_template_kwargs\":{\"enable_thinking\":true},"
                "\"max_tokens\":50}");
    snprintf(body, sizeof body, "{\"max_tokens\":50,\"thinking\":{\"type\":\"disabled\"},%s}", m);
    expect_conv(body, false,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"}],\"chat_template_kwargs\":{\"enable_thinking\":false},"
                "\"max_tokens\":50}");
    snprintf(body, sizeof body, "{\"max_tokens\":50,\"thinking\":{\"type\":\"adaptive\"},%s}", m);
    expect_conv(body, false, "{\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"}],\"max_tokens\":50}");
    anth_req_opts o;
    fld_error e;
    snprintf(body, sizeof body, "{\"max_tokens\":50,\"thinking\":{\"type\":\"enabled\",\"budget_tokens\":2000,\"display\":\"omitted\"},%s}", m);
    char *s = conv(body, false, &o, &e);
    CHECK(s && o.omit_thinking);
    free(s);
    snprintf(body, sizeof body, "{\"max_tokens\":50,\"output_config\":{\"format\":{\"type\":\"json_schema\",\"schema\":{\"type\":\"object\"}}},%s}", m);
    expect_conv(body, false,
                "{\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"}],\"response_format\":{\"json_schema\":{\"name\":"
                "\"output\",\"strict\":true,\"schema\":{\"type\":\"object\"}},\"type\":\"json_schema\"},\"max_tokens\":50}");
    /* accepted: they ask nothing of the output */
    snprintf(body, sizeof body, "{\"max_tokens\":5,\"service_tier\":\"auto\",\"speed\":\"fast\",\"inference_geo\":\"us\","
             "\"cache_control\":{\"type\":\"ephemeral\"},\"mcp_servers\":[],\"container\":null,%s}", m);
    expect_conv(body, false, "{\"messages\":[{\"role\":\"user\",\"content\":\"2+2?\"}],\"max_tokens\":5}");
}

static void count_tokens_form(void) {
    /* no max_tokens needed; generation fields are not part of the count */
    expect_conv("{\"model\":\"m\",\"system\":\"S\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}],"
                "\"tools\":[{\"name\":\"f\",\"input_schema\":{\"type\":\"object\"}}],\"thinking\":{\"type\":\"disabled\"}}",
                true,
                "{\"messages\":[{\"role\":\"system\",\"content\":\"S\"},{\"role\":\"user\",\"content\":\"Hi\"}],\"model\":\"m\","
                "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}}],"
                "\"chat_template_kwargs\":{\"enable_thinking\":false}}");
}

static void refused(void) {
    const char *m = "\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]";
    char b[1024];
    snprintf(b, sizeof b, "{%s}", m);
    expect_400(b, false, "max_tokens", "required");
    snprintf(b, sizeof b, "{\"max_tokens\":-1,%s}", m);
    expect_400(b, false, "max_tokens", "between 0 and");
    snprintf(b, sizeof b, "{\"max_tokens\":1.5,%s}", m);
    expect_400(b, false, "max_tokens", "integer");
    expect_400("{\"max_tokens\":5}", false, "messages", "required");
    expect_400("{\"max_tokens\":5,\"messages\":[]}", false, "messages", "empty");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"system\",\"content\":\"x\"}]}", false, "messages[0]",
               "\"user\" or \"assistant\"");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\"}]}", false, "messages[0]", "content");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"see\"},"
               "{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"AA==\"}}]}]}",
               false, "messages[0].content[1]", "\"image\" content is not supported");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"document\",\"source\":{}}]}]}", true,
               "messages[0].content[0]", "\"document\" content is not supported");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\","
               "\"content\":[{\"type\":\"image\",\"source\":{}}]}]}]}",
               false, "messages[0].content[0].content[0]", "\"image\" content");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\"}]}]}", false,
               "messages[0].content[0]", "tool_use_id");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\","
               "\"input\":{}}]}]}", false, "messages[0].content[0]", "assistant messages");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"tool_use\",\"id\":\"a\",\"name\":\"f\","
               "\"input\":\"x\"}]}]}", false, "messages[0].content[0]", "\"input\" must be an object");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"assistant\",\"content\":[{\"type\":\"redacted_thinking\",\"data\":\"..\"}]}]}",
               false, "messages[0].content[0]", "redacted_thinking");
    expect_400("{\"max_tokens\":5,\"messages\":[{\"role\":\"user\",\"content\":[{\"text\":\"no type\"}]}]}", false,
               "messages[0].content[0]", "\"type\"");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"tools\":[{\"type\":\"web_search_20250305\",\"name\":\"web_search\"}],%s}", m);
    expect_400(b, false, "tools[0]", "server tool");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"tools\":[{\"name\":\"f\"}],%s}", m);
    expect_400(b, false, "tools[0]", "input_schema");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"tool_choice\":{\"type\":\"tool\"},%s}", m);
    expect_400(b, false, "tool_choice", "\"name\"");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"tool_choice\":{\"type\":\"sometimes\"},%s}", m);
    expect_400(b, false, "tool_choice", "auto, any, tool or none");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"tool_choice\":\"auto\",%s}", m);
    expect_400(b, false, "tool_choice", "object");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"thinking\":{\"type\":\"enabled\"},%s}", m);
    expect_400(b, false, "thinking", "budget_tokens");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"thinking\":{\"type\":\"between_tools\"},%s}", m);
    expect_400(b, false, "thinking", "enabled, disabled or adaptive");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"container\":\"c1\",%s}", m);
    expect_400(b, false, "container", "not supported");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"mcp_servers\":[{\"type\":\"url\",\"url\":\"http://x\",\"name\":\"x\"}],%s}", m);
    expect_400(b, false, "mcp_servers", "not supported");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"output_config\":{\"effort\":\"high\"},%s}", m);
    expect_400(b, false, "output_config.effort", "not supported");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"output_config\":{\"format\":{\"type\":\"text\"}},%s}", m);
    expect_400(b, false, "output_config.format", "json_schema");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"stop_sequences\":\"END\",%s}", m);
    expect_400(b, false, "stop_sequences", "array of strings");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"temperature\":\"hot\",%s}", m);
    expect_400(b, false, "temperature", "number");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"stream\":1,%s}", m);
    expect_400(b, false, "stream", "true or false");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"system\":[{\"type\":\"image\"}],%s}", m);
    expect_400(b, false, "system[0]", "\"image\" content");
    snprintf(b, sizeof b, "{\"max_tokens\":5,\"model\":7,%s}", m);
    expect_400(b, false, "model", "string");

    fld_error e = {0};
    snprintf(e.param, sizeof e.param, "stop");
    anth_rename_param(&e);
    CHECK_STR(e.param, "stop_sequences");
    snprintf(e.param, sizeof e.param, "messages");
    anth_rename_param(&e);
    CHECK_STR(e.param, "messages");
}

/* Feed events to a block builder. */
static void ev_text(anth_blocks *b, tool_ev_kind k, const char *s) {
    tool_ev ev = {.kind = k, .text = s, .len = strlen(s)};
    anth_blocks_on_ev(b, &ev);
}
static void ev_call(anth_blocks *b, int index, const char *id, const char *name, const char *const *args, const char *whole) {
    tool_ev ev = {.kind = TOOL_EV_CALL_BEGIN, .index = index, .id = id, .name = name};
    anth_blocks_on_ev(b, &ev);
    for (int i = 0; args && args[i]; i++) {
        tool_ev a = {.kind = TOOL_EV_CALL_ARGS, .index = index, .text = args[i], .len = strlen(args[i])};
        anth_blocks_on_ev(b, &a);
    }
    tool_ev end = {.kind = TOOL_EV_CALL_END, .index = index, .text = whole, .len = strlen(whole)};
    anth_blocks_on_ev(b, &end);
}

/* The turn of the scripted tests: thinking, text (after whitespace), two
 * calls with whitespace between them (the second sends no argument deltas). */
static void feed_turn(anth_blocks *b) {
    ev_text(b, TOOL_EV_REASONING, "\n");
    ev_text(b, TOOL_EV_REASONING, "Let me think.");
    ev_text(b, TOOL_EV_REASONING, "\n");
    ev_text(b, TOOL_EV_CONTENT, "\n\n");
    ev_text(b, TOOL_EV_CONTENT, "The answer");
    ev_text(b, TOOL_EV_CONTENT, " is \"4\".");
    ev_text(b, TOOL_EV_CONTENT, "\n");
    const char *args[] = {"{\"city\": ", "\"Paris\"}", NULL};
    ev_call(b, 0, "call_abc123", "get_weather", args, "{\"city\": \"Paris\"}");
    ev_text(b, TOOL_EV_CONTENT, "\n");
    ev_call(b, 1, "call_def456", "noop", NULL, "{}");
    ev_text(b, TOOL_EV_CONTENT, "\n");
    anth_blocks_end(b);
}

static void blocks_whole(void) {
    anth_blocks b;
    anth_blocks_init(&b, false, false);
    feed_turn(&b);
    CHECK(!b.oom);
    cJSON *c = anth_blocks_content(&b);
    char *s = cJSON_PrintUnformatted(c);
    CHECK_STR(s, "[{\"type\":\"thinking\",\"thinking\":\"\\nLet me think.\\n\",\"signature\":\"\"},"
                 "{\"type\":\"text\",\"text\":\"\\n\\nThe answer is \\\"4\\\".\\n\"},"
                 "{\"type\":\"tool_use\",\"id\":\"toolu_abc123\",\"name\":\"get_weather\",\"input\":{\"city\":\"Paris\"}},"
                 "{\"type\":\"tool_use\",\"id\":\"toolu_def456\",\"name\":\"noop\",\"input\":{}}]");
    free(s);
    cJSON_Delete(c);
    anth_blocks_free(&b);

    /* omitted thinking; whitespace-only content makes no block; arguments cut short give {} */
    anth_blocks_init(&b, false, true);
    ev_text(&b, TOOL_EV_REASONING, "secret");
    ev_text(&b, TOOL_EV_CONTENT, "  \n");
    const char *args[] = {"{\"city\": \"Pa", NULL};
    ev_call(&b, 0, "9AbCdEfGh", "get_weather", args, "{\"city\": \"Pa");
    anth_blocks_end(&b);
    c = anth_blocks_content(&b);
    s = cJSON_PrintUnformatted(c);
    CHECK_STR(s, "[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"},"
                 "{\"type\":\"tool_use\",\"id\":\"toolu_9AbCdEfGh\",\"name\":\"get_weather\",\"input\":{}}]");
    free(s);
    cJSON_Delete(c);
    anth_blocks_free(&b);

    /* a reply of whitespace alone: one text block */
    anth_blocks_init(&b, false, false);
    ev_text(&b, TOOL_EV_CONTENT, " ");
    ev_text(&b, TOOL_EV_CONTENT, "\n");
    anth_blocks_end(&b);
    c = anth_blocks_content(&b);
    s = cJSON_PrintUnformatted(c);
    CHECK_STR(s, "[{\"type\":\"text\",\"text\":\" \\n\"}]");
    free(s);
    cJSON_Delete(c);
    anth_blocks_free(&b);

    /* nothing at all: no blocks */
    anth_blocks_init(&b, false, false);
    anth_blocks_end(&b);
    c = anth_blocks_content(&b);
    s = cJSON_PrintUnformatted(c);
    CHECK_STR(s, "[]");
    free(s);
    cJSON_Delete(c);
    anth_blocks_free(&b);
}

static void blocks_stream(void) {
    anth_blocks b;
    wbuf o = {0};
    anth_blocks_init(&b, true, false);
    b.sse = &o;
    feed_turn(&b);
    const char *want =
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"\\n\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Let me think.\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"\\n\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\n\\n\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"The answer\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\" is \\\"4\\\".\"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"\\n\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_abc123\",\"name\":\"get_weather\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \"}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"Paris\\\"}\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n"
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":3,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_def456\",\"name\":\"noop\",\"input\":{}}}\n\n"
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n"
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":3}\n\n";
    CHECK_STR(o.data, want);
    anth_blocks_free(&b);
    wbuf_free(&o);
}

static void frames(void) {
    wbuf o = {0};
    anth_sse_start(&o, "msg_1", "qwen \"x\"", 12);
    CHECK_STR(o.data, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","
                      "\"role\":\"assistant\",\"model\":\"qwen \\\"x\\\"\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,"
                      "\"usage\":{\"input_tokens\":12,\"output_tokens\":0,\"cache_read_input_tokens\":0,"
                      "\"cache_creation_input_tokens\":0}}}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n");
    wbuf_reset(&o);
    anth_sse_finish(&o, "tool_use", NULL, 12, 5, 7);
    CHECK_STR(o.data, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\","
                      "\"stop_sequence\":null},\"usage\":{\"input_tokens\":7,\"output_tokens\":7,\"cache_read_input_tokens\":5,"
                      "\"cache_creation_input_tokens\":0}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    wbuf_reset(&o);
    anth_sse_finish(&o, "stop_sequence", "\n\nHuman:", 3, 0, 2);
    CHECK_STR(o.data, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"stop_sequence\","
                      "\"stop_sequence\":\"\\n\\nHuman:\"},\"usage\":{\"input_tokens\":3,\"output_tokens\":2,\"cache_read_input_tokens\":0,"
                      "\"cache_creation_input_tokens\":0}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    const char *stops[] = {"END", "ab", "b"};
    const char *raw = "xxabEND";
    CHECK_INT(anth_stop_match(raw, strlen(raw), stops, 3), 1);  /* "ab" at 2 comes first */
    CHECK_INT(anth_stop_match("xxbEND", 6, stops, 3), 2);
    CHECK_INT(anth_stop_match("xxEND", 5, stops, 3), 0);
    const char *same[] = {"abc", "ab"};
    CHECK_INT(anth_stop_match("zabc", 4, same, 2), 1);           /* one place: the shorter ends first */
    CHECK_INT(anth_stop_match("nothing", 7, stops, 3), -1);
    CHECK_INT(anth_stop_match("xxab", 4, stops, 0), -1);
    wbuf_reset(&o);
    anth_sse_error(&o, 503, "busy \"now\"");
    CHECK_STR(o.data, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"busy \\\"now\\\"\"}}\n\n");
    wbuf_reset(&o);
    anth_error_json(&o, 404, "no model");
    CHECK_STR(o.data, "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"no model\"}}");
    wbuf_free(&o);
    CHECK_STR(anth_error_type(400), "invalid_request_error");
    CHECK_STR(anth_error_type(401), "authentication_error");
    CHECK_STR(anth_error_type(413), "request_too_large");
    CHECK_STR(anth_error_type(429), "rate_limit_error");
    CHECK_STR(anth_error_type(499), "invalid_request_error");
    CHECK_STR(anth_error_type(500), "api_error");
    CHECK_STR(anth_stop_reason("tool_calls"), "tool_use");
    CHECK_STR(anth_stop_reason("length"), "max_tokens");
    CHECK_STR(anth_stop_reason("stop"), "end_turn");
    char id[64];
    anth_tool_id("call_XYZ", id, sizeof id);
    CHECK_STR(id, "toolu_XYZ");
}

int main(void) {
    RUN(basic);
    RUN(tool_turns);
    RUN(tools_and_choice);
    RUN(thinking_and_format);
    RUN(count_tokens_form);
    RUN(refused);
    RUN(blocks_whole);
    RUN(blocks_stream);
    RUN(frames);
    return check_summary("test_anthropic_convert");
}
