/* chat_template.c — conversation JSON -> template variables -> prompt text,
 * and the built-in templates: chatml, llama3, llama2 and mistral written
 * after the official templates of those model families, and llama.cpp's
 * other named formats as its built-in formatter writes them. */
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

/* llama.cpp's named formats (its --chat-template NAME, without --jinja): the
 * same text as its built-in formatter gives for each name. */
#define LOOP "{%- for message in messages %}\n"
#define ENDLOOP "{%- endfor %}\n"
#define ROLE_IS(r) "message['role'] == '" r "'"
#define GEN(text) "{%- if add_generation_prompt %}{{- '" text "' }}{%- endif %}\n"

static const char COMMAND_R[] =
    LOOP
    "    {%- if " ROLE_IS("system") " %}{{- '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' }}\n"
    "    {%- elif " ROLE_IS("user") " %}{{- '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' }}\n"
    "    {%- elif " ROLE_IS("assistant") " %}{{- '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}\n"
    "    {%- endif %}\n"
    "    {%- if message['role'] in ['system', 'user', 'assistant'] %}\n"
    "        {{- message['content'] | trim + '<|END_OF_TURN_TOKEN|>' }}\n"
    "    {%- endif %}\n"
    ENDLOOP
    GEN("<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>");

/* Gemma has no system role: the system text goes first in the next user turn */
static const char GEMMA[] =
    "{%- set ns = namespace(system='') %}\n"
    LOOP
    "    {%- if " ROLE_IS("system") " %}\n"
    "        {%- set ns.system = message['content'] | trim %}\n"
    "    {%- else %}\n"
    "        {%- set role = 'model' if " ROLE_IS("assistant") " else message['role'] %}\n"
    "        {{- '<start_of_turn>' + role + '\\n' }}\n"
    "        {%- if ns.system and role != 'model' %}\n"
    "            {{- ns.system + '\\n\\n' }}\n"
    "            {%- set ns.system = '' %}\n"
    "        {%- endif %}\n"
    "        {{- message['content'] | trim + '<end_of_turn>\\n' }}\n"
    "    {%- endif %}\n"
    ENDLOOP
    GEN("<start_of_turn>model\\n");

/* one line per message: <prefix role infix> content <suffix> */
#define PER_ROLE(prefix, infix, suffix, gen)                                   \
    LOOP "    {{- '" prefix "' + message['role'] + '" infix "' + message['content'] + '" suffix "' }}\n" \
    ENDLOOP GEN(gen)

static const char PHI3[] = PER_ROLE("<|", "|>\\n", "<|end|>\\n", "<|assistant|>\\n");
static const char PHI4[] = PER_ROLE("<|im_start|>", "<|im_sep|>", "<|im_end|>", "<|im_start|>assistant<|im_sep|>");
static const char FALCON3[] = PER_ROLE("<|", "|>\\n", "\\n", "<|assistant|>\\n");
static const char ZEPHYR[] = PER_ROLE("<|", "|>\\n", "<|endoftext|>\\n", "<|assistant|>\\n");
static const char MEGREZ[] = PER_ROLE("<|role_start|>", "<|role_end|>", "<|turn_end|>", "<|role_start|>assistant<|role_end|>");
static const char CHATGLM4[] = "{{- '[gMASK]<sop>' }}\n" PER_ROLE("<|", "|>\\n", "", "<|assistant|>");
static const char CHATGLM3[] = "{{- '[gMASK]sop' }}\n" PER_ROLE("<|", "|>\\n ", "", "<|assistant|>");
static const char GLMEDGE[] = PER_ROLE("<|", "|>\\n", "", "<|assistant|>");

/* each turn but the first opens with a literal <s> */
static const char MONARCH[] =
    LOOP
    "    {{- ('' if loop.first else '<s>') + message['role'] + '\\n' + message['content'] + '</s>\\n' }}\n"
    ENDLOOP
    GEN("<s>assistant\\n");

/* one case per role: system, user and assistant text around the content
 * (other roles are left out), and the generation prompt */
#define BY_ROLE(sys_pre, sys_post, user_pre, user_post, asst_pre, asst_post, gen)                   \
    LOOP                                                                                           \
    "    {%- if " ROLE_IS("system") " %}{{- '" sys_pre "' + message['content'] + '" sys_post "' }}\n" \
    "    {%- elif " ROLE_IS("user") " %}{{- '" user_pre "' + message['content'] + '" user_post "' }}\n" \
    "    {%- elif " ROLE_IS("assistant") " %}{{- '" asst_pre "' + message['content'] + '" asst_post "' }}\n" \
    "    {%- endif %}\n" ENDLOOP GEN(gen)

static const char VICUNA[] = BY_ROLE("", "\\n\\n", "USER: ", "\\n", "ASSISTANT: ", "</s>\\n", "ASSISTANT:");
static const char VICUNA_ORCA[] = BY_ROLE("SYSTEM: ", "\\n", "USER: ", "\\n", "ASSISTANT: ", "</s>\\n", "ASSISTANT:");
static const char DEEPSEEK[] =
    BY_ROLE("", "", "### Instruction:\\n", "\\n", "### Response:\\n", "\\n<|EOT|>\\n", "### Response:\\n");
#define DS_EOS "<\xef\xbd\x9c" "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>" /* <｜end▁of▁sentence｜> */
static const char DEEPSEEK2[] = BY_ROLE("", "\\n\\n", "User: ", "\\n\\n", "Assistant: ", DS_EOS, "Assistant:");
#define DS_USER "<\xef\xbd\x9cUser\xef\xbd\x9c>"
#define DS_ASST "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>"
static const char DEEPSEEK3[] = BY_ROLE("", "\\n\\n", DS_USER, "", DS_ASST, DS_EOS, DS_ASST);

/* roles by their capitalized name, the system text bare */
static const char OPENCHAT[] =
    LOOP
    "    {%- if " ROLE_IS("system") " %}{{- message['content'] + '<|end_of_turn|>' }}\n"
    "    {%- else %}{{- 'GPT4 Correct ' + message['role'][:1] | upper + message['role'][1:] + ': ' + "
    "message['content'] + '<|end_of_turn|>' }}\n"
    "    {%- endif %}\n"
    ENDLOOP
    GEN("GPT4 Correct Assistant:");

/* the system text goes first in the next user turn; no generation prompt
 * (each user turn ends with the assistant's opening) */
static const char ORION[] =
    "{%- set ns = namespace(system='') %}\n"
    LOOP
    "    {%- if " ROLE_IS("system") " %}{%- set ns.system = message['content'] %}\n"
    "    {%- elif " ROLE_IS("user") " %}\n"
    "        {{- 'Human: ' }}\n"
    "        {%- if ns.system %}{{- ns.system + '\\n\\n' }}{%- set ns.system = '' %}{%- endif %}\n"
    "        {{- message['content'] + '\\n\\nAssistant: </s>' }}\n"
    "    {%- else %}{{- message['content'] + '</s>' }}\n"
    "    {%- endif %}\n"
    ENDLOOP;

static const char EXAONE3[] =
    LOOP
    "    {%- if " ROLE_IS("system") " %}{{- '[|system|]' + message['content'] | trim + '[|endofturn|]\\n' }}\n"
    "    {%- elif " ROLE_IS("user") " %}{{- '[|user|]' + message['content'] | trim + '\\n' }}\n"
    "    {%- elif " ROLE_IS("assistant") " %}{{- '[|assistant|]' + message['content'] | trim + '[|endofturn|]\\n' }}\n"
    "    {%- endif %}\n"
    ENDLOOP
    GEN("[|assistant|]");

static const char GRANITE[] =
    LOOP
    "    {{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' }}\n"
    "    {%- if " ROLE_IS("assistant_tool_call") " %}{{- '<|tool_call|>' }}{%- endif %}\n"
    "    {{- message['content'] + '<|end_of_text|>\\n' }}\n"
    ENDLOOP
    GEN("<|start_of_role|>assistant<|end_of_role|>\\n");

/* a leading system message right after <s>; each user turn lists no functions */
static const char GIGACHAT[] =
    "{{- '<s>' }}\n"
    "{%- set has_system = messages and messages[0]['role'] == 'system' %}\n"
    "{%- if has_system %}{{- messages[0]['content'] + '<|message_sep|>' }}{%- endif %}\n"
    LOOP
    "    {%- if has_system and loop.first %}\n"
    "    {%- elif " ROLE_IS("user") " %}\n"
    "        {{- 'user<|role_sep|>' + message['content'] + '<|message_sep|>available functions<|role_sep|>[]<|message_sep|>' }}\n"
    "    {%- elif " ROLE_IS("assistant") " %}\n"
    "        {{- 'assistant<|role_sep|>' + message['content'] + '<|message_sep|>' }}\n"
    "    {%- endif %}\n"
    ENDLOOP
    GEN("assistant<|role_sep|>");

static const char MINICPM[] =
    LOOP
    "    {%- if " ROLE_IS("user") " %}{{- '<\xe7\x94\xa8\xe6\x88\xb7>' + message['content'] | trim + '<AI>' }}\n"
    "    {%- else %}{{- message['content'] | trim }}\n"
    "    {%- endif %}\n"
    ENDLOOP;

static const char RWKV_WORLD[] =
    LOOP
    "    {%- if " ROLE_IS("user") " %}{{- 'User: ' + message['content'] + '\\n\\nAssistant:' }}\n"
    "    {%- else %}{{- message['content'] + '\\n\\n' }}\n"
    "    {%- endif %}\n"
    ENDLOOP;

static const char MISTRAL_V7[] =
    LOOP
    "    {%- if " ROLE_IS("system") " %}{{- '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}\n"
    "    {%- elif " ROLE_IS("user") " %}{{- '[INST] ' + message['content'] + '[/INST]' }}\n"
    "    {%- else %}{{- ' ' + message['content'] + '</s>' }}\n"
    "    {%- endif %}\n"
    ENDLOOP;

/* Mistral's v1, v3 and v3-tekken: [INST] opens a turn (system text first,
 * then the user's), an assistant message closes it */
#define MISTRAL_TURNS(lead, trail, asst)                                                    \
    "{%- set ns = namespace(inside=false) %}\n" LOOP                                     \
    "    {%- if not ns.inside %}{{- '" lead "[INST]" trail "' }}{%- set ns.inside = true %}{%- endif %}\n" \
    "    {%- if " ROLE_IS("system") " %}{{- message['content'] + '\\n\\n' }}\n"             \
    "    {%- elif " ROLE_IS("user") " %}{{- message['content'] + '" lead "[/INST]' }}\n"    \
    "    {%- else %}{{- '" trail "' + " asst " + '</s>' }}{%- set ns.inside = false %}\n"   \
    "    {%- endif %}\n" ENDLOOP

static const char MISTRAL_V1[] = MISTRAL_TURNS(" ", " ", "message['content']");
static const char MISTRAL_V3[] = MISTRAL_TURNS("", " ", "message['content'] | trim");
static const char MISTRAL_V3_TEKKEN[] = MISTRAL_TURNS("", "", "message['content']");

/* llama.cpp's llama2 family: the first [INST] opens the prompt, an assistant
 * message closes a turn; the system text in <<SYS>>; -bos: later turns open
 * with <s>; -strip: each message trimmed */
#define LLAMA2_TURNS(content, sys, reopen)                                                         \
    "{{- '[INST] ' }}\n"                                                                           \
    "{%- set ns = namespace(inside=true) %}\n" LOOP                                                \
    "    {%- set content = " content " %}\n"                                                       \
    "    {%- if not ns.inside %}{{- '" reopen "' }}{%- set ns.inside = true %}{%- endif %}\n"      \
    "    {%- if " ROLE_IS("system") " %}{{- " sys " }}\n"                                         \
    "    {%- elif " ROLE_IS("user") " %}{{- content + ' [/INST]' }}\n"                             \
    "    {%- else %}{{- content + '</s>' }}{%- set ns.inside = false %}\n"                        \
    "    {%- endif %}\n" ENDLOOP

#define SYS_BLOCK "'<<SYS>>\\n' + content + '\\n<</SYS>>\\n\\n'"
static const char LLAMA2_SYS[] = LLAMA2_TURNS("message['content']", SYS_BLOCK, "[INST] ");
static const char LLAMA2_SYS_BOS[] = LLAMA2_TURNS("message['content']", SYS_BLOCK, "<s>[INST] ");
static const char LLAMA2_SYS_STRIP[] = LLAMA2_TURNS("message['content'] | trim", SYS_BLOCK, "[INST] ");

static const struct {
    const char *name;
    const char *tmpl;
} BUILTINS[] = {
    {"chatml", CHATML},
    {"llama2", LLAMA2},
    {"llama3", LLAMA3},
    {"mistral", MISTRAL},
    {"chatglm3", CHATGLM3},
    {"chatglm4", CHATGLM4},
    {"command-r", COMMAND_R},
    {"deepseek", DEEPSEEK},
    {"deepseek2", DEEPSEEK2},
    {"deepseek3", DEEPSEEK3},
    {"exaone3", EXAONE3},
    {"falcon3", FALCON3},
    {"gemma", GEMMA},
    {"gigachat", GIGACHAT},
    {"glmedge", GLMEDGE},
    {"granite", GRANITE},
    {"llama2-sys", LLAMA2_SYS},
    {"llama2-sys-bos", LLAMA2_SYS_BOS},
    {"llama2-sys-strip", LLAMA2_SYS_STRIP},
    {"megrez", MEGREZ},
    {"minicpm", MINICPM},
    {"mistral-v1", MISTRAL_V1},
    {"mistral-v3", MISTRAL_V3},
    {"mistral-v3-tekken", MISTRAL_V3_TEKKEN},
    {"mistral-v7", MISTRAL_V7},
    {"monarch", MONARCH},
    {"openchat", OPENCHAT},
    {"orion", ORION},
    {"phi3", PHI3},
    {"phi4", PHI4},
    {"rwkv-world", RWKV_WORLD},
    {"vicuna", VICUNA},
    {"vicuna-orca", VICUNA_ORCA},
    {"zephyr", ZEPHYR},
};

const char *chat_template_builtin(const char *name) {
    if (!name) return NULL;
    for (size_t i = 0; i < sizeof BUILTINS / sizeof BUILTINS[0]; i++)
        if (!strcmp(name, BUILTINS[i].name)) return BUILTINS[i].tmpl;
    return NULL;
}

const char *chat_template_builtin_names(void) {
    return "chatml, llama2, llama3, mistral, chatglm3, chatglm4, command-r, deepseek, deepseek2, deepseek3, "
           "exaone3, falcon3, gemma, gigachat, glmedge, granite, llama2-sys, llama2-sys-bos, llama2-sys-strip, "
           "megrez, minicpm, mistral-v1, mistral-v3, mistral-v3-tekken, mistral-v7, monarch, openchat, orion, "
           "phi3, phi4, rwkv-world, vicuna, vicuna-orca, zephyr";
}
