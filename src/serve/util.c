/* util.c — the routes beside the two APIs: /health (llama.cpp's shape),
 * /metrics (Prometheus text), /tokenize and /detokenize (llama-server's
 * fields: add_special, parse_special, with_pieces, whose pieces are strings
 * when they are whole UTF-8 and byte arrays when not). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve/json_out.h"
#include "serve/llama_native.h"
#include "serve/prompt.h"
#include "serve/server.h"
#include "text/tokenizer.h"

void util_health(serve_server *s, http_call *c) {
    char msg[512];
    int st = mpool_default_state(s->pool, msg, sizeof msg);
    if (st > 0) {
        reply_text(c, 200, "application/json", "{\"status\":\"ok\"}");
        return;
    }
    cJSON *j = cJSON_CreateObject(), *e = cJSON_AddObjectToObject(j, "error");
    cJSON_AddNumberToObject(e, "code", st == 0 ? 503 : 500);
    cJSON_AddStringToObject(e, "message", st == 0 ? "Loading model" : msg);
    cJSON_AddStringToObject(e, "type", st == 0 ? "unavailable_error" : "server_error");
    reply_json(c, st == 0 ? 503 : 500, j);
}

void util_metrics(serve_server *s, http_call *c) {
    metrics_view v[256];
    int n = mpool_metrics(s->pool, v, 256);
    wbuf o = {0};
    metrics_render(&o, v, n);
    http_reply_wbuf(c, 200, "text/plain; version=0.0.4; charset=utf-8", &o);
}

void util_tokenize(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    const char *text = NULL;
    bool add_special = false, pieces = false; /* llama.cpp's default: no BOS unless asked */
    bool parse_special = true;                /* special-token text becomes its id */
    const cJSON *mixed = cJSON_GetObjectItemCaseSensitive(b, "content"); /* llama-server's ids and strings */
    if (!cJSON_IsArray(mixed)) mixed = NULL;
    if ((!mixed && fld_str(b, "content", &text, &e) < 0) || (!text && !mixed && fld_str(b, "prompt", &text, &e) < 0) ||
        fld_bool(b, "add_special", &add_special, &e) < 0 || fld_bool(b, "with_pieces", &pieces, &e) < 0 ||
        fld_bool(b, "parse_special", &parse_special, &e) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    if (!text && !mixed) {
        fld_fail(&e, 400, "content", "\"content\" is required");
        reply_openai_error(c, &e);
        return;
    }
    mpool_lease l;
    if (oai_lease_model(s, c, b, &l) < 0) return;
    int32_t *ids = NULL;
    int n = 0;
    int rc;
    if (mixed) {
        rc = ln_prompt_mixed(l.model, mixed, add_special, 0, &ids, &n, &e);
    } else if (parse_special) {
        rc = prompt_text(l.model, text, add_special, 0, &ids, &n, &e);
    } else {
        wick_error err;
        size_t k = 0;
        rc = tok_encode(wick_model_tokenizer(l.model), text, strlen(text), add_special, false, &ids, &k, &err);
        if (rc < 0) fld_fail_wick(&e, &err, "content");
        n = (int)k;
    }
    if (rc < 0) {
        mpool_release(s->pool, &l, NAN);
        reply_openai_error(c, &e);
        return;
    }
    wbuf o = {0}, p = {0};
    wbuf_puts(&o, "{\"tokens\":[");
    for (int i = 0; i < n; i++) {
        if (i) wbuf_puts(&o, ",");
        if (pieces) {
            wbuf_reset(&p);
            prompt_piece(l.model, ids[i], &p);
            wbuf_printf(&o, "{\"id\":%d,\"piece\":", ids[i]);
            if (utf8_valid_len(p.data ? p.data : "", p.len) == p.len) {
                json_put_str(&o, p.data ? p.data : "", p.len);
            } else { /* part of a character: its bytes */
                wbuf_puts(&o, "[");
                for (size_t k = 0; k < p.len; k++) wbuf_printf(&o, k ? ",%u" : "%u", (unsigned char)p.data[k]);
                wbuf_puts(&o, "]");
            }
            wbuf_puts(&o, "}");
        } else {
            wbuf_printf(&o, "%d", ids[i]);
        }
    }
    wbuf_printf(&o, "],\"count\":%d,\"max_model_len\":%d}", n, l.n_ctx);
    mpool_release(s->pool, &l, NAN);
    wbuf_free(&p);
    free(ids);
    http_reply_wbuf(c, 200, "application/json", &o);
}

void util_detokenize(serve_server *s, http_call *c, cJSON *b) {
    fld_error e = {0};
    const cJSON *toks = NULL;
    if (fld_array(b, "tokens", &toks, &e) < 0) {
        reply_openai_error(c, &e);
        return;
    }
    if (!toks) {
        fld_fail(&e, 400, "tokens", "\"tokens\" is required");
        reply_openai_error(c, &e);
        return;
    }
    mpool_lease l;
    if (oai_lease_model(s, c, b, &l) < 0) return;
    const wick_tokenizer *t = wick_model_tokenizer(l.model);
    int nv = wick_tokenizer_n_vocab(t), n = cJSON_GetArraySize(toks), i = 0;
    int32_t *ids = malloc(sizeof *ids * (size_t)(n ? n : 1));
    const cJSON *it;
    bool ok = ids != NULL;
    cJSON_ArrayForEach(it, toks) {
        if (!ok) break;
        if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) || it->valuedouble < 0 ||
            it->valuedouble >= nv)
            ok = false;
        else
            ids[i++] = (int32_t)it->valuedouble;
    }
    wick_error err;
    size_t len = 0;
    char *text = ok ? wick_tokenizer_decode(t, ids, (size_t)i, false, &len, &err) : NULL;
    mpool_release(s->pool, &l, NAN);
    free(ids);
    if (!text) {
        fld_fail(&e, 400, "tokens", "\"tokens\" must be an array of token ids in [0, %d)", nv);
        reply_openai_error(c, &e);
        return;
    }
    wbuf o = {0};
    wbuf_puts(&o, "{\"content\":");
    json_put_str(&o, text, len);
    wbuf_puts(&o, "}");
    free(text);
    http_reply_wbuf(c, 200, "application/json", &o);
}
