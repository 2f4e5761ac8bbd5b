/* chat_tools.h — a chat request's tools, tool_choice and
 * parallel_tool_calls checked, and the grammar that makes a forced call
 * (tool_choice "required" or a named function) come out in the model
 * family's syntax with arguments valid under the tool's JSON Schema, and
 * the lazily started grammar of tool_choice "auto". */
#ifndef WICK_SERVE_CHAT_TOOLS_H
#define WICK_SERVE_CHAT_TOOLS_H

#include <cJSON.h>

#include "serve/fields_grammar.h"
#include "serve/tool_parse.h"

typedef enum chat_tools_choice {
    CHAT_TOOLS_NONE = 0, /* no tools, or tool_choice "none": the prompt shows none */
    CHAT_TOOLS_AUTO,     /* the model chooses */
    CHAT_TOOLS_REQUIRED, /* at least one call, any tool */
    CHAT_TOOLS_NAMED,    /* one call of the named tool */
} chat_tools_choice;

typedef struct chat_tools {
    const cJSON *tools;  /* the request's tools (checked), NULL = none */
    chat_tools_choice choice;
    const char *name;    /* CHAT_TOOLS_NAMED */
    bool parallel;       /* parallel_tool_calls (default true) */
    bool forced;         /* REQUIRED or NAMED: the output is constrained to calls */
} chat_tools;

/* Read and check "tools", "tool_choice", "parallel_tool_calls" of an
 * OpenAI chat body: each tool {type: "function", function: {name,
 * description?, parameters?: object, strict?}} with distinct names; a
 * tool_choice naming no given tool, or forcing a call with no tools, is a
 * 400. 0 or -1 with e. */
int chat_tools_parse(const cJSON *body, chat_tools *t, fld_error *e);
/* The grammar of a forced call for format f into g (g->spec.kind 0 before).
 * *lead (malloc'd, or NULL) is text the prompt must end with, the family's
 * opening tag when it is a special token the grammar cannot write. */
int chat_tools_grammar(const chat_tools *t, const tool_format *f, const wick_tokenizer *tok, fld_grammar *g,
                       char **lead, fld_error *e);
/* tool_choice "auto": the grammar of the family's calls, started lazily
 * when the model samples the family's opening tag (a single token: Hermes
 * <tool_call>, Mistral [TOOL_CALLS], Granite <|tool_call|>, Llama 3
 * <|python_tag|>), so that every call the model chooses to make has
 * arguments valid under its tool's schema. Leaves g alone (kind 0) where
 * the family has no such tag (generic JSON, Llama 3's bare JSON form) or
 * the template asks for Qwen3-Coder's XML calls. 0 or -1 with e. */
int chat_tools_lazy_grammar(const chat_tools *t, const tool_format *f, const wick_tokenizer *tok,
                            const char *chat_template, fld_grammar *g, fld_error *e);
/* The named tool's function object ({name, parameters, ...}), or NULL. */
const cJSON *chat_tools_find(const chat_tools *t, const char *name);

#endif
