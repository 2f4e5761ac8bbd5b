/* chat_template.c — conversation JSON -> template variables -> prompt text,
 * and the built-in fallback templates (chatml, llama3, llama2, mistral),
 * written after the official templates of those model families. */
#include "template/chat_template.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "template/jinja.h"

char *chat_template_render_cjson(const char *tmpl, const cJSON *context, size_t *len,
                                 wick_error *err) {
    if (len) *len = 0;
    if (!tmpl) {
        wick_fail(err, "chat template: no template");
        return NULL;
    }
    jinja_template *t = jinja_parse(tmpl, strlen(tmpl), err);
    if (!t) {
        wick_fail_prefix(err, "chat template: ");
        return NULL;
    }
    char *out = jinja_render(t, context, NULL, len, err);
    if (!out) wick_fail_prefix(err, "chat template: ");
    jinja_free(t);
    return out;
}

char *chat_template_render(const char *tmpl, const char *context_json, wick_error *err) {
    cJSON *ctx = NULL;
    if (context_json) {
        ctx = cJSON_Parse(context_json);
        if (!ctx || !cJSON_IsObject(ctx)) {
            cJSON_Delete(ctx);
            wick_fail(err, "chat template: the variables are not a JSON object");
            return NULL;
        }
    }
    char *out = chat_template_render_cjson(tmpl, ctx, NULL, err);
    cJSON_Delete(ctx);
    return out;
}

static void set_item(cJSON *obj, const char *key, cJSON *item) {
    if (!item) return;
    if (cJSON_GetObjectItemCaseSensitive(obj, key)) cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
    else cJSON_AddItemToObject(obj, key, item);
}

cJSON *chat_template_context(const char *conversation_json, const chat_template_opts *o,
                             wick_error *err) {
    if (!conversation_json) {
        wick_fail(err, "no conversation given");
        return NULL;
    }
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithOpts(conversation_json, &end, 1);
    if (!j) {
        size_t at = end && end >= conversation_json ? (size_t)(end - conversation_json) : 0;
        wick_fail(err, "conversation is not valid JSON (error near byte %zu)", at);
        return NULL;
    }
    cJSON *ctx = j;
    if (cJSON_IsArray(j)) {
        ctx = cJSON_CreateObject();
        if (!ctx) {
            cJSON_Delete(j);
            wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
            return NULL;
        }
        cJSON_AddItemToObject(ctx, "messages", j);
    } else if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        wick_fail(err, "conversation must be a JSON object with \"messages\", or an array of messages");
        return NULL;
    }
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(ctx, "messages");
    if (!cJSON_IsArray(msgs)) {
        cJSON_Delete(ctx);
        wick_fail(err, "conversation has no \"messages\" array");
        return NULL;
    }
    int i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, msgs) {
        if (!cJSON_IsObject(m)) {
            cJSON_Delete(ctx);
            wick_fail(err, "message %d is not a JSON object", i);
            return NULL;
        }
        i++;
    }
    chat_template_opts def = {.add_generation_prompt = -1, .enable_thinking = -1};
    if (!o) o = &def;
    if (o->add_generation_prompt >= 0)
        set_item(ctx, "add_generation_prompt", cJSON_CreateBool(o->add_generation_prompt));
    else if (!cJSON_GetObjectItemCaseSensitive(ctx, "add_generation_prompt"))
        set_item(ctx, "add_generation_prompt", cJSON_CreateBool(1));
    if (o->enable_thinking >= 0) set_item(ctx, "enable_thinking", cJSON_CreateBool(o->enable_thinking));
    if (o->bos_token) set_item(ctx, "bos_token", cJSON_CreateString(o->bos_token));
    if (o->eos_token) set_item(ctx, "eos_token", cJSON_CreateString(o->eos_token));
    return ctx;
}

/* ------------------------------------------------------------- built-ins */

static const char CHATML[] =
    "{%- for message in messages %}\n"
    "    {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|im_start|>assistant\\n' }}\n"
    "{%- endif %}\n";

static const char LLAMA3[] =
    "{{- bos_token }}\n"
    "{%- for message in messages %}\n"
    "    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}\n"
    "    {{- message['content'] | trim }}\n"
    "    {{- '<|eot_id|>' }}\n"
    "{%- endfor %}\n"
    "{%- if add_generation_prompt %}\n"
    "    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n"
    "{%- endif %}\n";

/* shared head of the [INST] templates: split off a leading system message */
#define INST_HEAD                                                                            \
    "{%- if messages and messages[0]['role'] == 'system' %}\n"                               \
    "    {%- set system_message = messages[0]['content'] %}\n"                               \
    "    {%- set loop_messages = messages[1:] %}\n"                                          \
    "{%- else %}\n"                                                                          \
    "    {%- set system_message = none %}\n"                                                 \
    "    {%- set loop_messages = messages %}\n"                                              \
    "{%- endif %}\n"                                                                         \
    "{%- for message in loop_messages %}\n"                                                  \
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n"                  \
    "        {{- raise_exception('Conversation roles must alternate "                         \
    "user/assistant/user/assistant/...') }}\n"                                               \
    "    {%- endif %}\n"

static const char LLAMA2[] =
    INST_HEAD
    "    {%- set content = message['content'] %}\n"
    "    {%- if loop.first and system_message is not none %}\n"
    "        {%- set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + content %}\n"
    "    {%- endif %}\n"
    "    {%- if message['role'] == 'user' %}\n"
    "        {{- bos_token + '[INST] ' + content | trim + ' [/INST]' }}\n"
    "    {%- else %}\n"
    "        {{- ' ' + content | trim + ' ' + eos_token }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n";

static const char MISTRAL[] =
    "{{- bos_token }}\n"
    INST_HEAD
    "    {%- if message['role'] == 'user' %}\n"
    "        {%- if loop.first and system_message is not none %}\n"
    "            {{- '[INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n"
    "        {%- else %}\n"
    "            {{- '[INST] ' + message['content'] + ' [/INST]' }}\n"
    "        {%- endif %}\n"
    "    {%- else %}\n"
    "        {{- message['content'] + eos_token }}\n"
    "    {%- endif %}\n"
    "{%- endfor %}\n";

const char *chat_template_builtin(const char *name) {
    if (!name) return NULL;
    if (!strcmp(name, "chatml")) return CHATML;
    if (!strcmp(name, "llama3")) return LLAMA3;
    if (!strcmp(name, "llama2")) return LLAMA2;
    if (!strcmp(name, "mistral")) return MISTRAL;
    return NULL;
}
