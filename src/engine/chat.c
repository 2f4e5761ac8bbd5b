/* chat.c — multi-turn chat on top of wick_generate: keeps the message list,
 * renders it with the chat template, and relies on the KV prefix reuse of
 * wick_generate so each turn prefills only its new tokens. */
#include <cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"
#include "engine/context.h"
#include "engine/request.h"
#include "text/chat_template.h"

struct wick_chat {
    wick_context *c;
    cJSON *messages;
    const char *tmpl; /* the model's or a built-in; not owned */
    int enable_thinking;
};

wick_chat *wick_chat_new(wick_context *c, const char *system, const char *template_name,
                         int enable_thinking, wick_error *err) {
    const char *tmpl = template_name ? chat_template_builtin(template_name) : tok_chat_template(c->m->tok);
    if (!tmpl) {
        if (template_name)
            wick_fail(err, "unknown chat template \"%s\"; choose one of %s", template_name,
                      chat_template_builtin_names());
        else
            wick_fail(err, "model has no chat template; pass --template chatml|llama3|llama2|mistral");
        return NULL;
    }
    wick_chat *chat = calloc(1, sizeof *chat);
    if (!chat || !(chat->messages = cJSON_CreateArray())) {
        free(chat);
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    chat->c = c;
    chat->tmpl = tmpl;
    chat->enable_thinking = enable_thinking;
    if (system && *system) {
        cJSON *msg = cJSON_CreateObject();
        cJSON_AddStringToObject(msg, "role", "system");
        cJSON_AddStringToObject(msg, "content", system);
        cJSON_AddItemToArray(chat->messages, msg);
    }
    return chat;
}

void wick_chat_free(wick_chat *chat) {
    if (!chat) return;
    cJSON_Delete(chat->messages);
    free(chat);
}

static void add_message(cJSON *messages, const char *role, const char *content) {
    cJSON *msg = cJSON_CreateObject();
    cJSON_AddStringToObject(msg, "role", role);
    cJSON_AddStringToObject(msg, "content", content);
    cJSON_AddItemToArray(messages, msg);
}

/* The token text of a special id ("" when absent), for bos_token / eos_token. */
static char *token_text(const tokenizer *t, int32_t id) {
    size_t len = 0;
    const char *s = id >= 0 ? tok_token_text(t, id, &len) : NULL;
    char *out = malloc(len + 1);
    if (!out) return NULL;
    if (s) memcpy(out, s, len);
    out[len] = 0;
    return out;
}

char *wick_chat_prompt(wick_chat *chat, const char *user_text, wick_error *err) {
    const tokenizer *t = chat->c->m->tok;
    cJSON *ctx = cJSON_CreateObject();
    cJSON *msgs = cJSON_Duplicate(chat->messages, 1);
    if (user_text) add_message(msgs, "user", user_text);
    cJSON_AddItemToObject(ctx, "messages", msgs);
    cJSON_AddBoolToObject(ctx, "add_generation_prompt", 1);
    if (chat->enable_thinking >= 0) cJSON_AddBoolToObject(ctx, "enable_thinking", chat->enable_thinking);
    char *bos = token_text(t, tok_bos(t)), *eos = token_text(t, tok_eos(t));
    cJSON_AddStringToObject(ctx, "bos_token", bos ? bos : "");
    cJSON_AddStringToObject(ctx, "eos_token", eos ? eos : "");
    free(bos);
    free(eos);
    char *json = cJSON_PrintUnformatted(ctx);
    cJSON_Delete(ctx);
    if (!json) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    char *prompt = chat_template_render(chat->tmpl, json, err);
    free(json);
    return prompt;
}

typedef struct reply_buf {
    char *data;
    size_t len, cap;
    const wick_generate_params *user;
} reply_buf;

static bool collect(int32_t token, const char *text, size_t len, void *arg) {
    reply_buf *r = arg;
    if (len > SIZE_MAX - 1 - r->len || !GROW_ARRAY(r->data, r->len + len + 1, &r->cap)) return false;
    memcpy(r->data + r->len, text, len);
    r->len += len;
    r->data[r->len] = 0;
    return r->user->on_token ? r->user->on_token(token, text, len, r->user->user) : true;
}

int wick_chat_send(wick_chat *chat, const char *user_text, const wick_generate_params *p,
                   char **reply, wick_finish *finish, wick_timings *timings, wick_error *err) {
    if (reply) *reply = NULL;
    char *prompt = wick_chat_prompt(chat, user_text, err);
    if (!prompt) return -1;
    /* Special-token text in the rendered prompt maps to its ids; the template
     * itself places BOS where the model wants it. */
    int32_t *ids = NULL;
    size_t n_ids = 0;
    int rc = tok_encode(chat->c->m->tok, prompt, strlen(prompt), false, true, &ids, &n_ids, err);
    free(prompt);
    if (rc < 0) return -1;
    if (n_ids > (size_t)chat->c->n_ctx) {
        free(ids);
        return wick_fail_code(err, WICK_E_TOO_LONG, "conversation is %zu tokens but the context holds %d", n_ids, chat->c->n_ctx);
    }
    reply_buf r = {.user = p};
    wick_generate_params gp = *p;
    gp.on_token = collect;
    gp.user = &r;
    gp.new_message = true;
    gp.n_predict = request_clamp_predict(gp.n_predict, chat->c->n_ctx, (int)n_ids);
    rc = wick_generate(chat->c, ids, (int)n_ids, &gp, NULL, NULL, finish, timings, err);
    free(ids);
    if (rc < 0) {
        free(r.data);
        return -1;
    }
    add_message(chat->messages, "user", user_text);
    add_message(chat->messages, "assistant", r.data ? r.data : "");
    if (reply)
        *reply = r.data;
    else
        free(r.data);
    return 0;
}
