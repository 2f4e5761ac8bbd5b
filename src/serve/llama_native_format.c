/* llama_native_format.c — the answers of llama-server's native completion
 * routes: the final result object (content, tokens, id_slot, stop,
 * model, tokens_predicted / evaluated / cached, generation_settings,
 * prompt, has_new_line, truncated, stop_type, stopping_word, timings,
 * completion_probabilities), the partial chunks a stream sends before it,
 * and generation_settings in llama-server's field names. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/json_out.h"
#include "serve/llama_native.h"
#include "serve/prompt.h"
#include "text/tokenizer.h"

static const char *sampler_name(char c) {
    switch (c) {
    case 'e': return "penalties";
    case 'd': return "dry";
    case 's': return "top_n_sigma";
    case 'k': return "top_k";
    case 'y': return "typ_p";
    case 'p': return "top_p";
    case 'm': return "min_p";
    case 'x': return "xtc";
    default: return "temperature";
    }
}

cJSON *ln_settings_json(const ln_params *p, const mpool_lease *l) {
    const wick_sampling *s = &p->g.sampling;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "n_predict", (double)p->g.n_predict);
    cJSON_AddNumberToObject(j, "seed", (double)s->seed);
    cJSON_AddNumberToObject(j, "temperature", s->temperature);
    cJSON_AddNumberToObject(j, "dynatemp_range", 0);
    cJSON_AddNumberToObject(j, "dynatemp_exponent", 1);
    cJSON_AddNumberToObject(j, "top_k", s->top_k);
    cJSON_AddNumberToObject(j, "top_p", s->top_p);
    cJSON_AddNumberToObject(j, "min_p", s->min_p);
    cJSON_AddNumberToObject(j, "top_n_sigma", -1);
    cJSON_AddNumberToObject(j, "xtc_probability", 0);
    cJSON_AddNumberToObject(j, "xtc_threshold", 0.1);
    cJSON_AddNumberToObject(j, "typical_p", 1);
    cJSON_AddNumberToObject(j, "repeat_last_n", s->repeat_last_n);
    cJSON_AddNumberToObject(j, "repeat_penalty", s->repeat_penalty > 0 ? s->repeat_penalty : 1);
    cJSON_AddNumberToObject(j, "presence_penalty", s->presence_penalty);
    cJSON_AddNumberToObject(j, "frequency_penalty", s->frequency_penalty);
    cJSON_AddNumberToObject(j, "dry_multiplier", 0);
    cJSON_AddNumberToObject(j, "dry_base", 1.75);
    cJSON_AddNumberToObject(j, "dry_allowed_length", 2);
    cJSON_AddNumberToObject(j, "dry_penalty_last_n", -1);
    cJSON_AddItemToObject(j, "dry_sequence_breakers", cJSON_CreateArray());
    cJSON_AddNumberToObject(j, "mirostat", 0);
    cJSON_AddNumberToObject(j, "mirostat_tau", 5);
    cJSON_AddNumberToObject(j, "mirostat_eta", 0.1);
    cJSON *stop = cJSON_AddArrayToObject(j, "stop");
    for (int i = 0; i < p->g.stop.n; i++) cJSON_AddItemToArray(stop, cJSON_CreateString(p->g.stop.v[i]));
    cJSON_AddNumberToObject(j, "max_tokens", (double)p->g.n_predict);
    cJSON_AddNumberToObject(j, "n_keep", p->g.n_keep);
    cJSON_AddNumberToObject(j, "n_discard", p->g.n_discard);
    cJSON_AddBoolToObject(j, "ignore_eos", p->g.ignore_eos);
    cJSON_AddBoolToObject(j, "stream", p->stream);
    cJSON *lb = cJSON_AddArrayToObject(j, "logit_bias");
    for (int i = 0; i < p->n_bias; i++) { /* llama-server's {"bias", "token"}; -inf (never) is null */
        cJSON *o = cJSON_CreateObject();
        if (isinf(p->bias[i].bias)) cJSON_AddNullToObject(o, "bias");
        else cJSON_AddNumberToObject(o, "bias", p->bias[i].bias);
        cJSON_AddNumberToObject(o, "token", p->bias[i].token);
        cJSON_AddItemToArray(lb, o);
    }
    cJSON_AddNumberToObject(j, "n_probs", p->n_probs);
    cJSON_AddNumberToObject(j, "min_keep", 0);
    cJSON_AddStringToObject(j, "grammar", p->gr.spec.kind && p->gr.text ? p->gr.text : "");
    cJSON_AddBoolToObject(j, "grammar_lazy", false);
    cJSON_AddItemToObject(j, "grammar_triggers", cJSON_CreateArray());
    cJSON_AddItemToObject(j, "preserved_tokens", cJSON_CreateArray());
    cJSON_AddStringToObject(j, "chat_format", "Content-only");
    cJSON_AddStringToObject(j, "reasoning_format", "none");
    cJSON_AddBoolToObject(j, "reasoning_in_content", false);
    cJSON_AddBoolToObject(j, "thinking_forced_open", false);
    cJSON *sm = cJSON_AddArrayToObject(j, "samplers");
    /* the samplers wick applies, in the order it applies them */
    static const char order[] = "etkpm";
    for (const char *c = order; *c; c++)
        if (strchr(p->samplers, *c)) cJSON_AddItemToArray(sm, cJSON_CreateString(sampler_name(*c)));
    cJSON_AddNumberToObject(j, "speculative.n_max", 16);
    cJSON_AddNumberToObject(j, "speculative.n_min", 0);
    cJSON_AddNumberToObject(j, "speculative.p_min", 0.75);
    cJSON_AddBoolToObject(j, "timings_per_token", false);
    cJSON_AddBoolToObject(j, "post_sampling_probs", p->g.post_sampling_probs);
    cJSON_AddItemToObject(j, "lora", cJSON_CreateArray());
    (void)l;
    return j;
}

/* {id, token, bytes, logprob} of one id; {..., prob} with post-sampling
 * probabilities */
static cJSON *prob_entry(const wick_model *m, int32_t id, float lp, bool post) {
    cJSON *o = cJSON_CreateObject();
    wbuf p = {0};
    prompt_piece(m, id, &p);
    cJSON_AddNumberToObject(o, "id", id);
    const size_t ok = utf8_valid_len(p.data ? p.data : "", p.len);
    char *str = strndup(p.data ? p.data : "", ok);
    cJSON_AddStringToObject(o, "token", str ? str : "");
    free(str);
    cJSON *bytes = cJSON_AddArrayToObject(o, "bytes");
    for (size_t i = 0; i < p.len; i++) cJSON_AddItemToArray(bytes, cJSON_CreateNumber((unsigned char)p.data[i]));
    if (post) cJSON_AddNumberToObject(o, "prob", lp);
    else cJSON_AddNumberToObject(o, "logprob", isfinite(lp) ? lp : -9999.0);
    wbuf_free(&p);
    return o;
}

cJSON *ln_probs_json(const wick_model *m, const job_event *ev, size_t n, bool post) {
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        const wick_token_info *t = &ev[i].tok;
        cJSON *o = prob_entry(m, t->id, post ? t->prob : t->logprob, post);
        cJSON *top = cJSON_AddArrayToObject(o, post ? "top_probs" : "top_logprobs");
        for (int k = 0; k < t->n_top; k++)
            cJSON_AddItemToArray(top, prob_entry(m, t->top_ids[k], post ? t->top_probs[k] : t->top_logprobs[k], post));
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static void add_ids(cJSON *o, const char *key, const job_event *ev, size_t n) {
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(ev[i].tok.id));
}

cJSON *ln_pick_fields(cJSON *o, const cJSON *paths) {
    cJSON *out = cJSON_CreateObject();
    const cJSON *p;
    cJSON_ArrayForEach(p, paths) {
        if (!cJSON_IsString(p)) continue;
        const cJSON *v = o;
        char *path = strdup(p->valuestring);
        for (char *save = NULL, *k = path ? strtok_r(path, "/", &save) : NULL; k && v; k = strtok_r(NULL, "/", &save))
            v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, k) : NULL;
        free(path);
        if (v && v != o && !cJSON_GetObjectItemCaseSensitive(out, p->valuestring))
            cJSON_AddItemToObject(out, p->valuestring, cJSON_Duplicate(v, 1));
    }
    cJSON_Delete(o);
    return out;
}

/* A stream's chunk carries the ids of its tokens (whatever return_tokens
 * says), as llama-server's partial results do. */
cJSON *ln_chunk_json(const ln_task *t, const job_event *ev, size_t n, const char *text) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", t->index);
    cJSON_AddStringToObject(o, "content", text);
    add_ids(o, "tokens", ev, n);
    cJSON_AddBoolToObject(o, "stop", false);
    cJSON_AddNumberToObject(o, "id_slot", t->slot);
    cJSON_AddNumberToObject(o, "tokens_predicted", (double)t->acc.n);
    cJSON_AddNumberToObject(o, "tokens_evaluated", t->n_ids);
    if (t->p->n_probs > 0 && n) cJSON_AddItemToObject(o, "completion_probabilities", ln_probs_json(t->lease->model, ev, n, t->p->g.post_sampling_probs));
    return o;
}

/* Which stop string ended the output (the first one found where the text
 * stops), "" if none. */
static const char *stopping_word(const ln_task *t, const char *content, size_t clen) {
    const fld_stops *st = &t->p->g.stop;
    if (!st->n || !t->acc.n) return "";
    int32_t *ids = malloc(sizeof *ids * t->acc.n);
    if (!ids) return "";
    for (size_t i = 0; i < t->acc.n; i++) ids[i] = t->acc.ev[i].tok.id;
    size_t len = 0;
    char *raw = tok_decode_len(wick_model_tokenizer(t->lease->model), ids, t->acc.n, false, &len, NULL);
    free(ids);
    const char *found = "";
    size_t best = (size_t)-1;
    for (int k = 0; raw && k < st->n; k++) {
        const size_t sl = strlen(st->v[k]);
        for (size_t at = clen > 8 ? clen - 8 : 0; at + sl <= len && at <= clen + 8; at++)
            if (memcmp(raw + at, st->v[k], sl) == 0 && at < best) {
                best = at;
                found = st->v[k];
                break;
            }
    }
    free(raw);
    (void)content;
    return found;
}

cJSON *ln_result_json(const ln_task *t, const job_result *res, bool stream) {
    const wick_model *m = t->lease->model;
    wbuf text = {0};
    wbuf_put(&text, t->acc.text ? t->acc.text : "", t->acc.text_len);
    if (res->tail_len) wbuf_put(&text, res->tail, res->tail_len);
    const char *content = text.data ? text.data : "";
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", t->index);
    cJSON_AddStringToObject(o, "content", stream ? "" : content);
    if (t->p->return_tokens && !stream) add_ids(o, "tokens", t->acc.ev, t->acc.n);
    else cJSON_AddItemToObject(o, "tokens", cJSON_CreateArray());
    cJSON_AddNumberToObject(o, "id_slot", t->slot);
    cJSON_AddBoolToObject(o, "stop", true);
    cJSON_AddStringToObject(o, "model", t->lease->name);
    cJSON_AddNumberToObject(o, "tokens_predicted", res->generated_tokens);
    cJSON_AddNumberToObject(o, "tokens_evaluated", res->prompt_tokens);
    cJSON_AddItemToObject(o, "generation_settings", ln_settings_json(t->p, t->lease));
    size_t plen = 0;
    char *ptext = tok_decode_len(wick_model_tokenizer(m), t->ids, (size_t)t->n_ids, false, &plen, NULL);
    cJSON_AddStringToObject(o, "prompt", ptext ? ptext : "");
    if (t->s->cfg.verbose && !stream) { /* --verbose: llama-server's __verbose */
        cJSON *v = cJSON_AddObjectToObject(o, "__verbose");
        cJSON_AddStringToObject(v, "prompt", ptext ? ptext : "");
        cJSON_AddStringToObject(v, "content", content);
    }
    free(ptext);
    cJSON_AddBoolToObject(o, "has_new_line", memchr(content, '\n', text.len) != NULL);
    /* truncated: a generation the full context ended (as llama-server says
     * it), or with --context-shift a prompt cut to fit or a context shifted */
    const bool ctx_full = res->finish == WICK_FINISH_LENGTH && res->prompt_tokens + res->generated_tokens >= t->lease->n_ctx;
    cJSON_AddBoolToObject(o, "truncated", ctx_full || t->truncated || res->ctx_shifts > 0);
    const bool eos = res->finish == WICK_FINISH_STOP && t->acc.n &&
                     tok_is_eog(wick_model_tokenizer(m), t->acc.ev[t->acc.n - 1].tok.id);
    const char *word = res->finish == WICK_FINISH_STOP && !eos ? stopping_word(t, content, text.len) : "";
    const char *type = res->finish == WICK_FINISH_LENGTH ? "limit" : eos ? "eos" : *word ? "word"
                     : res->finish == WICK_FINISH_STOP ? "eos" : "none";
    cJSON_AddStringToObject(o, "stop_type", type);
    cJSON_AddStringToObject(o, "stopping_word", word);
    cJSON_AddNumberToObject(o, "tokens_cached", res->prompt_tokens + res->generated_tokens - res->ctx_dropped);
    cJSON *tm = cJSON_AddObjectToObject(o, "timings");
    const int prompt_n = res->prompt_tokens - res->cached_tokens;
    cJSON_AddNumberToObject(tm, "cache_n", res->cached_tokens);
    cJSON_AddNumberToObject(tm, "prompt_n", prompt_n);
    cJSON_AddNumberToObject(tm, "prompt_ms", res->prefill_ms);
    cJSON_AddNumberToObject(tm, "prompt_per_token_ms", prompt_n > 0 ? res->prefill_ms / prompt_n : 0);
    cJSON_AddNumberToObject(tm, "prompt_per_second", res->prefill_ms > 0 ? 1e3 * prompt_n / res->prefill_ms : 0);
    cJSON_AddNumberToObject(tm, "predicted_n", res->generated_tokens);
    cJSON_AddNumberToObject(tm, "predicted_ms", res->decode_ms);
    cJSON_AddNumberToObject(tm, "predicted_per_token_ms", res->generated_tokens > 0 ? res->decode_ms / res->generated_tokens : 0);
    cJSON_AddNumberToObject(tm, "predicted_per_second", res->decode_ms > 0 ? 1e3 * res->generated_tokens / res->decode_ms : 0);
    if (t->p->n_probs > 0 && !stream) cJSON_AddItemToObject(o, "completion_probabilities", ln_probs_json(m, t->acc.ev, t->acc.n, t->p->g.post_sampling_probs));
    wbuf_free(&text);
    return t->p->fields ? ln_pick_fields(o, t->p->fields) : o;
}
