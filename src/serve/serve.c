/* serve.c — starting and stopping `wick serve` (see serve.h): the model
 * pool, the HTTP server, the access log, and the shutdown order (refuse
 * new work, end what runs, join the connection threads, unload). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "serve/server.h"

static void access_log(void *user, const char *method, const char *path, int status, double ms,
                       const char *note) {
    serve_server *s = user;
    char line[600];
    snprintf(line, sizeof line, "%s %s %d %.1f ms%s%s", method, path, status, ms, note[0] ? " " : "", note);
    s->cfg.log(s->cfg.log_user, line);
}

serve_server *serve_start(const serve_config *cfg, wick_error *err) {
    serve_server *s = calloc(1, sizeof *s);
    if (!s) {
        wick_fail(err, "out of memory");
        return NULL;
    }
    s->cfg = *cfg;
    if (!s->cfg.body_limit) s->cfg.body_limit = 8u << 20;
    if (!s->cfg.idle_timeout_s) s->cfg.idle_timeout_s = 600;
    if (!s->cfg.max_queue) s->cfg.max_queue = 512;
    if (!s->cfg.parallel) s->cfg.parallel = 8;
    s->started = reply_wall_now();
    kv_events *ev = NULL; /* the pool hands it back at serve_stop */
    if (cfg->kv_events && !(ev = kv_events_open(cfg->kv_events, cfg->kv_events_topic, cfg->host, err))) {
        free(s);
        return NULL;
    }
    mpool_config pc = {
        .paths = cfg->models, .n_paths = cfg->n_models, .models_dir = cfg->models_dir,
        .max_loaded = cfg->max_loaded, .memory_budget = cfg->memory_budget, .keep_alive_s = cfg->keep_alive_s,
        .n_ctx = cfg->n_ctx, .n_seq = s->cfg.parallel, .n_threads = cfg->n_threads, .kv_type = cfg->kv_type,
        .prefill_chunk = cfg->prefill_chunk, .kv_bytes = cfg->kv_bytes, .dtype = cfg->dtype,
        .no_prefix_cache = cfg->no_prefix_cache, .no_span_cache = cfg->no_span_cache,
        .cache_bytes = cfg->cache_bytes,
        .cache_dir = cfg->cache_dir, .cache_dir_bytes = cfg->cache_dir_bytes,
        .warn = cfg->warn, .warn_user = cfg->warn_user,
        .max_queue = s->cfg.max_queue, .kv_events = ev, .spec = cfg->spec,
    };
    if (!(s->pool = mpool_new(&pc, err))) {
        kv_events_close(ev);
        free(s);
        return NULL;
    }
    http_config hc = {
        .host = cfg->host, .port = cfg->port, .body_limit = s->cfg.body_limit,
        .idle_timeout_s = s->cfg.idle_timeout_s, .handler = routes_dispatch, .user = s,
        .log = cfg->log ? access_log : NULL, .log_user = s,
    };
    if (!(s->http = http_start(&hc, err))) {
        mpool_free(s->pool);
        kv_events_close(ev);
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
    free(s);
}
