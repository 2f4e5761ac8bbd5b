/* chat_template.h — chat templates: render a conversation into the prompt
 * text a model was trained on, as transformers' apply_chat_template does.
 *
 * The template is Jinja (src/template/jinja.h) from tokenizer_config.json /
 * GGUF tokenizer.chat_template, or one of the built-ins below. Its variables
 * are the conversation's: `messages` (each message's every key: role,
 * content, tool_calls, reasoning_content, ...), `tools` and any other top-level
 * key of the conversation JSON, plus add_generation_prompt, enable_thinking
 * (when given), bos_token and eos_token (when the tokenizer has them). */
#ifndef WICK_TEMPLATE_CHAT_TEMPLATE_H
#define WICK_TEMPLATE_CHAT_TEMPLATE_H

#include <cJSON.h>
#include <stddef.h>

#include "wick.h"

/* Render tmpl with the variables of context_json (a JSON object). Returns the
 * prompt (malloc'd, NUL-terminated) or NULL + err "chat template: line L,
 * column C: <what>" (raise_exception(msg) gives msg as <what>). */
char *chat_template_render(const char *tmpl, const char *context_json, wick_error *err);
/* The same from a cJSON object; *len (may be NULL) gets the length. */
char *chat_template_render_cjson(const char *tmpl, const cJSON *context, size_t *len,
                                 wick_error *err);

typedef struct chat_template_opts {
    int add_generation_prompt; /* -1 = the conversation's own value, else true; 0/1 = this */
    int enable_thinking;       /* -1 = the conversation's own value, else undefined; 0/1 = this */
    const char *bos_token;     /* NULL = leave as the conversation has it (usually undefined) */
    const char *eos_token;
} chat_template_opts;

/* The template variables for a conversation: conversation_json is an object
 * with "messages": [...] (and optionally "tools" and any other keys, passed
 * through), or a bare array of messages. Returns a new cJSON object (caller
 * cJSON_Delete's) or NULL + err. */
cJSON *chat_template_context(const char *conversation_json, const chat_template_opts *o,
                             wick_error *err);

/* A built-in template by name (one of chat_template_builtin_names());
 * NULL for any other name. Besides chatml, llama3, llama2 and mistral (the
 * official templates of those families), the names are llama.cpp's
 * --chat-template formats, each rendering what llama.cpp writes for it. */
const char *chat_template_builtin(const char *name);
/* The built-in names, ", "-separated, for help and errors. */
const char *chat_template_builtin_names(void);
/* The built-in format a model's Jinja template writes, recognised by its
 * markers (llama-server's --no-jinja reading): a built-in name, or NULL
 * when none is recognised. */
const char *chat_template_detect(const char *tmpl);

#endif
