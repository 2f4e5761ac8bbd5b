/* openai_format.c — /v1/completions response bodies: whole, SSE chunks
 * (one id for all, finish_reason last, usage when asked), mid-stream
 * errors, and logprobs in the chat and completions shapes (the chat route's
 * own bodies are openai_chat.c's).
 * Written by hand: this runs once per streamed token. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "serve/json_out.h"
#include "serve/openai.h"
#include "serve/prompt.h"

static void piece_json(wbuf *o, const wick_model *m, int32_t id, bool bytes) {
    wbuf p = {0};
    prompt_piece(m, id, &p);
    wbuf_puts(o, "\"token\":");
    json_put_str(o, p.data ? p.data : "", p.len);
    if (bytes) {
        wbuf_puts(o, ",\"bytes\":[");
        for (size_t i = 0; i < p.len; i++) wbuf_printf(o, i ? ",%u" : "%u", (unsigned char)p.data[i]);
        wbuf_puts(o, "]");
    }
    wbuf_free(&p);
}

/* {"content":[{token, logprob, bytes, top_logprobs:[...]}, ...]} */
void oai_chat_logprobs(wbuf *o, const wick_model *m, const job_event *ev, size_t n) {
    wbuf_puts(o, "{\"content\":[");
    for (size_t i = 0; i < n; i++) {
        const wick_token_info *t = &ev[i].tok;
        wbuf_puts(o, i ? ",{" : "{");
        piece_json(o, m, t->id, true);
        wbuf_puts(o, ",\"logprob\":");
        json_put_num(o, t->logprob);
        wbuf_puts(o, ",\"top_logprobs\":[");
        for (int k = 0; k < t->n_top; k++) {
            wbuf_puts(o, k ? ",{" : "{");
            piece_json(o, m, t->top_ids[k], true);
            wbuf_puts(o, ",\"logprob\":");
            json_put_num(o, t->top_logprobs[k]);
            wbuf_puts(o, "}");
        }
        wbuf_puts(o, "]}");
    }
    wbuf_puts(o, "]}");
}

/* {"tokens":[...],"token_logprobs":[...],"top_logprobs":[{piece: lp}],"text_offset":[...]} */
static void completion_logprobs(wbuf *o, const wick_model *m, const job_event *ev, size_t n, long long base) {
    wbuf p = {0};
    wbuf_puts(o, "{\"tokens\":[");
    for (size_t i = 0; i < n; i++) {
        wbuf_reset(&p);
        prompt_piece(m, ev[i].tok.id, &p);
        if (i) wbuf_puts(o, ",");
        json_put_str(o, p.data ? p.data : "", p.len);
    }
    wbuf_puts(o, "],\"token_logprobs\":[");
    for (size_t i = 0; i < n; i++) {
        if (i) wbuf_puts(o, ",");
        json_put_num(o, ev[i].tok.logprob);
    }
    wbuf_puts(o, "],\"top_logprobs\":[");
    wbuf keys[WICK_MAX_TOP_LOGPROBS] = {{0}};
    for (size_t i = 0; i < n; i++) {
        wbuf_puts(o, i ? ",{" : "{");
        for (int k = 0; k < ev[i].tok.n_top; k++) {
            wbuf_reset(&p);
            prompt_piece(m, ev[i].tok.top_ids[k], &p);
            wbuf *key = &keys[k];
            wbuf_reset(key);
            json_put_str(key, p.data ? p.data : "", p.len);
            /* pieces that are not whole UTF-8 characters may print alike ("\uFFFD"):
             * a key seen before in this object becomes "bytes:\\xHH..." (OpenAI's form) */
            for (int q = 0; q < k; q++) {
                if (keys[q].len != key->len || memcmp(keys[q].data, key->data, key->len) != 0) continue;
                wbuf_reset(key);
                wbuf_puts(key, "\"bytes:");
                for (size_t b = 0; b < p.len; b++) wbuf_printf(key, "\\\\x%02x", (unsigned char)p.data[b]);
                if (!p.len) wbuf_printf(key, "%d", ev[i].tok.top_ids[k]);
                wbuf_puts(key, "\"");
                break;
            }
            if (k) wbuf_puts(o, ",");
            wbuf_put(o, key->data, key->len);
            wbuf_puts(o, ":");
            json_put_num(o, ev[i].tok.top_logprobs[k]);
        }
        wbuf_puts(o, "}");
    }
    for (int k = 0; k < WICK_MAX_TOP_LOGPROBS; k++) wbuf_free(&keys[k]);
    wbuf_puts(o, "],\"text_offset\":[");
    for (size_t i = 0; i < n; i++) wbuf_printf(o, i ? ",%lld" : "%lld", base + (long long)ev[i].off);
    wbuf_puts(o, "]}");
    wbuf_free(&p);
}

/* The request's usage: prompt tokens once per prompt, every choice's
 * completion tokens; span_cached_tokens (span requests only): the cached
 * tokens that were spans placed from the span cache. */
static void usage_json(wbuf *o, const oai_resp *r) {
    int prompt = r->prompt_tokens, cached = r->cached_tokens, span = r->span_cached_tokens, gen = 0;
    for (int i = 0; i < r->n_ch; i++) {
        const job_result *res = job_get_result(r->ch[i].j);
        gen += res->generated_tokens;
        if (!r->ch[i].counts_prompt) continue;
        prompt += res->prompt_tokens;
        cached += res->cached_tokens;
        span += res->span_cached_tokens;
    }
    wbuf_printf(o,
                "{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                "\"prompt_tokens_details\":{\"cached_tokens\":%d",
                prompt, gen, prompt + gen, cached);
    if (r->spans) wbuf_printf(o, ",\"span_cached_tokens\":%d", span);
    wbuf_puts(o, "}}");
}

static void head(wbuf *o, const oai_resp *r) {
    wbuf_printf(o, "{\"id\":\"%s\",\"object\":\"text_completion\",\"created\":%lld,\"model\":", r->id,
                r->created);
    json_put_str(o, r->lease.name, strlen(r->lease.name));
    wbuf_printf(o, ",\"system_fingerprint\":\"%s\"", wick_fingerprint());
}

void oai_format_whole(oai_resp *r, const job_batch *acc, wbuf *o) {
    const wick_model *m = r->lease.model;
    head(o, r);
    wbuf_puts(o, ",\"choices\":[");
    wbuf *text = &(wbuf){0};
    for (int i = 0; i < r->n_ch; i++) {
        const oai_choice *k = &r->ch[i];
        const job_result *res = job_get_result(k->j);
        wbuf_printf(o, "%s{\"index\":%d,", i ? "," : "", k->index);
        wbuf_reset(text);
        wbuf_put(text, k->echo.data ? k->echo.data : "", k->echo.len);
        wbuf_put(text, acc[i].text ? acc[i].text : "", acc[i].text_len);
        if (res->tail_len) wbuf_put(text, res->tail, res->tail_len);
        wbuf_puts(o, "\"text\":");
        json_put_str(o, text->data ? text->data : "", text->len);
        wbuf_puts(o, ",\"logprobs\":");
        if (r->logprobs >= 0) completion_logprobs(o, m, acc[i].ev, acc[i].n, (long long)k->echo.len);
        else wbuf_puts(o, "null");
        wbuf_printf(o, ",\"finish_reason\":\"%s\"}", gen_finish_name(res->finish));
    }
    wbuf_free(text);
    wbuf_puts(o, "],\"usage\":");
    usage_json(o, r);
    wbuf_puts(o, "}");
}

/* One chunk of choice k: text (may be empty), events for logprobs, finish reason or NULL. */
static void chunk(oai_resp *r, oai_choice *k, wbuf *o, const char *text, size_t len, const job_event *ev, size_t n,
                  const char *finish) {
    wbuf_puts(o, "data: ");
    head(o, r);
    wbuf_printf(o, ",\"choices\":[{\"index\":%d,", k->index);
    wbuf_puts(o, "\"text\":");
    json_put_str(o, text, len);
    wbuf_puts(o, ",\"logprobs\":");
    if (r->logprobs >= 0 && n) completion_logprobs(o, r->lease.model, ev, n, (long long)k->text_off - (long long)ev[0].off);
    else wbuf_puts(o, "null");
    k->text_off += len;
    if (finish) wbuf_printf(o, ",\"finish_reason\":\"%s\"}]", finish);
    else wbuf_puts(o, ",\"finish_reason\":null}]");
    if (r->continuous_usage && !finish)
        wbuf_printf(o, ",\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d}", k->n_prompt,
                    k->n_gen, k->n_prompt + k->n_gen);
    else if (r->include_usage) wbuf_puts(o, ",\"usage\":null");
    wbuf_puts(o, "}\n\n");
}

static void error_event(wbuf *o, const char *msg, const char *type, int code) {
    wbuf_puts(o, "data: {\"error\":{\"message\":");
    json_put_str(o, msg, strlen(msg));
    wbuf_printf(o, ",\"type\":\"%s\",\"param\":null,\"code\":%d}}\n\n", type, code);
}

/* Choice k's chunks of its last batch: one per token (with logprobs) or per
 * piece of text. */
static void batch_chunks(oai_resp *r, oai_choice *k, wbuf *o) {
    k->n_gen += (int)k->b.n;
    for (size_t i = 0; i < k->b.n; i++) {
        if (r->logprobs >= 0) chunk(r, k, o, k->b.text + k->b.ev[i].off, k->b.ev[i].len, &k->b.ev[i], 1, NULL);
        else if (k->b.ev[i].len) chunk(r, k, o, k->b.text + k->b.ev[i].off, k->b.ev[i].len, NULL, 0, NULL);
    }
}

int oai_stream_pull(void *ctx, wbuf *o, int timeout_ms) {
    oai_resp *r = ctx;
    if (r->phase == 2) return 0;
    if (r->phase == 0) {
        r->phase = 1;
        r->t0 = wick_now_s();
        for (int i = 0; i < r->n_ch; i++)
            if (r->ch[i].echo.len) chunk(r, &r->ch[i], o, r->ch[i].echo.data, r->ch[i].echo.len, NULL, 0, NULL);
    }
    const bool stopping = http_stopping(r->s->http); /* each ends with a "cancelled" error event */
    const double limit = r->s->cfg.request_timeout_s;
    const bool late = limit > 0 && wick_now_s() - r->t0 > limit;
    bool waited = false, all_ended = true;
    for (int i = 0; i < r->n_ch; i++) {
        oai_choice *k = &r->ch[i];
        if (k->ended) continue;
        if (stopping || late) job_cancel(k->j);
        const bool got = job_take(k->j, &k->b, waited ? 0 : timeout_ms);
        waited = true;
        if (!got) {
            all_ended = false;
            continue;
        }
        batch_chunks(r, k, o);
        if (!k->b.done) {
            all_ended = false;
            continue;
        }
        k->ended = true;
        const job_result *res = job_get_result(k->j);
        if (res->finish == WICK_FINISH_ERROR || res->finish == WICK_FINISH_CANCELLED) { /* the stream ends with it */
            if (res->finish == WICK_FINISH_ERROR) error_event(o, res->error ? res->error : "generation failed", "server_error", 500);
            else error_event(o, "request cancelled (timeout or server shutting down)", "server_error", 503);
            r->phase = 2;
            wbuf_puts(o, "data: [DONE]\n\n");
            return 0;
        }
        chunk(r, k, o, res->tail ? res->tail : "", res->tail_len, NULL, 0, gen_finish_name(res->finish));
    }
    if (!all_ended) return 1;
    r->phase = 2;
    if (r->include_usage) {
        wbuf_puts(o, "data: ");
        head(o, r);
        wbuf_puts(o, ",\"choices\":[],\"usage\":");
        usage_json(o, r);
        wbuf_puts(o, "}\n\n");
    }
    wbuf_puts(o, "data: [DONE]\n\n");
    return 0;
}

void oai_stream_fin(void *ctx, bool aborted) {
    (void)aborted;
    oai_resp *r = ctx;
    for (int i = 0; i < r->n_ch; i++) {
        oai_choice *k = &r->ch[i];
        if (k->j) job_release(k->j);
        job_batch_free(&k->b);
        wbuf_free(&k->echo);
    }
    free(r->ch);
    mpool_release(r->s->pool, &r->lease, NAN);
    free(r);
}
