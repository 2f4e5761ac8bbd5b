/* serve.c — starting and stopping `wick serve` (see serve.h): the model
 * pool, the HTTP server, the access log, and the shutdown order (refuse
 * new work, end what runs, join the request threads, unload). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/error.h"
#include "serve/json_out.h"
#include "serve/llama_native.h"
#include "serve/server.h"

/* Append s to out with every byte a terminal or a log reader could take for
 * something else escaped: control characters (newlines, ANSI escapes, C1
 * controls), DEL, backslash and bytes that are not UTF-8 become \xNN (or
 * \\). */
static void log_escape(wbuf *out, const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        unsigned char ch = (unsigned char)s[i];
        size_t ok = ch >= 0x80 ? utf8_valid_len(s + i, n - i < 4 ? n - i : 4) : 0;
        const bool c1 = ch == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] < 0xA0; /* U+0080-U+009F: controls */
        if (ch >= 0x80 && ok > 0 && !c1) { /* one whole UTF-8 character */
            size_t len = ch >= 0xF0 ? 4 : ch >= 0xE0 ? 3 : 2;
            if (ok >= len) {
                wbuf_put(out, s + i, len);
                i += len;
                continue;
            }
        }
        if (ch == '\\') wbuf_puts(out, "\\\\");
        else if (ch < 0x20 || ch == 0x7f || ch >= 0x80) wbuf_printf(out, "\\x%02x", ch);
        else wbuf_put(out, s + i, 1);
        i++;
    }
}

static void access_log(void *user, const char *method, const char *path, int status, double ms,
                       const char *note) {
    serve_server *s = user;
    wbuf line = {0};
    log_escape(&line, method);
    wbuf_puts(&line, " ");
    log_escape(&line, path);
    wbuf_printf(&line, " %d %.1f ms", status, ms);
    if (note[0]) {
        wbuf_puts(&line, " ");
        log_escape(&line, note);
    }
    if (line.data && !line.oom) s->cfg.log(s->cfg.log_user, line.data);
    wbuf_free(&line);
}

/* The cache folder: created 0700 when missing; refused when it is not a
 * folder of this user's that no one else may write (its files hold prompt
 * token ids). Checked before listening, so that a server never says it is
 * ready while every request would fail. */
static int prepare_cache_dir(const char *dir, wick_error *err) {
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return wick_fail(err, "cannot create the cache folder %s (%s)", dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0) return wick_fail(err, "cannot read the cache folder %s (%s)", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode)) return wick_fail(err, "the cache folder %s is not a folder", dir);
    if (st.st_uid != geteuid())
        return wick_fail(err, "the cache folder %s belongs to another user (uid %u)", dir, (unsigned)st.st_uid);
    if (st.st_mode & 022)
        return wick_fail(err, "the cache folder %s may be written by others (mode %03o); chmod 700 it or choose another",
                         dir, (unsigned)(st.st_mode & 0777));
    return 0;
}

serve_server *serve_start(const serve_config *cfg, wick_error *err) {
    if (cfg->cache_dir && !cfg->no_prefix_cache && prepare_cache_dir(cfg->cache_dir, err) < 0) return NULL;
    serve_server *s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (!s->cfg.body_limit) s->cfg.body_limit = 8u << 20;
    if (!s->cfg.idle_timeout_s) s->cfg.idle_timeout_s = 600;
    if (!s->cfg.max_queue) s->cfg.max_queue = 512;
    if (!s->cfg.parallel) s->cfg.parallel = 8;
    s->started = wick_wall_s();
    if (!(s->responses = resp_store_new(256, 64u << 20))) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        free(s);
        return NULL;
    }
    if (!(s->slots = ln_slots_new(s->cfg.parallel))) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        resp_store_free(s->responses);
        free(s);
        return NULL;
    }
    if (origin_policy_init(&s->origins, cfg->allowed_origins, cfg->host) < 0) {
        wick_fail(err, "too many allowed origins (at most %d)", ORIGIN_MAX_PATTERNS);
        ln_slots_free(s->slots);
        resp_store_free(s->responses);
        free(s);
        return NULL;
    }
    kv_events *ev = NULL; /* the pool hands it back at serve_stop */
    if (cfg->kv_events && !(ev = kv_events_open(cfg->kv_events, cfg->kv_events_topic, cfg->host, err))) {
        origin_policy_free(&s->origins);
        ln_slots_free(s->slots);
        resp_store_free(s->responses);
        free(s);
        return NULL;
    }
    mpool_config pc = {
        .paths = cfg->models, .n_paths = cfg->n_models, .models_dir = cfg->models_dir,
        .max_loaded = cfg->max_loaded, .memory_budget = cfg->memory_budget, .keep_alive_s = cfg->keep_alive_s,
        .n_ctx = cfg->n_ctx, .n_seq = s->cfg.parallel, .n_threads = cfg->n_threads, .kv_type = cfg->kv_type,
        .prefill_chunk = cfg->prefill_chunk, .kv_bytes = cfg->kv_bytes, .dtype = cfg->dtype,
        .kv_tokens = cfg->kv_tokens, .aliases = cfg->aliases, .n_aliases = cfg->n_aliases,
        .chat_template = cfg->chat_template, .builtin_templates = cfg->builtin_templates,
        .any_model_name = cfg->any_model_name,
        .no_prefix_cache = cfg->no_prefix_cache, .no_span_cache = cfg->no_span_cache,
        .cache_bytes = cfg->cache_bytes,
        .cache_dir = cfg->cache_dir, .cache_dir_bytes = cfg->cache_dir_bytes,
        .warn = cfg->warn, .warn_user = cfg->warn_user,
        .max_queue = s->cfg.max_queue, .kv_events = ev, .spec = cfg->spec,
    };
    if (!(s->pool = mpool_new(&pc, err))) {
        kv_events_close(ev);
        origin_policy_free(&s->origins);
        ln_slots_free(s->slots);
        resp_store_free(s->responses);
        free(s);
        return NULL;
    }
    http_config hc = {
        .host = cfg->host, .port = cfg->port, .body_limit = s->cfg.body_limit, .body_budget = cfg->body_budget,
        .idle_timeout_s = s->cfg.idle_timeout_s, .header_timeout_s = cfg->header_timeout_s,
        .max_connections = cfg->max_connections, .max_per_ip = cfg->max_per_ip,
        .handler = routes_dispatch, .refuse = routes_refuse, .user = s,
        .log = cfg->log ? access_log : NULL, .log_user = s,
    };
    if (!(s->http = http_start(&hc, err))) {
        mpool_free(s->pool);
        kv_events_close(ev);
        origin_policy_free(&s->origins);
        ln_slots_free(s->slots);
        resp_store_free(s->responses);
        free(s);
        return NULL;
    }
    kv_events_set_port(ev, http_port(s->http)); /* for the default topic */
    mpool_preload(s->pool, NULL);
    return s;
}

int serve_port(const serve_server *s) { return http_port(s->http); }
const char *serve_default_model(const serve_server *s) { return mpool_default_name(s->pool); }

void serve_stop(serve_server *s) {
    if (!s) return;
    kv_events *ev = mpool_kv_events(s->pool);
    mpool_stop(s->pool);  /* requests waiting for a load give up */
    http_stop(s->http);  /* streams end at their next wait; connection threads joined */
    mpool_free(s->pool);  /* schedulers cancel what is left, models unload (AllBlocksCleared each) */
    kv_events_close(ev);  /* after the last event; lingers up to 1 s to send it */
    origin_policy_free(&s->origins);
    resp_store_free(s->responses);  /* after http_stop: no handler runs */
    ln_slots_free(s->slots);
    free(s);
}
