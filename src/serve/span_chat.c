/* span_chat.c — a chat conversation with "span": true messages to a span
 * request's segments (see span_chat.h), by rendering prefixes of the
 * conversation and taking the text each part adds. */
#include "serve/span_chat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"

int span_chat_detect(const cJSON *messages, fld_error *e) {
    int found = 0, i = 0;
    const cJSON *msg;
    cJSON_ArrayForEach(msg, messages) {
        const cJSON *s = cJSON_IsObject(msg) ? cJSON_GetObjectItemCaseSensitive(msg, "span") : NULL;
        if (s && !cJSON_IsNull(s) && !cJSON_IsBool(s))
            return fld_fail(e, 400, "messages", "messages[%d].span must be true or false", i);
        if (cJSON_IsTrue(s)) found = 1;
        i++;
    }
    return found;
}

/* Render messages all[from..to) (references into all) with o's other options. */
static int render(const wick_model *m, const prompt_chat_opts *o, cJSON *all, int from, int to, int extra, bool gen,
                  char **text, size_t *len, fld_error *e) {
    cJSON *sub = cJSON_CreateArray();
    if (!sub) return fld_fail(e, 500, NULL, "out of memory");
    for (int i = from; i < to; i++) cJSON_AddItemReferenceToArray(sub, cJSON_GetArrayItem(all, i));
    if (extra >= 0) cJSON_AddItemReferenceToArray(sub, cJSON_GetArrayItem(all, extra));
    prompt_chat_opts so = *o;
    so.messages = sub;
    so.add_generation_prompt = gen;
    so.continue_final_message = false;
    int rc = prompt_render(m, &so, text, len, e);
    cJSON_Delete(sub); /* the references only */
    return rc;
}

static int cannot_split(fld_error *e, const char *what) {
    return fld_fail(e, 400, "messages",
                    "the model's chat template cannot split this conversation into spans: %s (span messages are "
                    "rendered on their own after the messages before the first span, and the template must render "
                    "each part as a continuation of the text before it)",
                    what);
}

static bool starts_with(const char *s, size_t len, const char *pre, size_t plen) {
    return len >= plen && memcmp(s, pre, plen) == 0;
}

int span_chat_build(const wick_model *m, const prompt_chat_opts *o, span_req *r, fld_error *e) {
    if (o->continue_final_message)
        return fld_fail(e, 400, "continue_final_message", "\"continue_final_message\" does not combine with span messages");
    const int n = cJSON_GetArraySize(o->messages);
    int first = -1, last = -1;
    for (int i = 0; i < n; i++) {
        const cJSON *msg = cJSON_GetArrayItem(o->messages, i);
        if (!cJSON_IsObject(msg)) continue; /* prompt_render names it */
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "span"))) continue;
        if (first < 0) first = i;
        else if (last != i - 1)
            return fld_fail(e, 400, "messages",
                            "messages[%d]: span messages must be consecutive (messages[%d] between spans is not a span)",
                            i, last + 1);
        last = i;
    }
    if (first < 0) return fld_fail(e, 400, "messages", "no message has \"span\": true");
    if (last - first + 1 > SPAN_REQ_MAX_SPANS)
        return fld_fail(e, 400, "messages", "too many span messages (%d): at most %d per request", last - first + 1,
                        SPAN_REQ_MAX_SPANS);
    /* the messages as the template sees them: without our "span" key */
    cJSON *all = cJSON_Duplicate(o->messages, 1);
    if (!all) return fld_fail(e, 500, NULL, "out of memory");
    cJSON *it;
    cJSON_ArrayForEach(it, all) if (cJSON_IsObject(it)) cJSON_DeleteItemFromObjectCaseSensitive(it, "span");

    int rc = -1;
    char *p = NULL, *t = NULL, *joined = NULL, *full = NULL;
    size_t plen = 0, tlen = 0, jlen = 0, jcap = 0, flen = 0;
    /* P: a template that cannot render an empty conversation gives P = "" (BOS alone) */
    if (render(m, o, all, 0, first, -1, false, &p, &plen, e) < 0) {
        if (first > 0) goto done;
        p = strdup("");
        plen = 0;
        if (!p) {
            fld_fail(e, 500, NULL, "out of memory");
            goto done;
        }
        if (prompt_with_bos(m, &p, &plen, e) < 0) goto done; /* BOS stays out of the first span */
    }
    if (prompt_encode(m, p, plen, 0, &r->prefix, &r->n_prefix, e) < 0) goto done;
    /* P ++ every span's text, to check the spans rendered together against */
    jcap = plen + 1;
    if (!(joined = malloc(jcap))) {
        fld_fail(e, 500, NULL, "out of memory");
        goto done;
    }
    memcpy(joined, p, plen);
    jlen = plen;
    for (int k = first; k <= last; k++) {
        free(t);
        t = NULL;
        if (render(m, o, all, 0, first, k, false, &t, &tlen, e) < 0) goto done;
        if (!starts_with(t, tlen, p, plen)) {
            char what[120];
            snprintf(what, sizeof what, "messages[%d] rendered after the earlier messages does not begin with their text", k);
            cannot_split(e, what);
            goto done;
        }
        const size_t sl = tlen - plen;
        char what[40];
        snprintf(what, sizeof what, "messages[%d]", k);
        int32_t *ids = NULL;
        int ni = 0;
        if (prompt_encode(m, t + plen, sl, 0, &ids, &ni, e) < 0 || span_req_add(r, ids, ni, "messages", what, e) < 0)
            goto done;
        if (!GROW_ARRAY(joined, jlen + sl + 1, &jcap)) {
            fld_fail(e, 500, NULL, "out of memory");
            goto done;
        }
        memcpy(joined + jlen, t + plen, sl);
        jlen += sl;
    }
    /* the spans rendered together must be the spans rendered alone, one after another */
    free(t);
    t = NULL;
    if (render(m, o, all, 0, last + 1, -1, false, &t, &tlen, e) < 0) goto done;
    if (tlen != jlen || memcmp(t, joined, jlen) != 0) {
        cannot_split(e, "the span messages rendered together differ from each one rendered on its own");
        goto done;
    }
    /* Q: the rest of the conversation, generation prompt included */
    if (render(m, o, all, 0, n, -1, o->add_generation_prompt, &full, &flen, e) < 0) goto done;
    if (!starts_with(full, flen, t, tlen)) {
        cannot_split(e, "the whole conversation does not begin with the text of the messages up to the last span");
        goto done;
    }
    rc = prompt_encode(m, full + tlen, flen - tlen, 0, &r->suffix, &r->n_suffix, e);
    if (rc == 0 && r->n_suffix == 0)
        rc = fld_fail(e, 400, "messages",
                      "nothing follows the last span message: add a message after the spans or the generation prompt "
                      "(the last token after the spans gives the first new token)");
done:
    free(p);
    free(t);
    free(joined);
    free(full);
    cJSON_Delete(all);
    return rc;
}
