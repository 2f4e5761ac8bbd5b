/* model_pool.h — the models `wick serve` knows (-m paths and a --models-dir
 * scan) and the ones it holds loaded: each loaded model owns a context and a
 * started scheduler. Models load on first use on a loader thread (requests
 * for a loading model wait; others are not blocked), and idle models unload
 * when their keep-alive expires or, least recently used first, to make room
 * under --max-loaded-models / --memory-budget. A model with requests in
 * flight is never unloaded. */
#ifndef WICK_SERVE_MODEL_POOL_H
#define WICK_SERVE_MODEL_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "serve/kv_events.h"
#include "serve/metrics.h"
#include "wick.h"

typedef struct serve_pool serve_pool;
typedef struct mpool_entry mpool_entry;

typedef struct mpool_config {
    const char *const *paths; /* -m, in order; the first is the default model */
    int n_paths;
    const char *models_dir;   /* NULL = none */
    int max_loaded;           /* 0 = 3 */
    size_t memory_budget;     /* bytes; 0 = no limit */
    double keep_alive_s;      /* default keep-alive; < 0 = for ever */
    int n_ctx, n_seq, n_threads, kv_type, prefill_chunk;
    size_t kv_bytes;          /* KV pool per model; 0 = n_seq full contexts */
    bool no_prefix_cache;
    bool no_span_cache;       /* keep no span KV after a request (spans computed every time) */
    size_t cache_bytes;       /* idle cached KV per model; 0 = the pool */
    const char *cache_dir;    /* persist each model's cache in cache_dir/NAME; NULL = not */
    size_t cache_dir_bytes;   /* per model; 0 = 10 GiB */
    const char *dtype;        /* convert matrices at load; NULL = as stored */
    int max_queue;            /* scheduler queue limit; 0 = none */
    kv_events *kv_events;     /* publish each model's KV events here; NULL = none */
    size_t kv_tokens;         /* KV pool per model in positions; 0 = kv_bytes decides */
    const char *const *aliases; /* the default model's other names (the first is listed); valid while the pool lives */
    int n_aliases;
    const char *chat_template; /* replaces every model's own template; NULL = none */
    /* --no-jinja: each model's own template is replaced by the built-in
     * format it is recognised as (chat_template_detect), ChatML when none
     * is; a model without a template keeps the ChatML fallback */
    bool builtin_templates;
    bool any_model_name;       /* a name no model has is answered by the default model, under that name */
    const wick_spec_params *spec; /* speculative decoding (NULL = none); a model it does not fit
                                     (vocabulary, layers) speculates by prompt lookup only, with a warning */
    void (*warn)(void *user, const char *line); /* NULL = none */
    void *warn_user;
} mpool_config;

/* A model in use by one request: valid until mpool_release. */
typedef struct mpool_lease {
    mpool_entry *e;
    const char *name;   /* as listed: the first alias, else the file's name */
    wick_model *model;
    wick_context *ctx;
    wick_sched *sched;
    metrics_model *mx;
    int n_ctx;
    double load_ms; /* the load this request waited for, else 0 */
    char asked[128]; /* with any_model_name: the unknown name asked for (name points here) */
} mpool_lease;

/* What the listing endpoints show. */
typedef struct mpool_info {
    const char *name, *path; /* valid while the pool lives; name: the first alias if there are any */
    const char *file_name;   /* the name from the file or folder (answers requests too) */
    const char *const *aliases; /* every alias (--alias), of the default model only */
    int n_aliases;
    bool loaded, loading;
    uint64_t size;           /* bytes on disk (weights), or in memory when loaded */
    uint64_t mtime;          /* file modification time, seconds since the epoch */
    double expires_at;       /* wall-clock seconds; < 0 = never; 0 = not loaded */
    int n_ctx;               /* when loaded */
    bool known;              /* the fields below come from a load */
    char arch[32], format[8], quant[16];
    int64_t n_params;
    int n_ctx_train;
} mpool_info;

serve_pool *mpool_new(const mpool_config *cfg, wick_error *err);
/* Stop the loader (waiters get 503), unload everything, free. Call after the
 * HTTP server has stopped, so no lease is outstanding. */
void mpool_free(serve_pool *p);
/* Wake requests waiting for loads with 503; later acquires fail. */
void mpool_stop(serve_pool *p);

kv_events *mpool_kv_events(const serve_pool *p);
const char *mpool_default_name(const serve_pool *p);
/* The default model's state: 1 loaded (or loaded before), 0 loading, -1
 * failed (msg gets why). */
int mpool_default_state(serve_pool *p, char *msg, size_t cap);
/* The default model was loaded and has since been unloaded for idleness
 * (llama-server's sleeping state, --sleep-idle-seconds): the next request
 * that needs it loads it again. */
bool mpool_default_sleeping(serve_pool *p);
/* Start loading a model in the background (the default one at startup). */
void mpool_preload(serve_pool *p, const char *name);

/* Take a model for one request, loading it first if needed (blocking).
 * name NULL or "" = the default. Returns 0, or -1 with err: WICK_E_NOT_FOUND
 * (no such model; err lists those there are), WICK_E_INTERNAL (the load
 * failed: the server's fault whatever the cause), WICK_E_UNAVAILABLE
 * (shutting down). */
int mpool_acquire(serve_pool *p, const char *name, mpool_lease *out, wick_error *err);
/* keep_alive_s: how long the model stays loaded once idle; NAN = the
 * default, < 0 = for ever, 0 = unload as soon as idle. */
void mpool_release(serve_pool *p, mpool_lease *l, double keep_alive_s);
/* Release a lease that only read the model's details (/props): it does not
 * count as use, so an idle model's keep-alive runs on. */
void mpool_release_peek(serve_pool *p, mpool_lease *l);

/* Snapshots (up to cap entries; returns how many). */
int mpool_list(serve_pool *p, mpool_info *out, int cap);
int mpool_metrics(serve_pool *p, metrics_view *out, int cap);

#endif
