/* prompt_system.c — system messages for a template without a system role
 * (Gemma's raises "System role not supported", others drop the text): as
 * llama.cpp's chat-template polyfill, the template is probed with a system
 * message, and when it raises or leaves the system text out, each system
 * message is folded into the user message after it. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "serve/prompt.h"
#include "template/chat_template.h"

static const char SYS_NEEDLE[] = "<System Needle>";

static cJSON *message(const char *role, const char *content) {
    cJSON *m = cJSON_CreateObject();
    if (!m) return NULL;
    cJSON_AddStringToObject(m, "role", role);
    cJSON_AddStringToObject(m, "content", content);
    return m;
}

/* A system message then a user message, rendered with ctx's bos/eos tokens:
 * does the system text come out? A template that raises does not take one. */
static bool takes_system(const char *tmpl, const cJSON *ctx, bool *oom) {
    cJSON *probe = cJSON_CreateObject(), *msgs = cJSON_CreateArray();
    if (!probe || !msgs) {
        cJSON_Delete(probe);
        cJSON_Delete(msgs);
        *oom = true;
        return true;
    }
    cJSON_AddItemToObject(probe, "messages", msgs);
    cJSON_AddItemToArray(msgs, message("system", SYS_NEEDLE));
    cJSON_AddItemToArray(msgs, message("user", "<User Needle>"));
    cJSON_AddBoolToObject(probe, "add_generation_prompt", false);
    static const char *const keep[] = {"bos_token", "eos_token"};
    for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(ctx, keep[k]);
        if (v) cJSON_AddItemToObject(probe, keep[k], cJSON_Duplicate(v, 1));
    }
    wick_error err;
    char *out = chat_template_render_cjson(tmpl, probe, NULL, &err);
    cJSON_Delete(probe);
    const bool yes = out && strstr(out, SYS_NEEDLE);
    free(out);
    return yes;
}

static bool is_role(const cJSON *msg, const char *role) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(msg, "role");
    return cJSON_IsString(r) && !strcmp(r->valuestring, role);
}

static const char *text_of(const cJSON *msg) {
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(msg, "content");
    return cJSON_IsString(c) ? c->valuestring : NULL;
}

int prompt_fold_system(const char *tmpl, cJSON *ctx, fld_error *e) {
    cJSON *msgs = cJSON_GetObjectItemCaseSensitive(ctx, "messages");
    bool any = false;
    const cJSON *it;
    cJSON_ArrayForEach(it, msgs) any = any || (is_role(it, "system") && text_of(it));
    if (!any) return 0;
    bool oom = false;
    if (takes_system(tmpl, ctx, &oom)) return oom ? fld_fail(e, 500, NULL, "out of memory") : 0;
    /* system texts gather (one per line) until a message takes them: a user
     * message as its first lines, or before any other a user message of their own */
    cJSON *out = cJSON_CreateArray();
    if (!out) return fld_fail(e, 500, NULL, "out of memory");
    wbuf pending = {0};
    cJSON *msg = msgs->child;
    while (msg) {
        cJSON *next = msg->next;
        const char *text = text_of(msg);
        cJSON_DetachItemViaPointer(msgs, msg);
        if (text && is_role(msg, "system")) {
            if (pending.len) wbuf_put(&pending, "\n", 1);
            wbuf_puts(&pending, text);
            cJSON_Delete(msg);
            msg = next;
            continue;
        }
        if (pending.len && is_role(msg, "user") && cJSON_IsString(cJSON_GetObjectItemCaseSensitive(msg, "content"))) {
            if (*text) {
                wbuf_put(&pending, "\n", 1);
                wbuf_puts(&pending, text);
            }
            char *joined = wbuf_take(&pending, NULL);
            cJSON_ReplaceItemInObjectCaseSensitive(msg, "content", cJSON_CreateString(joined ? joined : ""));
            free(joined);
        } else if (pending.len) {
            char *joined = wbuf_take(&pending, NULL);
            cJSON_AddItemToArray(out, message("user", joined ? joined : ""));
            free(joined);
        }
        cJSON_AddItemToArray(out, msg);
        msg = next;
    }
    if (pending.len) {
        char *joined = wbuf_take(&pending, NULL);
        cJSON_AddItemToArray(out, message("user", joined ? joined : ""));
        free(joined);
    }
    wbuf_free(&pending);
    cJSON_ReplaceItemInObjectCaseSensitive(ctx, "messages", out);
    return 0;
}
