/* serve.h — `wick serve` as a library: an HTTP server with OpenAI- and
 * Ollama-compatible routes, health, tokenize/render and Prometheus metrics,
 * over a pool of models each driven by a continuous-batching scheduler.
 * The library never prints: the access log goes to a callback. */
#ifndef WICK_SERVE_SERVE_H
#define WICK_SERVE_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include "wick.h"

typedef void (*serve_log_fn)(void *user, const char *line);

/* Server-wide sampling defaults (llama-server's --temp, --top-k, ...): each
 * one given overrides the model's default; a request's own field overrides
 * it in turn (see sampling_base.h). */
typedef struct serve_sampling_flags {
    wick_sampling v;  /* the values; only those marked given are read */
    bool temp, top_k, top_p, min_p, rep, rep_n, pres, freq, seed; /* given */
} serve_sampling_flags;

typedef struct serve_config {
    const char *host;             /* NULL = 127.0.0.1 */
    int port;                     /* 0 = any free port (see serve_port) */
    const char *api_key;          /* NULL = any key (or none) is accepted */
    const char *metrics_key;      /* NULL = /metrics is open; else it needs this key */
    const char *allowed_origins;  /* browser origins allowed beyond the loopback ones: comma-separated
                                     patterns with '*' wildcards (origin.h); NULL = none */
    size_t body_limit;            /* bytes; 0 = 8 MiB */
    size_t body_budget;           /* bytes of all request bodies held at once; 0 = 8 x body_limit, >= 64 MiB */
    int idle_timeout_s;           /* a connection without traffic is closed after this; 0 = 600 */
    int header_timeout_s;         /* a whole request must arrive within this; 0 = 30, < 0 = none */
    int max_connections;          /* 0 = 2048 */
    int max_per_ip;               /* connections per client address; 0 = 512 */
    double request_timeout_s;     /* a generation running longer is cancelled; 0 = none */
    bool reasoning_inline;        /* --reasoning-format none: thinking stays in the content */
    bool reasoning_off;           /* --reasoning off: templates get enable_thinking false (see prompt_chat_opts) */
    int max_queue;                /* per model; 0 = 512 */
    /* models */
    const char *const *models;    /* -m paths; the first is the default */
    int n_models;
    const char *models_dir;
    int max_loaded;               /* 0 = 3 */
    size_t memory_budget;         /* bytes; 0 = none */
    double keep_alive_s;          /* < 0 = for ever */
    /* per loaded model */
    int n_threads, n_ctx, kv_type, parallel, prefill_chunk;
    size_t kv_bytes;              /* 0 = parallel full contexts */
    bool no_prefix_cache;         /* turn the automatic prefix cache off */
    bool no_span_cache;           /* keep no span KV after span requests (computed every time) */
    size_t cache_bytes;           /* KV kept cached while no request holds it; 0 = the whole pool */
    const char *cache_dir;        /* persist cached blocks here; NULL = none */
    size_t cache_dir_bytes;       /* disk budget of cache_dir; 0 = 10 GiB */
    const char *kv_events;        /* ZMQ endpoint for KV events; NULL = none */
    const char *kv_events_topic;  /* NULL = "kv@HOST:PORT@MODEL" */
    const char *slot_save_path;   /* --slot-save-path: where POST /slots/{id}?action=save writes; NULL = saving is off */
    bool no_slots;                /* --no-slots: GET /slots is a 501, as llama-server answers */
    bool no_webui;                /* --no-webui: / is "Ollama is running" for browsers too; no /webui/ files */
    const char *dtype;
    size_t kv_tokens;             /* KV pool per model in positions (-c/--ctx-size); 0 = kv_bytes decides */
    /* the default model's other names (--alias): each answers in "model" fields;
     * the first is the name the APIs list and answer with */
    const char *const *aliases;
    int n_aliases;
    const char *const *tags;      /* --tags: the default model's tags, listed by /v1/models */
    int n_tags;
    const char *chat_template;    /* Jinja text replacing every model's own template; NULL = the model's */
    bool builtin_templates;       /* --no-jinja: models' templates read as built-in formats (mpool_config) */
    /* --any-model-name: a request naming a model the server does not have is
     * answered by the default model, under the name asked for (as a
     * single-model llama-server answers) instead of a 404 */
    bool any_model_name;
    serve_sampling_flags sampling; /* server-wide sampling defaults */
    long long n_predict;          /* -n: tokens generated when a request sets no limit; 0 or < 0 = none */
    /* --context-shift (llama-server's): a prompt that fills a sequence's
     * context is cut (its first n_keep tokens and whole blocks of its end
     * kept) and a generation that fills it drops tokens and goes on; off (the
     * default): such a prompt is a 400 and a full context ends the request */
    bool ctx_shift;
    /* speculative decoding: what every model's scheduler may speculate with
     * (a draft model applies to models of its vocabulary); NULL = none */
    const wick_spec_params *spec;
    serve_log_fn log;             /* one line per request; NULL = none */
    bool verbose;                 /* --verbose: non-streamed chat and /completion answers carry llama-server's __verbose */
    void *log_user;
    serve_log_fn warn;            /* things an operator should see (skipped cache files); NULL = none */
    void *warn_user;
} serve_config;

typedef struct serve_server serve_server;

/* Start listening and begin loading the default model in the background. */
serve_server *serve_start(const serve_config *cfg, wick_error *err);
int serve_port(const serve_server *s);
const char *serve_default_model(const serve_server *s);
/* Cancel what runs, close every connection, unload every model, free. */
void serve_stop(serve_server *s);

#endif
