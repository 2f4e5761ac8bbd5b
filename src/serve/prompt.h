/* prompt.h — request prompts to token ids: completion prompts (text or
 * ids), chat conversations rendered with the model's chat template (OpenAI
 * and Ollama message shapes), and token-piece text for logprobs. */
#ifndef WICK_SERVE_PROMPT_H
#define WICK_SERVE_PROMPT_H

#include <cJSON.h>
#include <stdint.h>

#include "core/buf.h"
#include "serve/fields.h"
#include "wick.h"

/* A completion prompt: a string, a one-string array, an array of token ids,
 * or a one-array array of ids. BOS is added as the model adds it to text.
 * Text that needs more than max_ids ids (0 = no limit) is refused as soon as
 * that is known (400 context_length_exceeded), before it is tokenized in
 * full. *ids malloc'd. 0, or -1 with e (param "prompt"). */
int prompt_completion(const wick_model *m, const cJSON *prompt, int max_ids, int32_t **ids, int *n, fld_error *e);
/* How many prompts "prompt" holds: 1 for a string or token ids, k for an
 * array of k strings or of k token-id arrays; -1 with e for another shape. */
int prompt_completion_count(const cJSON *prompt, fld_error *e);
/* Prompt i (< prompt_completion_count) as prompt_completion gives one. */
int prompt_completion_at(const wick_model *m, const cJSON *prompt, int i, int max_ids, int32_t **ids, int *n,
                         fld_error *e);
/* A fill-in-the-middle prompt: [BOS] <prefix> prefix <suffix> suffix
 * <middle>, with the model's FIM tokens (Qwen2.5-Coder's <|fim_prefix|>...,
 * StarCoder's <fim_prefix>..., CodeLlama's <PRE>...); a 400 naming
 * "suffix" for a model without them. */
int prompt_fim(const wick_model *m, const char *prefix, const char *suffix, int max_ids, int32_t **ids, int *n,
               fld_error *e);
/* Plain text with BOS as the model adds it (special-token text recognized). */
int prompt_text(const wick_model *m, const char *text, bool add_special, int max_ids, int32_t **ids, int *n,
                fld_error *e);

typedef struct prompt_chat_opts {
    const cJSON *messages;  /* array of messages */
    const cJSON *tools;     /* may be NULL */
    const cJSON *kwargs;    /* chat_template_kwargs: extra template variables; may be NULL */
    const char *system;     /* Ollama `system`: a system message put first; may be NULL */
    const char *tmpl;       /* a template given by the request; NULL = the model's */
    bool add_generation_prompt;
    bool continue_final_message;
    /* the server's --reasoning off: a template that switches thinking gets
     * enable_thinking false; otherwise true, as llama-server gives it (the
     * request's kwargs override either) */
    bool reasoning_off;
    /* llama-server's assistant prefill: a last assistant message is left out
     * of the rendering (with the generation prompt) and its text appended */
    bool prefill_assistant;
    int max_ids;            /* refuse a prompt of more ids (0 = no limit; see prompt_completion) */
} prompt_chat_opts;

/* Render a conversation with the chat template: *text (malloc'd, NUL-
 * terminated) and its length. BOS goes first when the model adds it to text
 * and the template did not write it first (prompt_with_bos): the text whose
 * tokens are submitted. */
int prompt_render(const wick_model *m, const prompt_chat_opts *o, char **text, size_t *len, fld_error *e);
/* The template's text alone (no BOS put first). */
int prompt_template_text(const wick_model *m, const prompt_chat_opts *o, char **text, size_t *len, fld_error *e);
/* What llama-server's /apply-template answers: the template's text without a
 * leading BOS when the model adds one (tokenizing it with add_special gives
 * the submitted prompt). */
int prompt_apply_template(const wick_model *m, const prompt_chat_opts *o, char **text, size_t *len, fld_error *e);
/* Put the model's BOS text before *text (realloc'd) when the model adds BOS
 * and *text does not begin with it. */
int prompt_with_bos(const wick_model *m, char **text, size_t *len, fld_error *e);
/* Fold the system messages of ctx's "messages" into user messages when tmpl
 * does not take a system role (prompt_system.c); ctx is the template's
 * variables. */
int prompt_fold_system(const char *tmpl, cJSON *ctx, fld_error *e);
/* Tokenize rendered text: special-token text recognized, no BOS added (what
 * prompt_chat does with the rendered prompt); max_ids as prompt_completion's.
 * *ids malloc'd. */
int prompt_encode(const wick_model *m, const char *text, size_t len, int max_ids, int32_t **ids, int *n,
                  fld_error *e);

/* Render a conversation (prompt_render) and tokenize it (special-token text
 * recognized). Message content may be a string,
 * null or an array of {type:"text", text} parts; images are refused.
 * *text (may be NULL) gets the rendered prompt. */
int prompt_chat(const wick_model *m, const prompt_chat_opts *o, int32_t **ids, int *n, char **text,
                fld_error *e);

/* A conversation's earlier turns as templates expect them
 * (prompt_history.c), one message at a time in order: content null -> "",
 * tool-call arguments given as a JSON string -> the object, Ollama's
 * "thinking" -> reasoning_content; a tool result must answer a call of the
 * assistant message before it (by tool_call_id, or Ollama's tool_name). */
typedef struct prompt_history {
    const cJSON *calls; /* the last assistant message's tool_calls */
} prompt_history;
int prompt_history_norm(cJSON *msg, int i, prompt_history *h, fld_error *e);

/* The bytes token id stands for (may be a partial UTF-8 character). */
void prompt_piece(const wick_model *m, int32_t id, wbuf *out);

#endif
