/* llama_native_info.c — llama-server's informational routes: GET /props
 * (default_generation_settings, total_slots, model_path, chat_template,
 * modalities, build_info, ...), POST /props (llama-server changes nothing
 * there without --props, which wick does not have: 501), POST
 * /apply-template (a conversation rendered with the model's chat template),
 * POST /v1/chat/completions/input_tokens (the prompt tokens a chat request
 * would run) and /models, /v1/models in llama-server's shape (OpenAI's list
 * with "models" beside it; every field wick's OpenAI list had is kept). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/chat_run.h"
#include "serve/llama_native.h"
#include "serve/openai.h"
#include "serve/prompt.h"
#include "text/tokenizer.h"

static char *token_text(const tokenizer *t, int32_t id) {
    size_t len = 0;
    const char *s = id >= 0 ? tok_token_text(t, id, &len) : NULL;
    return s ? strndup(s, len) : strdup("");
}

/* What /props says of the server whatever its model: text only, which
 * endpoints are on. */
static void props_server_fields(const serve_server *s, cJSON *j) {
    cJSON *mod = cJSON_AddObjectToObject(j, "modalities");
    cJSON_AddBoolToObject(mod, "vision", false);
    cJSON_AddBoolToObject(mod, "audio", false);
    cJSON_AddBoolToObject(j, "endpoint_slots", !s->cfg.no_slots);
    cJSON_AddBoolToObject(j, "endpoint_props", false);
    cJSON_AddBoolToObject(j, "endpoint_metrics", true);
    cJSON_AddBoolToObject(j, "webui", !s->cfg.no_webui);
}

/* /props while the default model sleeps (unloaded for idleness): what is
 * known without loading it again, is_sleeping true. Reading /props does not
 * wake the model, as in llama-server. */
static void props_sleeping(serve_server *s, http_call *c) {
    mpool_info info[256];
    const int n = mpool_list(s->pool, info, 256);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "total_slots", s->slots ? s->slots->n : s->cfg.parallel);
    cJSON_AddStringToObject(j, "model_alias", n ? info[0].name : "");
    cJSON_AddStringToObject(j, "model_path", n && info[0].path ? info[0].path : "");
    props_server_fields(s, j);
    char build[64];
    snprintf(build, sizeof build, "wick-%s", wick_version());
    cJSON_AddStringToObject(j, "build_info", build);
    cJSON_AddBoolToObject(j, "is_sleeping", true);
    reply_json(c, 200, j);
}

void ln_props_get(serve_server *s, http_call *c) {
    if (mpool_default_sleeping(s->pool)) {
        props_sleeping(s, c);
        return;
    }
    mpool_lease l;
    fld_error e = {0};
    if (oai_lease(s, NULL, &l, &e) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    const tokenizer *t = wick_model_tokenizer(l.model);
    ln_params p = {0};
    p.g.n_predict = -1;
    p.g.sampling = ln_sampling_base(s, &l);
    snprintf(p.samplers, sizeof p.samplers, "%s", "edskypmxt");
    cJSON *j = cJSON_CreateObject();
    cJSON *d = cJSON_AddObjectToObject(j, "default_generation_settings");
    cJSON_AddNumberToObject(d, "id", 0);
    cJSON_AddNumberToObject(d, "id_task", -1);
    cJSON_AddNumberToObject(d, "n_ctx", l.n_ctx);
    cJSON_AddBoolToObject(d, "speculative", false);
    cJSON_AddBoolToObject(d, "is_processing", false);
    cJSON_AddItemToObject(d, "params", ln_settings_json(&p, &l));
    cJSON_AddStringToObject(d, "prompt", "");
    cJSON *nt = cJSON_AddObjectToObject(d, "next_token");
    cJSON_AddBoolToObject(nt, "has_next_token", true);
    cJSON_AddBoolToObject(nt, "has_new_line", false);
    cJSON_AddNumberToObject(nt, "n_remain", -1);
    cJSON_AddNumberToObject(nt, "n_decoded", 0);
    cJSON_AddStringToObject(nt, "stopping_word", "");
    cJSON_AddNumberToObject(j, "total_slots", s->slots ? s->slots->n : s->cfg.parallel);
    cJSON_AddStringToObject(j, "model_alias", l.name);
    mpool_info info[256];
    const int n = mpool_list(s->pool, info, 256);
    const char *path = l.name;
    for (int i = 0; i < n; i++)
        if (strcmp(info[i].name, l.name) == 0 && info[i].path) path = info[i].path;
    cJSON_AddStringToObject(j, "model_path", path);
    props_server_fields(s, j);
    const char *tmpl = tok_chat_template(t);
    cJSON_AddStringToObject(j, "chat_template", tmpl ? tmpl : "");
    char *bos = token_text(t, tok_bos(t)), *eos = token_text(t, tok_eos(t));
    cJSON_AddStringToObject(j, "bos_token", bos ? bos : "");
    cJSON_AddStringToObject(j, "eos_token", eos ? eos : "");
    free(bos);
    free(eos);
    char build[64];
    snprintf(build, sizeof build, "wick-%s", wick_version());
    cJSON_AddStringToObject(j, "build_info", build);
    cJSON_AddBoolToObject(j, "is_sleeping", false);
    mpool_release_peek(s->pool, &l); /* reading /props does not keep the model awake */
    reply_json(c, 200, j);
}

void ln_props_post(serve_server *s, http_call *c, cJSON *b) {
    (void)s;
    (void)b;
    fld_error e = {0};
    fld_fail(&e, 501, NULL, "This server does not support changing global properties (llama-server's --props)");
    snprintf(e.code, sizeof e.code, "not_supported_error");
    reply_openai_error(c, &e);
}

void ln_apply_template(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    prompt_chat_opts po;
    if (oai_chat_opts(b, &po, &e) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    po.reasoning_off = s->cfg.reasoning_off;
    mpool_lease l;
    if (oai_lease_model(s, c, b, &l) < 0) return;
    char *text = NULL;
    size_t len = 0;
    const int rc = prompt_apply_template(l.model, &po, &text, &len, &e);
    mpool_release(s->pool, &l, NAN);
    if (rc < 0) {
        reply_openai_error(c, &e);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "prompt", text);
    free(text);
    reply_json(c, 200, j);
}

void ln_chat_input_tokens(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    chat_run *run = NULL;
    const chat_run_opts o = {.render_only = true}; /* the prompt exactly as the turn submits it */
    if (chat_run_start_opts(s, b, &o, &run, &e) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    int n = 0;
    const struct span_req *sr = NULL;
    (void)chat_run_prompt(run, &n, &sr);
    chat_run_free(run);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "object", "response.input_tokens");
    cJSON_AddNumberToObject(j, "input_tokens", n);
    reply_json(c, 200, j);
}

void ln_models(serve_server *s, http_call *c) {
    mpool_info info[256];
    const int n = mpool_list(s->pool, info, 256);
    cJSON *j = cJSON_CreateObject(), *models = cJSON_AddArrayToObject(j, "models");
    cJSON_AddStringToObject(j, "object", "list");
    cJSON *data = cJSON_AddArrayToObject(j, "data");
    for (int i = 0; i < n; i++) {
        const mpool_info *in = &info[i];
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", in->name);
        cJSON_AddStringToObject(m, "model", in->name);
        cJSON_AddStringToObject(m, "modified_at", "");
        cJSON_AddStringToObject(m, "size", "");
        cJSON_AddStringToObject(m, "digest", "");
        cJSON_AddStringToObject(m, "type", "model");
        cJSON_AddStringToObject(m, "description", "");
        const bool tagged = i == 0 && s->cfg.n_tags; /* --tags name the default model (listed first) */
        cJSON_AddItemToObject(m, "tags", tagged ? cJSON_CreateStringArray(s->cfg.tags, s->cfg.n_tags) : cJSON_CreateArray());
        cJSON *caps = cJSON_AddArrayToObject(m, "capabilities");
        cJSON_AddItemToArray(caps, cJSON_CreateString("completion"));
        cJSON_AddStringToObject(m, "parameters", "");
        cJSON *det = cJSON_AddObjectToObject(m, "details");
        cJSON_AddStringToObject(det, "parent_model", "");
        cJSON_AddStringToObject(det, "format", in->known ? in->format : "gguf");
        cJSON_AddStringToObject(det, "family", in->known ? in->arch : "");
        cJSON_AddItemToObject(det, "families", cJSON_CreateArray());
        cJSON_AddStringToObject(det, "parameter_size", "");
        cJSON_AddStringToObject(det, "quantization_level", in->known ? in->quant : "");
        cJSON_AddItemToArray(models, m);

        cJSON *d = cJSON_CreateObject(); /* OpenAI's entry, as /v1/models always had it */
        cJSON_AddStringToObject(d, "id", in->name);
        cJSON_AddStringToObject(d, "object", "model");
        cJSON_AddNumberToObject(d, "created", (double)(in->mtime ? in->mtime : (uint64_t)s->started));
        cJSON_AddStringToObject(d, "owned_by", "wick");
        if (in->loaded) cJSON_AddNumberToObject(d, "max_model_len", in->n_ctx);
        if (in->n_aliases) /* llama-server's list of a model's --alias names */
            cJSON_AddItemToObject(d, "aliases", cJSON_CreateStringArray(in->aliases, in->n_aliases));
        if (tagged) cJSON_AddItemToObject(d, "tags", cJSON_CreateStringArray(s->cfg.tags, s->cfg.n_tags));
        if (in->known) {
            cJSON *meta = cJSON_AddObjectToObject(d, "meta");
            cJSON_AddNumberToObject(meta, "n_ctx_train", in->n_ctx_train);
            cJSON_AddNumberToObject(meta, "n_params", (double)in->n_params);
            cJSON_AddNumberToObject(meta, "size", (double)in->size);
        }
        cJSON_AddItemToArray(data, d);
    }
    reply_json(c, 200, j);
}
