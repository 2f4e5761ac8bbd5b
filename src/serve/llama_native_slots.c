/* llama_native_slots.c — llama-server's slots over wick's scheduler:
 * GET /slots and POST /slots/{id}?action=save|restore|erase.
 *
 * Wick's scheduler places each request on a free sequence itself (the one
 * with the longest cached prefix) and shares KV between sequences by
 * content (the automatic prefix cache). A slot here is the server's record
 * of the last request filed under it (id_slot, or the free record whose
 * tokens share the longest prefix with the prompt): its prompt and output
 * ids, settings and state. What llama-server does with a slot's KV maps
 * onto the prefix cache:
 *   save     writes the slot's tokens and the model's identity to
 *            slot_save_path/FILENAME (a small JSON file). The KV itself is
 *            not copied: it stays in the prefix cache, and with --cache-dir
 *            its blocks reach the cache folder when they are evicted or the
 *            model unloads, as every cached block does.
 *   restore  reads such a file and prefills its tokens (a prefill-only
 *            request): blocks still cached or in the cache folder are
 *            reused, the rest is computed; either way the prefix cache then
 *            holds them, so the next request with that prefix is served
 *            from cache. The answer counts the tokens restored.
 *   erase    forgets the slot's record and drops the cached KV of its
 *            tokens from the prefix cache and the cache folder (a block a
 *            running request holds stays with that request), so the next
 *            request with that prompt computes it again. Outputs never
 *            depend on caching. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/clock.h"
#include "serve/llama_native.h"
#include "serve/openai.h"
#include "serve/sampling_base.h"
#include "text/tokenizer.h"

#define SLOT_FORMAT "wick-slot"
#define SLOT_VERSION 1

ln_slots *ln_slots_new(int n) {
    ln_slots *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n = n > 0 ? n : 1;
    t->v = calloc((size_t)t->n, sizeof *t->v);
    if (!t->v) {
        free(t);
        return NULL;
    }
    for (int i = 0; i < t->n; i++) t->v[i].id = i;
    pthread_mutex_init(&t->mu, NULL);
    return t;
}

void ln_slots_free(ln_slots *t) {
    if (!t) return;
    for (int i = 0; i < t->n; i++) {
        free(t->v[i].tokens);
        free(t->v[i].settings);
        free(t->v[i].prompt);
    }
    pthread_mutex_destroy(&t->mu);
    free(t->v);
    free(t);
}

static int common_prefix(const int32_t *a, int na, const int32_t *b, int nb) {
    int k = 0;
    while (k < na && k < nb && a[k] == b[k]) k++;
    return k;
}

int ln_slot_take(serve_server *s, int want, const char *model, int n_ctx, const int32_t *ids, int n, fld_error *e) {
    ln_slots *t = s->slots;
    if (!t) return fld_fail(e, 500, NULL, "no slot table");
    if (want >= t->n) return fld_fail(e, 400, "id_slot", "id_slot %d does not exist (the server has %d slots)", want, t->n);
    pthread_mutex_lock(&t->mu);
    int best = want;
    if (best < 0) {
        int best_len = -1;
        for (int i = 0; i < t->n; i++) {
            const ln_slot *sl = &t->v[i];
            if (sl->busy) continue;
            const int k = strcmp(sl->model, model) == 0 ? common_prefix(sl->tokens, sl->n_tokens, ids, n) : 0;
            if (k > best_len) best = i, best_len = k;
        }
        if (best < 0) best = 0; /* every record busy: the request is filed under slot 0 too */
    }
    ln_slot *sl = &t->v[best];
    sl->busy++;
    snprintf(sl->model, sizeof sl->model, "%s", model);
    sl->n_ctx = n_ctx;
    sl->n_decoded = 0;
    sl->task_id = t->next_task++;
    pthread_mutex_unlock(&t->mu);
    return best;
}

void ln_slot_done(serve_server *s, int id, const int32_t *ids, int n_prompt, const int32_t *gen, int n_gen,
                  const char *settings, const char *prompt) {
    ln_slots *t = s->slots;
    if (!t || id < 0 || id >= t->n) return;
    pthread_mutex_lock(&t->mu);
    ln_slot *sl = &t->v[id];
    if (sl->busy > 0) sl->busy--;
    if (ids) {
        int32_t *v = malloc(sizeof *v * (size_t)(n_prompt + n_gen + 1));
        if (v) {
            memcpy(v, ids, sizeof *v * (size_t)n_prompt);
            if (n_gen) memcpy(v + n_prompt, gen, sizeof *v * (size_t)n_gen);
            free(sl->tokens);
            sl->tokens = v;
            sl->n_tokens = n_prompt + n_gen;
            sl->n_prompt = n_prompt;
            sl->n_decoded = n_gen;
        }
        if (settings) {
            free(sl->settings);
            sl->settings = strdup(settings);
        }
        free(sl->prompt);
        sl->prompt = prompt ? strdup(prompt) : NULL;
    }
    pthread_mutex_unlock(&t->mu);
}

static void reply_err(http_call *c, int status, const char *type, const char *msg) {
    fld_error e = {0};
    fld_fail(&e, status, NULL, "%s", msg);
    if (type) snprintf(e.code, sizeof e.code, "%s", type);
    reply_openai_error(c, &e);
}

/* The default model's context when it is loaded, else 0. */
static int default_n_ctx(serve_server *s) {
    mpool_info info[64];
    const int n = mpool_list(s->pool, info, 64);
    const char *def = mpool_default_name(s->pool);
    for (int i = 0; i < n; i++)
        if (def && strcmp(info[i].name, def) == 0) return info[i].loaded ? info[i].n_ctx : 0;
    return 0;
}

void ln_slots_get(serve_server *s, http_call *c) {
    if (s->cfg.no_slots) {
        reply_err(c, 501, "not_supported_error", "This server does not support slots endpoint. Start it with `--slots`");
        return;
    }
    ln_slots *t = s->slots;
    const char *fail = http_query(c, "fail_on_no_slot");
    const int def_ctx = default_n_ctx(s);
    cJSON *a = cJSON_CreateArray();
    int n_idle = 0;
    pthread_mutex_lock(&t->mu);
    for (int i = 0; i < t->n; i++) {
        const ln_slot *sl = &t->v[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", sl->id);
        cJSON_AddNumberToObject(o, "n_ctx", sl->n_ctx ? sl->n_ctx : def_ctx);
        cJSON_AddBoolToObject(o, "speculative", false);
        cJSON_AddBoolToObject(o, "is_processing", sl->busy > 0);
        cJSON_AddBoolToObject(o, "non_causal", false);
        cJSON_AddNumberToObject(o, "n_prompt_tokens", sl->n_prompt);
        n_idle += sl->busy == 0;
        /* as llama-server: a slot that has served no task has no task,
         * params, prompt or next token to show */
        if (sl->model[0]) {
            cJSON_AddNumberToObject(o, "id_task", (double)sl->task_id);
            cJSON *params = sl->settings ? cJSON_Parse(sl->settings) : NULL;
            cJSON_AddItemToObject(o, "params", params ? params : cJSON_CreateObject());
            cJSON_AddStringToObject(o, "prompt", sl->prompt ? sl->prompt : "");
            cJSON_AddStringToObject(o, "model", sl->model);
            cJSON *nt = cJSON_AddObjectToObject(o, "next_token");
            cJSON_AddBoolToObject(nt, "has_next_token", sl->busy > 0);
            cJSON_AddBoolToObject(nt, "has_new_line", false);
            cJSON_AddNumberToObject(nt, "n_remain", -1);
            cJSON_AddNumberToObject(nt, "n_decoded", sl->n_decoded);
            cJSON_AddStringToObject(nt, "stopping_word", "");
        }
        cJSON_AddItemToArray(a, o);
    }
    pthread_mutex_unlock(&t->mu);
    if (fail && strcmp(fail, "0") != 0 && strcmp(fail, "false") != 0 && n_idle == 0) {
        cJSON_Delete(a);
        reply_err(c, 503, "unavailable_error", "no slot available");
        return;
    }
    reply_json(c, 200, a);
}

/* A file name inside slot_save_path: no separators, not "." or "..", no
 * control characters, not empty, at most 255 bytes. */
static bool filename_ok(const char *f) {
    const size_t n = strlen(f);
    if (n == 0 || n > 255 || strcmp(f, ".") == 0 || strcmp(f, "..") == 0 || f[0] == '.') return false;
    for (const unsigned char *p = (const unsigned char *)f; *p; p++)
        if (*p == '/' || *p == '\\' || *p < 0x20 || *p == 0x7f || *p == ':') return false;
    return true;
}

static int slot_path(serve_server *s, const cJSON *b, char *out, size_t cap, const char **name, http_call *c) {
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(b, "filename");
    if (!cJSON_IsString(f)) {
        reply_err(c, 400, "invalid_request_error", "\"filename\" is required (a string)");
        return -1;
    }
    if (!filename_ok(f->valuestring)) {
        reply_err(c, 400, "invalid_request_error", "Invalid filename");
        return -1;
    }
    *name = f->valuestring;
    snprintf(out, cap, "%s/%s", s->cfg.slot_save_path, f->valuestring);
    return 0;
}

static void slot_save(serve_server *s, http_call *c, int id, const cJSON *b) {
    char path[4096];
    const char *name;
    if (slot_path(s, b, path, sizeof path, &name, c) < 0) return;
    const double t0 = wick_now_ms();
    ln_slots *t = s->slots;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "format", SLOT_FORMAT);
    cJSON_AddNumberToObject(j, "version", SLOT_VERSION);
    pthread_mutex_lock(&t->mu);
    const ln_slot *sl = &t->v[id];
    /* the tokens whose KV the slot holds: the last generated one was never fed */
    const int n = sl->n_tokens > sl->n_prompt ? sl->n_tokens - 1 : sl->n_tokens;
    cJSON_AddStringToObject(j, "model", sl->model);
    cJSON_AddNumberToObject(j, "n_ctx", sl->n_ctx);
    cJSON_AddNumberToObject(j, "n_prompt", sl->n_prompt);
    cJSON *a = cJSON_AddArrayToObject(j, "tokens");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(sl->tokens[i]));
    const bool busy = sl->busy > 0;
    pthread_mutex_unlock(&t->mu);
    if (busy) {
        cJSON_Delete(j);
        reply_err(c, 503, "unavailable_error", "the slot is processing a request; save it when it is idle");
        return;
    }
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    mkdir(s->cfg.slot_save_path, 0700);
    FILE *f = text ? fopen(path, "wb") : NULL;
    size_t len = text ? strlen(text) : 0;
    const bool ok = f && fwrite(text, 1, len, f) == len;
    if (f && fclose(f) != 0) f = NULL;
    free(text);
    if (!ok || !f) {
        char msg[512];
        snprintf(msg, sizeof msg, "could not write the slot file %s (%s)", name, strerror(errno));
        reply_err(c, 500, "server_error", msg);
        return;
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "id_slot", id);
    cJSON_AddStringToObject(r, "filename", name);
    cJSON_AddNumberToObject(r, "n_saved", n);
    cJSON_AddNumberToObject(r, "n_written", (double)len);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(r, "timings"), "save_ms", wick_now_ms() - t0);
    reply_json(c, 200, r);
}

/* The file's tokens (malloc'd) and model; -1 with a message. */
static int read_slot_file(const char *path, char *model, size_t cap, int32_t **ids, int *n, size_t *bytes, char *msg,
                          size_t mcap) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(msg, mcap, "Failed to load slot file: %s", strerror(errno));
        return -1;
    }
    wbuf b = {0};
    char chunk[65536];
    size_t k;
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0 && b.len < (256u << 20)) wbuf_put(&b, chunk, k);
    fclose(f);
    *bytes = b.len;
    cJSON *j = b.data ? cJSON_ParseWithLength(b.data, b.len) : NULL;
    wbuf_free(&b);
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(j, "format"), *ver = cJSON_GetObjectItemCaseSensitive(j, "version");
    const cJSON *mod = cJSON_GetObjectItemCaseSensitive(j, "model"), *toks = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    int rc = -1;
    if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, SLOT_FORMAT) != 0 || !cJSON_IsString(mod) || !cJSON_IsArray(toks)) {
        snprintf(msg, mcap, "invalid slot save file (not one wick wrote)");
    } else if (!cJSON_IsNumber(ver) || ver->valuedouble != SLOT_VERSION) {
        snprintf(msg, mcap, "Unsupported slot file version");
    } else {
        const int cnt = cJSON_GetArraySize(toks);
        int32_t *v = malloc(sizeof *v * (size_t)(cnt ? cnt : 1));
        int i = 0;
        const cJSON *it;
        cJSON_ArrayForEach(it, toks) {
            if (!v || !cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble < 2147483647.0)) break;
            v[i++] = (int32_t)it->valuedouble;
        }
        if (!v || i != cnt) {
            free(v);
            snprintf(msg, mcap, "invalid slot save file (bad token list)");
        } else {
            snprintf(model, cap, "%s", mod->valuestring);
            *ids = v;
            *n = cnt;
            rc = 0;
        }
    }
    cJSON_Delete(j);
    return rc;
}

static void slot_restore(serve_server *s, http_call *c, int id, const cJSON *b) {
    char path[4096], model[256], msg[600];
    const char *name;
    if (slot_path(s, b, path, sizeof path, &name, c) < 0) return;
    const double t0 = wick_now_ms();
    int32_t *ids = NULL;
    int n = 0;
    size_t bytes = 0;
    if (read_slot_file(path, model, sizeof model, &ids, &n, &bytes, msg, sizeof msg) < 0) {
        reply_err(c, 400, "invalid_request_error", msg);
        return;
    }
    mpool_lease l;
    wick_error err;
    if (mpool_acquire(s->pool, model, &l, &err) < 0) {
        free(ids);
        snprintf(msg, sizeof msg, "the slot file is of model \"%.200s\", which this server cannot load", model);
        reply_err(c, 400, "invalid_request_error", msg);
        return;
    }
    if (n >= l.n_ctx) {
        free(ids);
        mpool_release(s->pool, &l, NAN);
        reply_err(c, 400, "invalid_request_error", "Restored prompt does not fit in the slot context");
        return;
    }
    fld_error e = {0};
    int rc = 0;
    if (n > 0) { /* warm the prefix cache: a prefill-only request of the saved tokens */
        gen_params g = {.ids = ids, .n_ids = n, .n_predict = 0, .logprobs = -1};
        g.sampling = ln_sampling_base(s, &l);
        job *j = gen_submit(s, &l, &g, &e);
        job_batch acc = {0};
        if (!j) rc = -1;
        else if (gen_collect(s, c, j, &acc) < 0) rc = fld_fail(&e, 499, NULL, "client closed the connection");
        else if (job_get_result(j)->finish == WICK_FINISH_ERROR) rc = fld_fail(&e, 500, NULL, "%s", job_get_result(j)->error);
        else if (job_get_result(j)->finish == WICK_FINISH_CANCELLED) rc = fld_fail(&e, 503, NULL, "request cancelled");
        job_batch_free(&acc);
        if (j) job_release(j);
    }
    if (rc < 0) {
        free(ids);
        mpool_release(s->pool, &l, NAN);
        reply_openai_error(c, &e);
        return;
    }
    int k = ln_slot_take(s, id, l.name, l.n_ctx, ids, n, &e);
    if (k >= 0) {
        char *text = tok_decode(wick_model_tokenizer(l.model), ids, (size_t)n, false, NULL);
        ln_slot_done(s, k, ids, n, NULL, 0, NULL, text);
        free(text);
    }
    mpool_release(s->pool, &l, NAN);
    free(ids);
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "id_slot", id);
    cJSON_AddStringToObject(r, "filename", name);
    cJSON_AddNumberToObject(r, "n_restored", n);
    cJSON_AddNumberToObject(r, "n_read", (double)bytes);
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(r, "timings"), "restore_ms", wick_now_ms() - t0);
    reply_json(c, 200, r);
}

/* Drop the prefix cache's KV of the slot's tokens (ids, n) of model:
 * a forget request, in order with the model's other requests. */
static int forget_cached(serve_server *s, http_call *c, const char *model, int32_t *ids, int n, fld_error *e) {
    mpool_lease l;
    wick_error err;
    if (mpool_acquire(s->pool, model, &l, &err) < 0) return 0; /* the model is gone, and its cache with it */
    gen_params g = {.ids = ids, .n_ids = n, .n_predict = 0, .logprobs = -1, .forget_prefix = true};
    g.sampling = ln_sampling_base(s, &l);
    job *j = gen_submit(s, &l, &g, e);
    job_batch acc = {0};
    int rc = 0;
    if (!j) rc = -1;
    else if (gen_collect(s, c, j, &acc) < 0) rc = fld_fail(e, 499, NULL, "client closed the connection");
    else if (job_get_result(j)->finish == WICK_FINISH_ERROR) rc = fld_fail(e, 500, NULL, "%s", job_get_result(j)->error);
    job_batch_free(&acc);
    if (j) job_release(j);
    mpool_release(s->pool, &l, NAN);
    return rc;
}

static void slot_erase(serve_server *s, http_call *c, int id) {
    ln_slots *t = s->slots;
    pthread_mutex_lock(&t->mu);
    ln_slot *sl = &t->v[id];
    const int n = sl->n_tokens > sl->n_prompt ? sl->n_tokens - 1 : sl->n_tokens; /* as save counts them */
    const bool busy = sl->busy > 0;
    char model[sizeof sl->model];
    memcpy(model, sl->model, sizeof model);
    int32_t *ids = !busy && n > 0 ? malloc(sizeof *ids * (size_t)n) : NULL;
    if (ids) memcpy(ids, sl->tokens, sizeof *ids * (size_t)n);
    if (!busy) {
        free(sl->tokens);
        free(sl->prompt);
        sl->tokens = NULL;
        sl->prompt = NULL;
        sl->n_tokens = sl->n_prompt = sl->n_decoded = 0;
    }
    pthread_mutex_unlock(&t->mu);
    if (busy) {
        reply_err(c, 503, "unavailable_error", "the slot is processing a request; erase it when it is idle");
        return;
    }
    fld_error e = {0};
    const int rc = ids ? forget_cached(s, c, model, ids, n, &e) : 0;
    free(ids);
    if (rc < 0) {
        reply_openai_error(c, &e);
        return;
    }
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "id_slot", id);
    cJSON_AddNumberToObject(r, "n_erased", n);
    reply_json(c, 200, r);
}

void ln_slots_action(serve_server *s, http_call *c, const char *rest, cJSON *body) {
    if (!s->cfg.slot_save_path || !*s->cfg.slot_save_path) {
        reply_err(c, 501, "not_supported_error",
                  "This server does not support slots action. Start it with `--slot-save-path`");
        return;
    }
    char *end = NULL;
    const long id = strtol(rest, &end, 10);
    if (!*rest || *end || id < 0 || id >= s->slots->n) {
        reply_err(c, 400, "invalid_request_error", "Invalid slot id");
        return;
    }
    const char *action = http_query(c, "action");
    if (action && strcmp(action, "save") == 0) slot_save(s, c, (int)id, body);
    else if (action && strcmp(action, "restore") == 0) slot_restore(s, c, (int)id, body);
    else if (action && strcmp(action, "erase") == 0) slot_erase(s, c, (int)id);
    else reply_err(c, 400, "invalid_request_error", "Invalid action");
}
