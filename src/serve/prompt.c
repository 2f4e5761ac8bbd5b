/* prompt.c — request prompts to token ids (see prompt.h). Chat goes through
 * the same Jinja renderer as `wick template`; a model without a template of
 * its own is rendered as ChatML; BOS goes first as the model adds it. */
#include "serve/prompt.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "template/chat_template.h"
#include "text/tokenizer.h"

static const tokenizer *tok_of(const wick_model *m) { return wick_model_tokenizer(m); }

static int check_ids(const wick_model *m, const cJSON *arr, int32_t **ids, int *n, fld_error *e) {
    int count = cJSON_GetArraySize(arr);
    int n_vocab = tok_n_vocab(tok_of(m));
    int32_t *out = malloc(sizeof *out * (size_t)(count ? count : 1));
    if (!out) return fld_fail(e, 500, NULL, "out of memory");
    int i = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        /* the range first: casting a double outside int32_t's range is undefined */
        if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble < n_vocab) ||
            it->valuedouble != floor(it->valuedouble)) {
            free(out);
            return fld_fail(e, 400, "prompt", "token ids in \"prompt\" must be integers in [0, %d)", n_vocab);
        }
        out[i++] = (int32_t)it->valuedouble;
    }
    *ids = out;
    *n = i;
    return 0;
}

/* The prompt needs more than max_ids ids (at least at_least): the context
 * error, given before the rest of the text was tokenized. */
static int too_long(fld_error *e, const char *param, int max_ids, size_t at_least) {
    fld_fail(e, 400, param,
             "This model's maximum context length is %d tokens. However, your request has at least %zu input "
             "tokens, which exceeds the available context size. Please reduce the length of the input.",
             max_ids + 1, at_least);
    snprintf(e->code, sizeof e->code, "context_length_exceeded");
    e->no_retry = true;
    e->n_prompt_tokens = at_least > INT_MAX ? INT_MAX : (int)at_least;
    e->n_ctx = max_ids + 1;
    return -1;
}

/* Tokenize (special-token text recognized) with a limit (max_ids 0 = none);
 * the errors name param. */
static int encode(const wick_model *m, const char *text, size_t len, bool add_special, int max_ids,
                  const char *param, int32_t **ids, int *n, fld_error *e) {
    wick_error err;
    size_t n_ids = 0;
    const size_t cap = max_ids > 0 ? (size_t)max_ids : (size_t)INT32_MAX / 2;
    *ids = NULL;
    *n = 0;
    int rc = wick_tokenizer_encode_max(wick_model_tokenizer(m), text, len, add_special, cap, ids, &n_ids, NULL, &err);
    if (rc < 0) return fld_fail_wick(e, &err, param);
    if (rc > 0) {
        if (max_ids > 0) return too_long(e, param, max_ids, n_ids);
        return fld_fail(e, 400, param, "the prompt is too long");
    }
    *n = (int)n_ids;
    return 0;
}

int prompt_text(const wick_model *m, const char *text, bool add_special, int max_ids, int32_t **ids, int *n,
                fld_error *e) {
    return encode(m, text, strlen(text), add_special, max_ids, "prompt", ids, n, e);
}

int prompt_completion_count(const cJSON *p, fld_error *e) {
    if (cJSON_IsString(p)) return 1;
    if (!cJSON_IsArray(p)) return fld_fail(e, 400, "prompt", "\"prompt\" must be a string or an array");
    const int count = cJSON_GetArraySize(p);
    if (count == 0) return fld_fail(e, 400, "prompt", "\"prompt\" is empty");
    const cJSON *first = cJSON_GetArrayItem(p, 0);
    if (cJSON_IsNumber(first)) return 1; /* token ids (check_ids checks each) */
    const cJSON *it;
    cJSON_ArrayForEach(it, p) {
        if (cJSON_IsString(it) != cJSON_IsString(first) || !(cJSON_IsString(it) || cJSON_IsArray(it)))
            return fld_fail(e, 400, "prompt",
                            "\"prompt\" must be a string, token ids, or an array of strings or of token-id arrays (one kind)");
    }
    return count;
}

int prompt_completion_at(const wick_model *m, const cJSON *p, int i, int max_ids, int32_t **ids, int *n, fld_error *e) {
    if (cJSON_IsString(p)) return prompt_text(m, p->valuestring, true, max_ids, ids, n, e);
    if (cJSON_IsNumber(cJSON_GetArrayItem(p, 0))) return check_ids(m, p, ids, n, e);
    const cJSON *it = cJSON_GetArrayItem(p, i);
    if (cJSON_IsString(it)) return prompt_text(m, it->valuestring, true, max_ids, ids, n, e);
    if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 0) return fld_fail(e, 400, "prompt", "prompt %d is empty", i);
    return check_ids(m, it, ids, n, e);
}

int prompt_completion(const wick_model *m, const cJSON *p, int max_ids, int32_t **ids, int *n, fld_error *e) {
    const int count = prompt_completion_count(p, e);
    if (count < 0) return -1;
    if (count > 1) return fld_fail(e, 400, "prompt", "only one prompt is taken here");
    return prompt_completion_at(m, p, 0, max_ids, ids, n, e);
}

/* A message's content as the template sees it: a string (or null). */
static int norm_content(cJSON *msg, int i, fld_error *e) {
    cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const cJSON *imgs = cJSON_GetObjectItemCaseSensitive(msg, "images");
    if (cJSON_IsArray(imgs) && cJSON_GetArraySize(imgs) > 0)
        return fld_fail(e, 400, "messages", "messages[%d]: images are not supported by this server", i);
    if (!c || cJSON_IsNull(c) || cJSON_IsString(c)) return 0;
    if (!cJSON_IsArray(c))
        return fld_fail(e, 400, "messages", "messages[%d].content must be a string or an array of parts", i);
    wbuf s = {0};
    int k = 0;
    const cJSON *part;
    cJSON_ArrayForEach(part, c) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(part, "type");
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(part, "text");
        if (cJSON_IsString(part)) text = part;
        else if (!cJSON_IsString(type) || strcmp(type->valuestring, "text") != 0 || !cJSON_IsString(text)) {
            wbuf_free(&s);
            return fld_fail(e, 400, "messages", "messages[%d]: only text content parts are supported", i);
        }
        if (k++) wbuf_put(&s, "\n", 1);
        wbuf_puts(&s, text->valuestring);
    }
    char *joined = wbuf_take(&s, NULL);
    if (!joined) return fld_fail(e, 500, NULL, "out of memory");
    cJSON_ReplaceItemInObjectCaseSensitive(msg, "content", cJSON_CreateString(joined));
    free(joined);
    return 0;
}

static char *token_text(const tokenizer *t, int32_t id) {
    size_t len = 0;
    const char *s = id >= 0 ? tok_token_text(t, id, &len) : NULL;
    return s ? strndup(s, len) : strdup("");
}

/* The variables llama-server gives every template before the request's
 * chat_template_kwargs: today's date as date_string ("03 Dec 2026", Llama
 * 3.x's system header) and datetime ("Dec 03 2026", FireFunction's), and
 * enable_thinking to a template that reads it (true unless --reasoning off;
 * Qwen3, QwQ and DeepSeek-R1 as llama.cpp ships them close the think block
 * at once when it is false). */
static void template_defaults(cJSON *ctx, const char *tmpl, bool reasoning_off) {
    const time_t now = time(NULL);
    struct tm tm;
    char buf[64];
    if (localtime_r(&now, &tm)) {
        if (strftime(buf, sizeof buf, "%d %b %Y", &tm)) cJSON_AddStringToObject(ctx, "date_string", buf);
        if (strftime(buf, sizeof buf, "%b %d %Y", &tm)) cJSON_AddStringToObject(ctx, "datetime", buf);
    }
    if (strstr(tmpl, "enable_thinking")) cJSON_AddBoolToObject(ctx, "enable_thinking", !reasoning_off);
}

/* The last message when it is an assistant's with text (a string, or text
 * parts) to continue: llama-server's prefill; NULL otherwise. */
static const cJSON *prefill_message(const cJSON *messages) {
    const cJSON *last = cJSON_IsArray(messages) && messages->child ? messages->child->prev : NULL;
    const cJSON *role = last ? cJSON_GetObjectItemCaseSensitive(last, "role") : NULL;
    if (!cJSON_IsString(role) || strcmp(role->valuestring, "assistant")) return NULL;
    const cJSON *calls = cJSON_GetObjectItemCaseSensitive(last, "tool_calls");
    if (cJSON_IsArray(calls) && calls->child) return NULL; /* a call is rendered as the template writes it */
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(last, "content");
    if (cJSON_IsString(c)) return last;
    if (!cJSON_IsArray(c) || !c->child) return NULL;
    const cJSON *p;
    cJSON_ArrayForEach(p, c) {
        if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(p, "text"))) return NULL;
    }
    return last;
}

/* Append the prefill message's text (its parts joined as they are). */
static int append_prefill(const cJSON *msg, char **out, size_t *len) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const cJSON *p = cJSON_IsString(c) ? c : c->child;
    for (; p; p = cJSON_IsString(c) ? NULL : p->next) {
        const char *s = cJSON_IsString(p) ? p->valuestring : cJSON_GetObjectItemCaseSensitive(p, "text")->valuestring;
        const size_t k = strlen(s);
        char *t = realloc(*out, *len + k + 1);
        if (!t) return -1;
        memcpy(t + *len, s, k + 1);
        *out = t;
        *len += k;
    }
    return 0;
}

int prompt_template_text(const wick_model *m, const prompt_chat_opts *o, char **text, size_t *text_len, fld_error *e) {
    const tokenizer *t = tok_of(m);
    *text = NULL;
    *text_len = 0;
    if (!cJSON_IsArray(o->messages)) return fld_fail(e, 400, "messages", "\"messages\" must be an array");
    cJSON *ctx = cJSON_CreateObject();
    cJSON *msgs = cJSON_CreateArray();
    if (!ctx || !msgs) {
        cJSON_Delete(ctx);
        cJSON_Delete(msgs);
        return fld_fail(e, 500, NULL, "out of memory");
    }
    cJSON_AddItemToObject(ctx, "messages", msgs);
    if (o->system && *o->system) {
        cJSON *s = cJSON_CreateObject();
        cJSON_AddStringToObject(s, "role", "system");
        cJSON_AddStringToObject(s, "content", o->system);
        cJSON_AddItemToArray(msgs, s);
    }
    int i = 0;
    const cJSON *msg;
    prompt_history hist = {0};
    const cJSON *prefill = o->prefill_assistant ? prefill_message(o->messages) : NULL;
    if (prefill && prefill != o->messages->child) { /* which of two trailing replies would be continued? */
        const cJSON *before = cJSON_GetObjectItemCaseSensitive(prefill->prev, "role");
        if (cJSON_IsString(before) && strcmp(before->valuestring, "assistant") == 0) {
            cJSON_Delete(ctx);
            return fld_fail(e, 400, "messages", "the messages end with two assistant messages; the last one is "
                                                "continued (prefilled), so only one may end the list");
        }
    }
    cJSON_ArrayForEach(msg, o->messages) {
        if (msg == prefill) break;
        const cJSON *role = cJSON_GetObjectItemCaseSensitive(msg, "role");
        if (!cJSON_IsObject(msg) || !cJSON_IsString(role)) {
            cJSON_Delete(ctx);
            return fld_fail(e, 400, "messages", "messages[%d] must be an object with a string \"role\"", i);
        }
        cJSON *copy = cJSON_Duplicate(msg, 1);
        if (!copy) {
            cJSON_Delete(ctx);
            return fld_fail(e, 500, NULL, "out of memory");
        }
        cJSON_AddItemToArray(msgs, copy);
        if (norm_content(copy, i, e) < 0 || prompt_history_norm(copy, i, &hist, e) < 0) {
            cJSON_Delete(ctx);
            return -1;
        }
        i++;
    }
    const char *tmpl = o->tmpl ? o->tmpl : tok_chat_template(t);
    if (!tmpl) tmpl = chat_template_builtin("chatml"); /* a model without a template of its own */
    template_defaults(ctx, tmpl, o->reasoning_off);
    if (o->kwargs) {
        const cJSON *kv;
        cJSON_ArrayForEach(kv, o->kwargs) {
            if (!kv->string || !strcmp(kv->string, "messages")) continue;
            cJSON_DeleteItemFromObjectCaseSensitive(ctx, kv->string);
            cJSON_AddItemToObject(ctx, kv->string, cJSON_Duplicate(kv, 1));
        }
    }
    if (o->tools && !cJSON_GetObjectItemCaseSensitive(ctx, "tools"))
        cJSON_AddItemToObject(ctx, "tools", cJSON_Duplicate(o->tools, 1));
    if (!cJSON_GetObjectItemCaseSensitive(ctx, "add_generation_prompt"))
        cJSON_AddBoolToObject(ctx, "add_generation_prompt",
                              prefill || (o->add_generation_prompt && !o->continue_final_message));
    char *bos = token_text(t, tok_bos(t)), *eos = token_text(t, tok_eos(t));
    cJSON_AddStringToObject(ctx, "bos_token", bos ? bos : "");
    cJSON_AddStringToObject(ctx, "eos_token", eos ? eos : "");
    free(eos);
    free(bos);
    if (prompt_fold_system(tmpl, ctx, e) < 0) {
        cJSON_Delete(ctx);
        return -1;
    }
    wick_error err;
    size_t len = 0;
    char *out = chat_template_render_cjson(tmpl, ctx, &len, &err);
    cJSON_Delete(ctx);
    if (!out) return fld_fail_wick(e, &err, "messages");
    if (prefill && append_prefill(prefill, &out, &len) < 0) {
        free(out);
        return fld_fail(e, 500, NULL, "out of memory");
    }
    if (o->continue_final_message && i > 0) {
        /* end the prompt right after the last message's text, so the reply continues it */
        const cJSON *last = cJSON_GetArrayItem(o->messages, i - 1);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(last, "content");
        if (cJSON_IsString(c) && c->valuestring[0]) {
            size_t cl = strlen(c->valuestring);
            for (size_t k = len; k >= cl; k--)
                if (memcmp(out + k - cl, c->valuestring, cl) == 0) {
                    len = k;
                    out[len] = 0;
                    break;
                }
        }
    }
    *text = out;
    *text_len = len;
    return 0;
}

/* BOS as llama-server adds it: it tokenizes every chat prompt with the
 * model's add-BOS setting, whatever wrote the template (the model's own, a
 * built-in or a given text). A template that already wrote BOS first keeps
 * its one; it is not doubled. */
int prompt_with_bos(const wick_model *m, char **text, size_t *len, fld_error *e) {
    const tokenizer *t = tok_of(m);
    if (!tok_adds_bos(t)) return 0;
    char *bos = token_text(t, tok_bos(t));
    if (!bos) return fld_fail(e, 500, NULL, "out of memory");
    const size_t k = strlen(bos);
    if (!k || (*len >= k && memcmp(*text, bos, k) == 0)) {
        free(bos);
        return 0;
    }
    char *with = malloc(k + *len + 1);
    if (!with) {
        free(bos);
        return fld_fail(e, 500, NULL, "out of memory");
    }
    memcpy(with, bos, k);
    memcpy(with + k, *text, *len);
    with[k + *len] = 0;
    free(bos);
    free(*text);
    *text = with;
    *len += k;
    return 0;
}

int prompt_render(const wick_model *m, const prompt_chat_opts *o, char **text, size_t *len, fld_error *e) {
    if (prompt_template_text(m, o, text, len, e) < 0) return -1;
    if (prompt_with_bos(m, text, len, e) < 0) {
        free(*text);
        *text = NULL;
        *len = 0;
        return -1;
    }
    return 0;
}

int prompt_apply_template(const wick_model *m, const prompt_chat_opts *o, char **text, size_t *len, fld_error *e) {
    if (prompt_template_text(m, o, text, len, e) < 0) return -1;
    const tokenizer *t = tok_of(m);
    if (!tok_adds_bos(t)) return 0;
    char *bos = token_text(t, tok_bos(t));
    if (!bos) return 0;
    const size_t k = strlen(bos);
    if (k && *len >= k && memcmp(*text, bos, k) == 0) { /* tokenization adds it back */
        memmove(*text, *text + k, *len - k + 1);
        *len -= k;
    }
    free(bos);
    return 0;
}

int prompt_encode(const wick_model *m, const char *text, size_t len, int max_ids, int32_t **ids, int *n,
                  fld_error *e) {
    return encode(m, text, len, false, max_ids, "messages", ids, n, e);
}

int prompt_chat(const wick_model *m, const prompt_chat_opts *o, int32_t **ids, int *n, char **text,
                fld_error *e) {
    if (text) *text = NULL;
    char *out = NULL;
    size_t len = 0;
    if (prompt_render(m, o, &out, &len, e) < 0) return -1;
    if (prompt_encode(m, out, len, o->max_ids, ids, n, e) < 0) {
        free(out);
        return -1;
    }
    if (text) *text = out;
    else free(out);
    return 0;
}

void prompt_piece(const wick_model *m, int32_t id, wbuf *out) {
    char buf[256];
    int l = wick_token_piece(m, id, buf, sizeof buf);
    if (l < 0) return;
    if ((size_t)l <= sizeof buf) {
        wbuf_put(out, buf, (size_t)l);
        return;
    }
    char *big = malloc((size_t)l);
    if (big && wick_token_piece(m, id, big, (size_t)l) == l) wbuf_put(out, big, (size_t)l);
    free(big);
}

/* The fill-in-the-middle tokens of a model: Qwen2.5-Coder's, StarCoder's,
 * CodeLlama's; false when it has none. */
static bool fim_tokens(const tokenizer *t, int32_t ids[3]) {
    static const char *const sets[][3] = {
        {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>"},
        {"<fim_prefix>", "<fim_suffix>", "<fim_middle>"},
        {"<PRE>", "<SUF>", "<MID>"},
        {"\xe2\x96\x81<PRE>", "\xe2\x96\x81<SUF>", "\xe2\x96\x81<MID>"},
    };
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        for (int i = 0; i < 3; i++) ids[i] = tok_find(t, sets[k][i]);
        if (ids[0] >= 0 && ids[1] >= 0 && ids[2] >= 0) return true;
    }
    return false;
}

int prompt_fim(const wick_model *m, const char *prefix, const char *suffix, int max_ids, int32_t **ids, int *n,
               fld_error *e) {
    const tokenizer *t = tok_of(m);
    int32_t fim[3];
    *ids = NULL;
    *n = 0;
    if (!fim_tokens(t, fim))
        return fld_fail(e, 400, "suffix", "\"suffix\" needs a model with fill-in-the-middle tokens (<|fim_prefix|>, <fim_prefix> or <PRE>); this one has none");
    int32_t *a = NULL, *b = NULL;
    int na = 0, nb = 0;
    if (encode(m, prefix, strlen(prefix), false, max_ids, "prompt", &a, &na, e) < 0) return -1;
    if (encode(m, suffix, strlen(suffix), false, max_ids, "suffix", &b, &nb, e) < 0) {
        free(a);
        return -1;
    }
    const int32_t bos = tok_adds_bos(t) ? tok_bos(t) : -1;
    const int total = na + nb + 3 + (bos >= 0);
    int32_t *out = malloc(sizeof *out * (size_t)total);
    if (!out) {
        free(a);
        free(b);
        return fld_fail(e, 500, NULL, "out of memory");
    }
    int k = 0;
    if (bos >= 0) out[k++] = bos;
    out[k++] = fim[0]; /* prefix, suffix, middle: the order these models were trained on */
    memcpy(out + k, a, sizeof *a * (size_t)na);
    k += na;
    out[k++] = fim[1];
    memcpy(out + k, b, sizeof *b * (size_t)nb);
    k += nb;
    out[k++] = fim[2];
    free(a);
    free(b);
    if (max_ids > 0 && k > max_ids) {
        free(out);
        return too_long(e, "prompt", max_ids, (size_t)k);
    }
    *ids = out;
    *n = k;
    return 0;
}
