/* llama_native.c — llama-server's native completion routes: POST
 * /completion (and /completions) and /infill. The fields are read as
 * llama-server reads them (n_predict, n_probs, post_sampling_probs,
 * return_tokens, id_slot, samplers, grammar / json_schema, the sampling
 * knobs); a prompt is text,
 * token ids, a mixed array of both, or an array of several prompts (one
 * result each, in order). Fields llama-server has whose effect wick cannot
 * give are a 400 naming them; cache_prompt is honoured by the automatic
 * prefix cache whatever its value (caching never changes an output). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "serve/llama_native.h"
#include "serve/sampling_base.h"
#include "serve/prompt.h"
#include "text/tokenizer.h"

#define LN_MAX_PROMPTS 64

/* llama-server fields wick does not implement, with the value that asks for nothing. */
typedef struct ln_unsup {
    const char *name;
    int kind; /* 0 number != deflt, 1 true, 2 non-empty string/array/object, 3 number > deflt */
    double deflt;
} ln_unsup;

static const ln_unsup UNSUPPORTED[] = {
    {"typical_p", 0, 1},       {"dynatemp_range", 0, 0},   {"mirostat", 0, 0},      {"xtc_probability", 0, 0},
    {"dry_multiplier", 0, 0},  {"top_n_sigma", 3, 0},      {"min_keep", 0, 0},      {"n_keep", 0, 0},
    {"n_discard", 0, 0},       {"t_max_predict_ms", 0, 0}, {"t_max_prompt_ms", 3, 0}, {"n_indent", 0, 0},
    {"n_cmpl", 3, 1},          {"timings_per_token", 1, 0},
    {"return_progress", 1, 0}, {"grammar_lazy", 1, 0},    {"lora", 2, 0},          {"image_data", 2, 0},
    {"multimodal_data", 2, 0}, {"grammar_triggers", 2, 0}, {"preserved_tokens", 2, 0},
    {"use_beam_search", 1, 0}, {"stop_token_ids", 2, 0},
};

/* shift: the server shifts contexts (n_keep and n_discard are read then: gen_shift_fields) */
static int check_unsupported(const cJSON *b, bool shift, fld_error *e) {
    for (size_t i = 0; i < sizeof UNSUPPORTED / sizeof UNSUPPORTED[0]; i++) {
        const ln_unsup *u = &UNSUPPORTED[i];
        if (shift && (!strcmp(u->name, "n_keep") || !strcmp(u->name, "n_discard"))) continue;
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, u->name);
        if (!v || cJSON_IsNull(v)) continue;
        int asks;
        if (u->kind == 1) asks = cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
        else if (u->kind == 2) asks = cJSON_IsString(v) ? v->valuestring[0] != 0 : (cJSON_IsArray(v) || cJSON_IsObject(v)) ? v->child != NULL : -1;
        else if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) asks = -1;
        else asks = u->kind == 0 ? v->valuedouble != u->deflt : v->valuedouble > u->deflt;
        if (asks < 0) return fld_fail(e, 400, u->name, "\"%s\" has the wrong type", u->name);
        if (asks) return fld_fail(e, 400, u->name, "\"%s\" (llama.cpp) is not supported by this server; leave it out", u->name);
    }
    return 0;
}

/* samplers: an array of names or a string of letters. Wick applies the
 * penalties, temperature, top-k, top-p and min-p in that fixed order; a
 * sampler left out of the list is turned off. Samplers wick does not have
 * (dry, typ_p, xtc, top_n_sigma, mirostat) may be listed: their parameters
 * are refused above unless they ask for nothing. */
static int sampler_letter(const char *name, size_t len) {
    static const struct { const char *name; char c; } names[] = {
        {"penalties", 'e'}, {"dry", 'd'}, {"top_n_sigma", 's'}, {"top_k", 'k'}, {"typ_p", 'y'}, {"typical_p", 'y'},
        {"typical", 'y'}, {"top_p", 'p'}, {"nucleus", 'p'}, {"min_p", 'm'}, {"xtc", 'x'}, {"temperature", 't'},
        {"temp", 't'},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == len && strncmp(names[i].name, name, len) == 0) return names[i].c;
    if (len == 1 && strchr("edskypmxt", name[0])) return name[0];
    return 0;
}

static int parse_samplers(const cJSON *b, char have[16], fld_error *e) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, "samplers");
    snprintf(have, 16, "%s", "edskypmxt");
    if (!v || cJSON_IsNull(v)) return 0;
    char got[64] = {0};
    size_t n = 0;
    if (cJSON_IsString(v)) {
        for (const char *c = v->valuestring; *c && n < sizeof got - 1; c++) {
            if (!sampler_letter(c, 1)) return fld_fail(e, 400, "samplers", "\"samplers\": unknown sampler '%c'", *c);
            got[n++] = *c;
        }
    } else if (cJSON_IsArray(v)) {
        const cJSON *it;
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsString(it)) return fld_fail(e, 400, "samplers", "\"samplers\" must be an array of names");
            int c = sampler_letter(it->valuestring, strlen(it->valuestring));
            if (!c) return fld_fail(e, 400, "samplers", "\"samplers\": unknown sampler \"%.40s\"", it->valuestring);
            if (n < sizeof got - 1) got[n++] = (char)c;
        }
    } else {
        return fld_fail(e, 400, "samplers", "\"samplers\" must be an array of names or a string");
    }
    size_t k = 0;
    for (const char *c = "edskypmxt"; *c; c++)
        if (memchr(got, *c, n)) have[k++] = *c;
    have[k] = 0;
    return 0;
}

/* The fields read before the model is known. */
static int parse_common(const serve_server *s, const cJSON *b, ln_params *p, fld_error *e) {
    long long v;
    int r;
    p->g.n_predict = -1;
    p->g.logprobs = -1;
    p->id_slot = -1;
    p->cache_prompt = true;
    if (check_unsupported(b, s->cfg.ctx_shift, e) < 0) return -1;
    if (fld_bool(b, "stream", &p->stream, e) < 0) return -1;
    if ((r = fld_int(b, "n_predict", -1, 2147483647, &v, e)) < 0) return -1;
    if (!r && (r = fld_int(b, "max_tokens", -1, 2147483647, &v, e)) < 0) return -1;
    if (r) p->g.n_predict = v;
    if (p->g.n_predict == 0) return fld_fail(e, 400, "n_predict", "n_predict must be -1 or at least 1");
    if ((r = fld_int(b, "n_probs", 0, WICK_MAX_TOP_LOGPROBS, &v, e)) < 0) return -1;
    if (r) p->n_probs = (int)v;
    if (p->n_probs > 0) p->g.logprobs = p->n_probs;
    if (fld_bool(b, "post_sampling_probs", &p->g.post_sampling_probs, e) < 0) return -1;
    if (fld_bool(b, "return_tokens", &p->return_tokens, e) < 0) return -1;
    if (fld_bool(b, "cache_prompt", &p->cache_prompt, e) < 0) return -1;
    if ((r = fld_int(b, "id_slot", -1, 1e6, &v, e)) < 0) return -1;
    if (r) p->id_slot = (int)v;
    if (fld_stop(b, "stop", &p->g.stop, e) < 0) return -1;
    if (fld_bool(b, "ignore_eos", &p->g.ignore_eos, e) < 0) return -1;
    if (fld_str(b, "cache_salt", &p->g.cache_salt, e) < 0) return -1;
    if (parse_samplers(b, p->samplers, e) < 0) return -1;
    const cJSON *rf = NULL;
    if (fld_array(b, "response_fields", &rf, e) < 0) return -1;
    const cJSON *it;
    cJSON_ArrayForEach(it, rf) if (!cJSON_IsString(it)) return fld_fail(e, 400, "response_fields", "\"response_fields\" must be an array of strings");
    if (rf && rf->child && !(p->fields = cJSON_Duplicate(rf, 1))) return fld_fail(e, 500, NULL, "out of memory");
    if (fld_grammar_openai(b, &p->gr, e) < 0) return -1;
    p->g.grammar = &p->gr;
    return 0;
}

wick_sampling ln_sampling_base(const serve_server *s, const mpool_lease *l) {
    wick_sampling v;
    serve_sampling_base(s, l->model, &v); /* the model's defaults under the server's flags */
    return v;
}

/* llama-server's ignore_eos: every end-of-generation token gets a -inf bias
 * (never sampled), listed in generation_settings like the request's own. */
static int ban_eog(const wick_model *m, ln_params *p, fld_error *e) {
    const int n_vocab = wick_tokenizer_n_vocab(wick_model_tokenizer(m));
    for (int32_t t = 0; t < n_vocab; t++) {
        if (!wick_token_is_eog(m, t)) continue;
        wick_logit_bias *nb = realloc(p->bias, sizeof *nb * (size_t)(p->n_bias + 1));
        if (!nb) return fld_fail(e, 500, NULL, "out of memory");
        p->bias = nb;
        p->bias[p->n_bias++] = (wick_logit_bias){.token = t, .bias = -INFINITY};
    }
    return 0;
}

/* Sampling over the base; samplers left out of "samplers" turned off. */
static int parse_sampling(const serve_server *sv, const cJSON *b, const mpool_lease *l, ln_params *p, fld_error *e) {
    p->g.sampling = ln_sampling_base(sv, l);
    if (fld_sampling_openai(b, &p->g.sampling, e) < 0) return -1;
    serve_sampling_keep_seed(sv, cJSON_GetObjectItemCaseSensitive(b, "seed") != NULL, &p->g.sampling);
    p->g.n_predict = serve_n_predict_for(sv, p->g.n_predict);
    wick_sampling *s = &p->g.sampling;
    if (!strchr(p->samplers, 'e')) s->repeat_penalty = 1, s->presence_penalty = 0, s->frequency_penalty = 0;
    if (!strchr(p->samplers, 'k')) s->top_k = 0;
    if (!strchr(p->samplers, 'p')) s->top_p = 1;
    if (!strchr(p->samplers, 'm')) s->min_p = 0;
    if (fld_logit_bias(b, "logit_bias", wick_model_tokenizer(l->model), true, &p->bias, &p->n_bias, e) < 0) return -1;
    if (p->g.ignore_eos && ban_eog(l->model, p, e) < 0) return -1;
    s->logit_bias = p->bias;
    s->n_logit_bias = p->n_bias;
    return 0;
}

static void params_free(ln_params *p) {
    cJSON_Delete(p->fields);
    p->fields = NULL;
    free(p->bias);
    fld_grammar_free(&p->gr);
}

/* ---- prompts ---- */

typedef struct ln_prompts {
    int32_t *ids[LN_MAX_PROMPTS];
    int n_ids[LN_MAX_PROMPTS];
    int n;
} ln_prompts;

static void prompts_free(ln_prompts *ps) {
    for (int i = 0; i < ps->n; i++) free(ps->ids[i]);
    ps->n = 0;
}

static int append(int32_t **ids, int *n, const int32_t *add, int n_add, fld_error *e) {
    int32_t *t = realloc(*ids, sizeof *t * (size_t)(*n + n_add + 1));
    if (!t) return fld_fail(e, 500, NULL, "out of memory");
    memcpy(t + *n, add, sizeof *t * (size_t)n_add);
    *ids = t;
    *n += n_add;
    return 0;
}

int ln_prompt_mixed(const wick_model *m, const cJSON *p, bool add_special, int max_ids, int32_t **ids, int *n,
                    fld_error *e) {
    *ids = NULL;
    *n = 0;
    if (cJSON_IsString(p)) return prompt_text(m, p->valuestring, add_special, max_ids, ids, n, e);
    if (cJSON_IsObject(p)) {
        /* llama-server's object form: {"prompt_string": text, "multimodal_data": [...]};
         * the text alone reads as a string prompt, media need a multimodal model. */
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(p, "prompt_string");
        const cJSON *md = cJSON_GetObjectItemCaseSensitive(p, "multimodal_data");
        if (md && !cJSON_IsNull(md) && !(cJSON_IsArray(md) && !md->child))
            return fld_fail(e, 400, "multimodal_data", "this model takes no media (multimodal_data)");
        if (!cJSON_IsString(ps))
            return fld_fail(e, 400, "prompt", "a prompt object needs \"prompt_string\" as a string");
        return prompt_text(m, ps->valuestring, add_special, max_ids, ids, n, e);
    }
    if (!cJSON_IsArray(p)) return fld_fail(e, 400, "prompt", "\"prompt\" must be a string, token ids or an array of them");
    const int n_vocab = wick_tokenizer_n_vocab(wick_model_tokenizer(m));
    bool first = true;
    const cJSON *it;
    cJSON_ArrayForEach(it, p) {
        int rc;
        if (cJSON_IsString(it)) {
            int32_t *t = NULL;
            int nt = 0;
            rc = prompt_text(m, it->valuestring, add_special && first, max_ids, &t, &nt, e);
            if (rc == 0) rc = append(ids, n, t, nt, e);
            free(t);
        } else if (cJSON_IsNumber(it) && it->valuedouble >= 0 && it->valuedouble < n_vocab &&
                   it->valuedouble == floor(it->valuedouble)) {
            const int32_t id = (int32_t)it->valuedouble;
            rc = append(ids, n, &id, 1, e);
        } else {
            rc = fld_fail(e, 400, "prompt", "a prompt's elements must be strings or token ids in [0, %d)", n_vocab);
        }
        first = false;
        if (rc < 0) {
            free(*ids);
            *ids = NULL;
            *n = 0;
            return -1;
        }
    }
    return 0;
}

/* llama-server's reading: a string, ids or a mixed array is one prompt; an
 * array of strings or of arrays is several. */
static int read_prompts(const wick_model *m, const cJSON *p, int max_ids, ln_prompts *ps, fld_error *e) {
    ps->n = 0;
    if (!p || cJSON_IsNull(p)) return fld_fail(e, 400, "prompt", "\"prompt\" is required");
    bool several = false;
    if (cJSON_IsArray(p)) {
        if (!p->child) return fld_fail(e, 400, "prompt", "\"prompt\" is empty");
        bool num = false, str = false, other = false;
        const cJSON *it;
        cJSON_ArrayForEach(it, p) {
            num |= cJSON_IsNumber(it);
            str |= cJSON_IsString(it);
            other |= !cJSON_IsNumber(it) && !cJSON_IsString(it);
        }
        several = other || (str && !num);
    }
    if (!several) {
        ps->n = 1;
        return ln_prompt_mixed(m, p, true, max_ids, &ps->ids[0], &ps->n_ids[0], e);
    }
    if (cJSON_GetArraySize(p) > LN_MAX_PROMPTS)
        return fld_fail(e, 400, "prompt", "at most %d prompts per request", LN_MAX_PROMPTS);
    const cJSON *it;
    cJSON_ArrayForEach(it, p) {
        if (ln_prompt_mixed(m, it, true, max_ids, &ps->ids[ps->n], &ps->n_ids[ps->n], e) < 0) {
            prompts_free(ps);
            return -1;
        }
        ps->n++;
    }
    return 0;
}

/* ---- infill ---- */

static int enc_plain(const wick_model *m, const char *text, int32_t **ids, int *n, fld_error *e) {
    wick_error err;
    size_t k = 0;
    *ids = NULL;
    *n = 0;
    if (tok_encode(wick_model_tokenizer(m), text, strlen(text), false, false, ids, &k, &err) < 0)
        return fld_fail_wick(e, &err, "prompt");
    *n = (int)k;
    return 0;
}

static int push_text(const wick_model *m, const char *text, int32_t **ids, int *n, fld_error *e) {
    int32_t *t = NULL;
    int nt = 0;
    int rc = enc_plain(m, text, &t, &nt, e);
    if (rc == 0) rc = append(ids, n, t, nt, e);
    free(t);
    return rc;
}

static int push_id(int32_t id, int32_t **ids, int *n, fld_error *e) { return append(ids, n, &id, 1, e); }

/* The layout llama-server gives FIM models: the extra files first
 * ([repo] "myproject\n", then per file [file_sep] filename "\n" text, then
 * [file_sep] "filename\n"; without file separators the files are joined by
 * a snippet line), then [BOS] <prefix> input_prefix prompt <suffix>
 * input_suffix <middle>. Text is tokenized without special tokens, the
 * prompt with them. Unlike llama-server nothing is trimmed to fit a batch:
 * a prompt longer than the context is refused. */
static int infill_prompt(const wick_model *m, const cJSON *extra, const char *prefix, const char *prompt,
                         const char *suffix, int max_ids, int32_t **ids, int *n, fld_error *e) {
    const tokenizer *t = wick_model_tokenizer(m);
    static const char *const sets[][5] = {
        {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|repo_name|>", "<|file_sep|>"},
        {"<fim_prefix>", "<fim_suffix>", "<fim_middle>", "<repo_name>", "<file_sep>"},
        {"<PRE>", "<SUF>", "<MID>", NULL, NULL},
        {"\xe2\x96\x81<PRE>", "\xe2\x96\x81<SUF>", "\xe2\x96\x81<MID>", NULL, NULL},
    };
    int32_t f[5] = {-1, -1, -1, -1, -1};
    bool found = false;
    for (size_t k = 0; k < sizeof sets / sizeof sets[0] && !found; k++) {
        for (int i = 0; i < 5; i++) f[i] = sets[k][i] ? tok_find(t, sets[k][i]) : -1;
        found = f[0] >= 0 && f[1] >= 0 && f[2] >= 0;
    }
    if (!found) {
        fld_fail(e, 501, NULL, "Infill is not supported by this model: it has no fill-in-the-middle tokens");
        snprintf(e->code, sizeof e->code, "not_supported_error");
        return -1;
    }
    *ids = NULL;
    *n = 0;
    int rc = 0;
    if (f[3] >= 0) rc = push_id(f[3], ids, n, e) < 0 ? -1 : push_text(m, "myproject\n", ids, n, e);
    const cJSON *it;
    cJSON_ArrayForEach(it, extra) {
        if (rc < 0) break;
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(it, "filename");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(it, "text");
        if (f[4] >= 0) {
            const char *name = cJSON_IsString(fn) ? fn->valuestring : "tmp";
            char *line = malloc(strlen(name) + 2);
            if (!line) {
                rc = fld_fail(e, 500, NULL, "out of memory");
                break;
            }
            sprintf(line, "%s\n", name);
            rc = push_id(f[4], ids, n, e) < 0 ? -1 : push_text(m, line, ids, n, e);
            free(line);
        } else {
            rc = push_text(m, "\n\n--- snippet ---\n\n", ids, n, e);
        }
        if (rc == 0) rc = push_text(m, tx->valuestring, ids, n, e);
    }
    if (rc == 0 && f[4] >= 0) rc = push_id(f[4], ids, n, e) < 0 ? -1 : push_text(m, "filename\n", ids, n, e);
    if (rc == 0 && tok_adds_bos(t) && tok_bos(t) >= 0) rc = push_id(tok_bos(t), ids, n, e);
    if (rc == 0) rc = push_id(f[0], ids, n, e);
    if (rc == 0) rc = push_text(m, prefix, ids, n, e);
    if (rc == 0 && *prompt) {
        int32_t *pt = NULL;
        int np = 0;
        rc = prompt_text(m, prompt, false, max_ids, &pt, &np, e);
        if (rc == 0) rc = append(ids, n, pt, np, e);
        free(pt);
    }
    if (rc == 0) rc = push_id(f[1], ids, n, e);
    if (rc == 0) rc = push_text(m, suffix, ids, n, e);
    if (rc == 0) rc = push_id(f[2], ids, n, e);
    if (rc < 0) {
        free(*ids);
        *ids = NULL;
        *n = 0;
    }
    return rc;
}

static int check_extra(const cJSON *b, const cJSON **extra, fld_error *e) {
    if (fld_array(b, "input_extra", extra, e) < 0) return -1;
    const cJSON *it;
    int i = 0;
    cJSON_ArrayForEach(it, *extra) {
        const cJSON *fn = cJSON_GetObjectItemCaseSensitive(it, "filename");
        const cJSON *tx = cJSON_GetObjectItemCaseSensitive(it, "text");
        if (!cJSON_IsObject(it) || !cJSON_IsString(tx))
            return fld_fail(e, 400, "input_extra", "input_extra[%d] must contain a \"text\" field with a string value", i);
        if (fn && !cJSON_IsString(fn))
            return fld_fail(e, 400, "input_extra", "input_extra[%d]: \"filename\" must be a string", i);
        i++;
    }
    return 0;
}

/* ---- running ---- */

static void task_free(ln_task *t) {
    if (t->j) job_release(t->j);
    job_batch_free(&t->acc);
    job_batch_free(&t->b);
    free(t->ids);
}

/* The settings, filed with the slot's record when a task ends. */
static char *settings_text(const ln_params *p, const mpool_lease *l) {
    cJSON *j = ln_settings_json(p, l);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    return s;
}

static void task_end(ln_task *t) {
    if (t->slot < 0) return;
    int32_t *gen = malloc(sizeof *gen * (t->acc.n + 1));
    for (size_t i = 0; gen && i < t->acc.n; i++) gen[i] = t->acc.ev[i].tok.id;
    char *st = settings_text(t->p, t->lease);
    char *text = tok_decode(wick_model_tokenizer(t->lease->model), t->ids, (size_t)t->n_ids, false, NULL);
    ln_slot_done(t->s, t->slot, t->ids, t->n_ids, gen, gen ? (int)t->acc.n : 0, st, text);
    free(text);
    free(st);
    free(gen);
    t->slot = -1;
}

/* A stream: one chunk per token, then the final object (no [DONE], as llama-server). */
typedef struct ln_stream {
    ln_task t;
    ln_params p;
    mpool_lease lease;
} ln_stream;

static void error_event(wbuf *o, int code, const char *msg) {
    cJSON *j = cJSON_CreateObject(), *er = cJSON_AddObjectToObject(j, "error");
    cJSON_AddNumberToObject(er, "code", code);
    cJSON_AddStringToObject(er, "message", msg);
    cJSON_AddStringToObject(er, "type", code == 503 ? "unavailable_error" : "server_error");
    char *s = cJSON_PrintUnformatted(j);
    wbuf_printf(o, "data: %s\n\n", s ? s : "{}");
    free(s);
    cJSON_Delete(j);
}

static void put_event(wbuf *o, cJSON *j) {
    char *s = cJSON_PrintUnformatted(j);
    wbuf_printf(o, "data: %s\n\n", s ? s : "{}");
    free(s);
    cJSON_Delete(j);
}

static int stream_pull(void *ctx, wbuf *o, int timeout_ms) {
    ln_stream *st = ctx;
    ln_task *t = &st->t;
    if (t->ended) return 0;
    if (http_stopping(t->s->http)) job_cancel(t->j);
    if (!job_take(t->j, &t->b, timeout_ms)) {
        const double limit = t->s->cfg.request_timeout_s;
        if (limit > 0 && wick_now_s() - t->t0 > limit) job_cancel(t->j);
        return 1;
    }
    const job_result *res = t->b.done ? job_get_result(t->j) : NULL;
    const bool ok_end = res && res->finish != WICK_FINISH_ERROR && res->finish != WICK_FINISH_CANCELLED;
    for (size_t i = 0; i < t->b.n; i++) {
        const job_event *ev = &t->b.ev[i];
        wbuf txt = {0};
        wbuf_put(&txt, t->b.text + ev->off, ev->len);
        job_batch_push(&t->acc, &ev->tok, t->b.text + ev->off, ev->len);
        /* the text held back at the end (a stop string's start that was not one, an
         * unfinished character) goes with the last token, whose chunk ends it */
        if (ok_end && i + 1 == t->b.n && res->tail_len) wbuf_put(&txt, res->tail, res->tail_len);
        put_event(o, ln_chunk_json(t, ev, 1, txt.data ? txt.data : ""));
        wbuf_free(&txt);
    }
    if (!t->b.done) return 1;
    t->ended = true;
    if (res->finish == WICK_FINISH_ERROR) {
        error_event(o, 500, res->error ? res->error : "generation failed");
    } else if (res->finish == WICK_FINISH_CANCELLED) {
        error_event(o, 503, "request cancelled (timeout or server shutting down)");
    } else {
        if (res->tail_len && !t->b.n) {
            char *tail = strndup(res->tail, res->tail_len);
            put_event(o, ln_chunk_json(t, NULL, 0, tail ? tail : ""));
            free(tail);
        }
        put_event(o, ln_result_json(t, res, true));
    }
    task_end(t);
    return 0;
}

static void stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    ln_stream *st = ctx;
    if (st->t.slot >= 0) task_end(&st->t);
    task_free(&st->t);
    params_free(&st->p);
    mpool_release(st->t.s->pool, &st->lease, NAN);
    free(st);
}

static void reply_err(http_call *c, fld_error *e) { reply_openai_error(c, e); }

/* Run the prompts: one stream, or every prompt submitted at once and the
 * results answered together (an array when the request had several). */
static void run(serve_server *s, http_call *c, ln_params *p, mpool_lease *l, ln_prompts *ps, bool array) {
    fld_error e = {0};
    if (p->stream) {
        ln_stream *st = calloc(1, sizeof *st);
        if (!st) {
            fld_fail(&e, 500, NULL, "out of memory");
            goto fail;
        }
        st->p = *p; /* the stream owns the parameters from here */
        memset(p, 0, sizeof *p);
        st->p.g.grammar = &st->p.gr;
        st->lease = *l;
        ln_task *t = &st->t;
        *t = (ln_task){.s = s, .lease = &st->lease, .p = &st->p, .slot = -1, .t0 = wick_now_s()};
        t->ids = ps->ids[0];
        t->n_ids = ps->n_ids[0];
        ps->ids[0] = NULL;
        st->p.g.ids = t->ids;
        st->p.g.n_ids = t->n_ids;
        gen_fit_context(&st->lease, &st->p.g); /* (context shift: the prompt cut to fit) */
        t->n_ids = st->p.g.n_ids;
        t->truncated = st->p.g.truncated;
        if ((t->slot = ln_slot_take(s, st->p.id_slot, l->name, l->n_ctx, t->ids, t->n_ids, &e)) < 0 ||
            !(t->j = gen_submit(s, &st->lease, &st->p.g, &e))) {
            if (t->slot >= 0) ln_slot_done(s, t->slot, NULL, 0, NULL, 0, NULL, NULL);
            t->slot = -1;
            task_free(t);
            params_free(&st->p);
            free(st);
            goto fail;
        }
        http_note(c, "model=%s prompt=%d slot=%d", l->name, t->n_ids, t->slot);
        http_reply_stream(c, 200, "text/event-stream", stream_pull, stream_fin, st);
        return;
    }
    ln_task *ts = calloc((size_t)ps->n, sizeof *ts);
    if (!ts) {
        fld_fail(&e, 500, NULL, "out of memory");
        goto fail;
    }
    int n = 0;
    const int n_keep = p->g.n_keep; /* each prompt's own clamp (gen_fit_context) */
    for (; n < ps->n; n++) {
        ln_task *t = &ts[n];
        *t = (ln_task){.s = s, .lease = l, .p = p, .index = n, .slot = -1, .t0 = wick_now_s()};
        t->ids = ps->ids[n];
        t->n_ids = ps->n_ids[n];
        ps->ids[n] = NULL;
        p->g.ids = t->ids;
        p->g.n_ids = t->n_ids;
        p->g.n_keep = n_keep;
        p->g.truncated = false;
        gen_fit_context(l, &p->g);
        t->n_ids = p->g.n_ids;
        t->truncated = p->g.truncated;
        if ((t->slot = ln_slot_take(s, ps->n == 1 ? p->id_slot : -1, l->name, l->n_ctx, t->ids, t->n_ids, &e)) < 0 ||
            !(t->j = gen_submit(s, l, &p->g, &e))) {
            if (t->slot >= 0) ln_slot_done(s, t->slot, NULL, 0, NULL, 0, NULL, NULL);
            t->slot = -1;
            n++;
            goto out;
        }
    }
    int prompt = 0, cached = 0, gen = 0;
    for (int i = 0; i < n; i++) {
        if (gen_collect(s, c, ts[i].j, &ts[i].acc) < 0) {
            if (http_stopping(s->http)) fld_fail(&e, 503, NULL, "server is shutting down");
            else fld_fail(&e, 499, NULL, "client closed the connection");
            goto out;
        }
        const job_result *res = job_get_result(ts[i].j);
        if (res->finish == WICK_FINISH_ERROR) {
            fld_fail(&e, 500, NULL, "%s", res->error ? res->error : "generation failed");
            goto out;
        }
        if (res->finish == WICK_FINISH_CANCELLED) {
            fld_fail(&e, 503, NULL, "request cancelled (timeout or server shutting down)");
            goto out;
        }
        prompt += res->prompt_tokens, cached += res->cached_tokens, gen += res->generated_tokens;
    }
    cJSON *out = array ? cJSON_CreateArray() : NULL;
    for (int i = 0; i < n; i++) {
        cJSON *r = ln_result_json(&ts[i], job_get_result(ts[i].j), false);
        task_end(&ts[i]);
        if (!array) out = r;
        else cJSON_AddItemToArray(out, r);
    }
    http_note(c, "model=%s prompt=%d cached=%d gen=%d", l->name, prompt, cached, gen);
    reply_json(c, 200, out);
    e.status = 0;
out:
    for (int i = 0; i < n; i++) {
        if (ts[i].slot >= 0) task_end(&ts[i]);
        task_free(&ts[i]);
    }
    free(ts);
    params_free(p);
    mpool_release(s->pool, l, NAN);
    if (e.status) reply_err(c, &e);
    return;
fail:
    params_free(p);
    mpool_release(s->pool, l, NAN);
    reply_err(c, &e);
}

void ln_completion(serve_server *s, http_call *c, cJSON *b) {
    ln_params p = {0};
    fld_error e = {0};
    if (parse_common(s, b, &p, &e) < 0) {
        params_free(&p);
        reply_err(c, &e);
        return;
    }
    const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(b, "prompt");
    mpool_lease l;
    if (oai_lease_model(s, c, b, &l) < 0) {
        params_free(&p);
        return;
    }
    ln_prompts ps = {0};
    if (parse_sampling(s, b, &l, &p, &e) < 0 || gen_shift_fields(s, b, &p.g, &e) < 0 ||
        read_prompts(l.model, prompt, p.g.ctx_shift ? 0 : l.n_ctx - 1, &ps, &e) < 0) {
        params_free(&p);
        mpool_release(s->pool, &l, NAN);
        reply_err(c, &e);
        return;
    }
    if (p.stream && ps.n > 1) {
        fld_fail(&e, 400, "stream", "streaming several prompts at once is not supported by this server; send one per request");
        prompts_free(&ps);
        params_free(&p);
        mpool_release(s->pool, &l, NAN);
        reply_err(c, &e);
        return;
    }
    const bool array = cJSON_IsArray(prompt) && ps.n > 1;
    run(s, c, &p, &l, &ps, array);
    prompts_free(&ps);
}

void ln_infill(serve_server *s, http_call *c, cJSON *b) {
    ln_params p = {0};
    fld_error e = {0};
    const cJSON *extra = NULL;
    const char *prefix = NULL, *suffix = NULL, *prompt = NULL;
    if (parse_common(s, b, &p, &e) < 0 || check_extra(b, &extra, &e) < 0 || fld_str(b, "input_prefix", &prefix, &e) < 0 ||
        fld_str(b, "input_suffix", &suffix, &e) < 0 || fld_str(b, "prompt", &prompt, &e) < 0 ||
        (!prefix && fld_fail(&e, 400, "input_prefix", "\"input_prefix\" is required") < 0) ||
        (!suffix && fld_fail(&e, 400, "input_suffix", "\"input_suffix\" is required") < 0)) {
        params_free(&p);
        reply_err(c, &e);
        return;
    }
    if (!prompt) prompt = "";
    mpool_lease l;
    if (oai_lease_model(s, c, b, &l) < 0) {
        params_free(&p);
        return;
    }
    ln_prompts ps = {.n = 1};
    if (parse_sampling(s, b, &l, &p, &e) < 0 || gen_shift_fields(s, b, &p.g, &e) < 0 ||
        infill_prompt(l.model, extra, prefix, prompt, suffix, p.g.ctx_shift ? 0 : l.n_ctx - 1, &ps.ids[0], &ps.n_ids[0],
                      &e) < 0) {
        params_free(&p);
        mpool_release(s->pool, &l, NAN);
        reply_err(c, &e);
        return;
    }
    run(s, c, &p, &l, &ps, false);
    prompts_free(&ps);
}
