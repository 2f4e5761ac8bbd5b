/* ollama_info.c — Ollama's listing routes: /api/tags (every model known),
 * /api/ps (the loaded ones), /api/show (one model's details, loading it)
 * and /api/version. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/server.h"
#include "text/tokenizer.h"

/* A stable sha256-looking digest of the model's path (Ollama clients show it). */
static void digest(const char *path, char *out) {
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < 4; k++) {
        for (const char *p = path; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
        h ^= (uint64_t)k * 0x9E3779B97F4A7C15ull;
        snprintf(out + k * 16, 17, "%016llx", (unsigned long long)h);
    }
}

static void param_size(int64_t n, char *out, size_t cap) {
    if (n <= 0) snprintf(out, cap, "%s", "");
    else if (n >= 1000000000) snprintf(out, cap, "%.1fB", (double)n / 1e9);
    else if (n >= 1000000) snprintf(out, cap, "%.2fM", (double)n / 1e6);
    else snprintf(out, cap, "%.2fK", (double)n / 1e3);
}

static cJSON *details(const mpool_info *in) {
    cJSON *d = cJSON_CreateObject();
    char ps[32];
    param_size(in->n_params, ps, sizeof ps);
    bool gguf = strlen(in->path) > 5 && strcmp(in->path + strlen(in->path) - 5, ".gguf") == 0;
    cJSON_AddStringToObject(d, "parent_model", "");
    cJSON_AddStringToObject(d, "format", in->format[0] ? in->format : gguf ? "gguf" : "safetensors");
    cJSON_AddStringToObject(d, "family", in->arch);
    cJSON *fam = cJSON_AddArrayToObject(d, "families");
    if (in->arch[0]) cJSON_AddItemToArray(fam, cJSON_CreateString(in->arch));
    cJSON_AddStringToObject(d, "parameter_size", ps);
    cJSON_AddStringToObject(d, "quantization_level", in->quant);
    return d;
}

static cJSON *model_entry(const mpool_info *in, bool ps) {
    cJSON *m = cJSON_CreateObject();
    char dg[80], ts[48];
    digest(in->path, dg);
    cJSON_AddStringToObject(m, "name", in->name);
    cJSON_AddStringToObject(m, "model", in->name);
    if (!ps) {
        reply_rfc3339((double)in->mtime, ts, sizeof ts);
        cJSON_AddStringToObject(m, "modified_at", ts);
    }
    cJSON_AddNumberToObject(m, "size", (double)in->size);
    cJSON_AddStringToObject(m, "digest", dg);
    cJSON_AddItemToObject(m, "details", details(in));
    if (ps) {
        /* "for ever" as Ollama shows it: far in the future */
        reply_rfc3339(in->expires_at < 0 ? 253402300799.0 : in->expires_at, ts, sizeof ts);
        cJSON_AddStringToObject(m, "expires_at", ts);
        cJSON_AddNumberToObject(m, "size_vram", 0);
        cJSON_AddNumberToObject(m, "context_length", in->n_ctx);
    }
    return m;
}

static void listing(serve_server *s, http_call *c, bool ps) {
    mpool_info *info = malloc(sizeof *info * 256);
    if (!info) {
        reply_text(c, 500, "application/json", "{\"error\":\"out of memory\"}");
        return;
    }
    int n = mpool_list(s->pool, info, 256);
    cJSON *j = cJSON_CreateObject(), *arr = cJSON_AddArrayToObject(j, "models");
    for (int i = 0; i < n; i++)
        if (!ps || info[i].loaded) cJSON_AddItemToArray(arr, model_entry(&info[i], ps));
    free(info);
    reply_json(c, 200, j);
}

void oll_tags(serve_server *s, http_call *c) { listing(s, c, false); }
void oll_ps(serve_server *s, http_call *c) { listing(s, c, true); }

void oll_version(serve_server *s, http_call *c) {
    (void)s;
    char body[96];
    snprintf(body, sizeof body, "{\"version\":\"%s\"}", wick_version());
    reply_text(c, 200, "application/json", body);
}

void oll_show(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    const char *name = NULL;
    if (fld_str(b, "model", &name, &e) < 0 || (!name && fld_str(b, "name", &name, &e) < 0)) {
        reply_ollama_error(c, &e);
        return;
    }
    mpool_lease l;
    wick_error err;
    if (mpool_acquire(s->pool, name, &l, &err) < 0) {
        fld_fail_wick(&e, &err, "model");
        reply_ollama_error(c, &e);
        return;
    }
    wick_model_info mi;
    wick_model_get_info(l.model, &mi);
    mpool_info info[256];
    int n = mpool_list(s->pool, info, 256);
    const mpool_info *in = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(info[i].name, l.name) == 0) in = &info[i];
    cJSON *j = cJSON_CreateObject();
    const char *tmpl = tok_chat_template(wick_model_tokenizer(l.model));
    cJSON_AddStringToObject(j, "license", "");
    cJSON_AddStringToObject(j, "modelfile", "");
    cJSON_AddStringToObject(j, "parameters", "");
    cJSON_AddStringToObject(j, "template", tmpl ? tmpl : "");
    if (in) {
        cJSON_AddItemToObject(j, "details", details(in));
        char ts[48];
        reply_rfc3339((double)in->mtime, ts, sizeof ts);
        cJSON_AddStringToObject(j, "modified_at", ts);
    }
    cJSON *mi_j = cJSON_AddObjectToObject(j, "model_info");
    char key[96];
    const char *a = mi.arch ? mi.arch : "llama";
    cJSON_AddStringToObject(mi_j, "general.architecture", a);
    cJSON_AddNumberToObject(mi_j, "general.parameter_count", (double)mi.n_params);
#define ARCH_KEY(suffix, value)                                  \
    do {                                                         \
        snprintf(key, sizeof key, "%s.%s", a, suffix);           \
        cJSON_AddNumberToObject(mi_j, key, (double)(value));     \
    } while (0)
    ARCH_KEY("context_length", mi.n_ctx_train);
    ARCH_KEY("embedding_length", mi.n_embd);
    ARCH_KEY("block_count", mi.n_layer);
    ARCH_KEY("feed_forward_length", mi.n_ff);
    ARCH_KEY("attention.head_count", mi.n_head);
    ARCH_KEY("attention.head_count_kv", mi.n_head_kv);
    ARCH_KEY("attention.key_length", mi.head_dim);
    ARCH_KEY("rope.freq_base", mi.rope_theta);
    ARCH_KEY("vocab_size", mi.n_vocab);
#undef ARCH_KEY
    cJSON *caps = cJSON_AddArrayToObject(j, "capabilities");
    cJSON_AddItemToArray(caps, cJSON_CreateString("completion"));
    if (tmpl && strstr(tmpl, "tools")) cJSON_AddItemToArray(caps, cJSON_CreateString("tools"));
    mpool_release(s->pool, &l, NAN);
    reply_json(c, 200, j);
}
