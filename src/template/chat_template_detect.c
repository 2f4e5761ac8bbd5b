/* chat_template_detect.c — which built-in chat format a model's Jinja chat
 * template writes, recognised by the markers it contains (llama-server's
 * --no-jinja reading of a model's template). The checks go from the most
 * specific markers to the most generic, since several formats share tags
 * (phi4 and chatml both open turns with <|im_start|>). */
#include <stdbool.h>
#include <string.h>

#include "template/chat_template.h"

static bool has(const char *t, const char *s) {
    return strstr(t, s) != NULL;
}

/* The [INST] family: Mistral's versions, Llama 2's system-block forms,
 * else Mistral's first format. */
static const char *inst_family(const char *t) {
    if (has(t, "[SYSTEM_PROMPT]")) return "mistral-v7";
    if (has(t, "' [INST] ' + system_message") || has(t, "\" [INST] \" + system_message")) return "mistral-v1";
    if (has(t, "[AVAILABLE_TOOLS]")) /* v3 writes "[INST] text", Tekken "[INST]text" */
        return has(t, "'[INST] '") || has(t, "\"[INST] \"") ? "mistral-v3" : "mistral-v3-tekken";
    if (has(t, "<<SYS>>")) {
        if (has(t, "content.strip()") || has(t, "| trim")) return "llama2-sys-strip";
        if (has(t, "bos_token + '[INST]") || has(t, "<s>[INST]")) return "llama2-sys-bos";
        return "llama2-sys";
    }
    return "mistral"; /* no system block: the system text opens the first user turn */
}

const char *chat_template_detect(const char *t) {
    if (!t || !*t) return NULL;
    if (has(t, "<|im_start|>")) return has(t, "<|im_sep|>") ? "phi4" : "chatml";
    if (has(t, "[SYSTEM_PROMPT]") || has(t, "[INST]")) return inst_family(t);
    if (has(t, "<|start_header_id|>") && has(t, "<|end_header_id|>")) return "llama3";
    if (has(t, "<|START_OF_TURN_TOKEN|>") && has(t, "<|USER_TOKEN|>")) return "command-r";
    if (has(t, "<start_of_turn>")) return "gemma";
    if (has(t, "[gMASK]sop")) return "chatglm3";
    if (has(t, "[gMASK]<sop>")) return "chatglm4";
    if (has(t, "<|start_of_role|>")) return "granite";
    if (has(t, "<|role_start|>")) return "megrez";
    if (has(t, "[|system|]") && has(t, "[|assistant|]") && has(t, "[|endofturn|]")) return "exaone3";
    if (has(t, "<\xef\xbd\x9c" "Assistant\xef\xbd\x9c>") && has(t, "<\xef\xbd\x9cUser\xef\xbd\x9c>")) return "deepseek3";
    if (has(t, "### Instruction:") && has(t, "<|EOT|>")) return "deepseek";
    if (has(t, "'Assistant: ' + message['content'] + eos_token")) return "deepseek2";
    if (has(t, "<\xe7\x94\xa8\xe6\x88\xb7>")) return "minicpm"; /* <用户> */
    if (has(t, "<|message_sep|>") || has(t, "additional_special_tokens[0]")) return "gigachat";
    if (has(t, "GPT4 Correct ")) return "openchat";
    if (has(t, "'\\n\\nAssistant: ' + eos_token") || has(t, "Human: ")) return "orion";
    if (has(t, "<|assistant|>")) {
        if (has(t, "<|end|>")) return "phi3";
        if (has(t, "<|endoftext|>")) return "zephyr";
        if (has(t, "<|system|>") && has(t, "<|user|>") && !has(t, "<|endoftext|>")) return "falcon3";
        return "glmedge";
    }
    if (has(t, "USER: ") && has(t, "ASSISTANT: ")) return has(t, "SYSTEM: ") ? "vicuna-orca" : "vicuna";
    if (has(t, "bos_token + message['role']")) return "monarch";
    if (has(t, "User: ") && has(t, "Assistant:")) return "rwkv-world";
    return NULL;
}
