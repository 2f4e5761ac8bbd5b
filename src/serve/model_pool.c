/* model_pool.c — loading, keeping and unloading models for `wick serve`
 * (see model_pool.h). One mutex guards the entries' states and counts; it is
 * never held across a load, an unload or anything else slow. The loader
 * thread does every load and unload. */
#include "serve/model_pool.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/fileio.h"
#include "template/chat_template.h"
#include "text/tokenizer.h"

#define POOL_MAX 256

typedef enum mpool_state { ST_UNLOADED, ST_LOADING, ST_READY, ST_UNLOADING, ST_FAILED } mpool_state;

struct mpool_entry {
    char *name, *path;
    mpool_state state;
    bool want_load, ever_loaded;
    int refs;
    unsigned load_gen;    /* bumped when a load ends, either way */
    char error[512];      /* the last load failure */
    double last_used;     /* monotonic seconds */
    double expires_at;    /* monotonic seconds; INFINITY = never */
    double load_ms;
    uint64_t disk_bytes, mtime, mem_bytes;
    wick_model *model;
    wick_context *ctx;
    wick_sched *sched;
    kv_events_model *kvev;
    int n_ctx;
    wick_sched_stats base; /* counters of earlier loads */
    uint64_t disk_err_base[WICK_CACHE_ERR_KINDS]; /* cache-folder failures of earlier loads */
    const serve_pool *pool;
    wick_sched_stats last; /* gauges config of the last load */
    metrics_model mx;
    mpool_info info;        /* facts from the last load */
};

struct serve_pool {
    mpool_config cfg;
    mpool_entry *e[POOL_MAX];
    int n;
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* state changes: loads, unloads, releases */
    pthread_t loader;
    bool loader_started, stop;
};



/* ------------------------------------------------------------ discovery */

static uint64_t path_bytes(const char *path, uint64_t *mtime) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    *mtime = (uint64_t)st.st_mtime;
    if (!S_ISDIR(st.st_mode)) return (uint64_t)st.st_size;
    uint64_t sum = 0;
    DIR *d = opendir(path);
    if (!d) return 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 12 || strcmp(de->d_name + l - 12, ".safetensors") != 0) continue;
        char p[4096];
        struct stat fs;
        if (path_join(p, sizeof p, path, de->d_name) == 0 && stat(p, &fs) == 0) sum += (uint64_t)fs.st_size;
    }
    closedir(d);
    return sum;
}

/* The model's name: the file name without .gguf, or the directory's name. */
static char *model_name(const char *path) {
    size_t l = strlen(path);
    while (l > 1 && path[l - 1] == '/') l--;
    size_t b = l;
    while (b > 0 && path[b - 1] != '/') b--;
    size_t n = l - b;
    if (n > 5 && strncmp(path + l - 5, ".gguf", 5) == 0) n -= 5;
    return strndup(path + b, n);
}

/* A name that is also a safe folder name under --cache-dir: not empty, not
 * starting with '.', no '/' or control characters. */
static bool usable_name(const char *name) {
    if (!name[0] || name[0] == '.') return false;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p == '/' || *p < 0x20 || *p == 0x7f) return false;
    return true;
}

/* The name e is listed and answers under: the first --alias of the default model, else its file's name. */
static const char *shown_name(const serve_pool *p, const mpool_entry *e) {
    return p->cfg.n_aliases > 0 && p->n && e == p->e[0] ? p->cfg.aliases[0] : e->name;
}

/* Whether name (its first len bytes) is one of e's names: the file's, or an alias of the default model. */
static bool has_name(const serve_pool *p, const mpool_entry *e, const char *name, size_t len) {
    if (strlen(e->name) == len && strncmp(e->name, name, len) == 0) return true;
    if (!p->n || e != p->e[0]) return false;
    for (int i = 0; i < p->cfg.n_aliases; i++)
        if (strlen(p->cfg.aliases[i]) == len && strncmp(p->cfg.aliases[i], name, len) == 0) return true;
    return false;
}

static mpool_entry *find_locked(const serve_pool *p, const char *name) {
    if (!name || !*name) return p->n ? p->e[0] : NULL;
    size_t l = strlen(name);
    for (int i = 0; i < p->n; i++)
        if (has_name(p, p->e[i], name, l)) return p->e[i];
    if (l > 7 && strcmp(name + l - 7, ":latest") == 0)
        for (int i = 0; i < p->n; i++)
            if (has_name(p, p->e[i], name, l - 7)) return p->e[i];
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->e[i]->path, name) == 0) return p->e[i];
    return NULL;
}

static int add_model(serve_pool *p, const char *path, wick_error *err) {
    char *name = model_name(path);
    if (!name) return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    if (!usable_name(name)) {
        wick_fail(err, "%s gives no usable model name (\"%s\": names may not be empty or start with '.'); rename the file",
                  path, name);
        free(name);
        return -1;
    }
    if (p->n && strcmp(p->e[0]->name, name) != 0 && has_name(p, p->e[0], name, strlen(name))) {
        wick_fail(err, "--alias \"%s\" is also the name of %s; choose another alias", name, path);
        free(name);
        return -1;
    }
    if (find_locked(p, name) && p->n) {
        free(name); /* a name seen before: the first wins */
        return 0;
    }
    if (p->n == POOL_MAX) {
        free(name);
        return wick_fail(err, "too many models (at most %d)", POOL_MAX);
    }
    mpool_entry *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) {
        free(e);
        free(name);
        return wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
    }
    e->name = name;
    e->pool = p;
    e->disk_bytes = path_bytes(path, &e->mtime);
    e->expires_at = INFINITY;
    metrics_model_init(&e->mx);
    p->e[p->n++] = e;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int scan_dir(serve_pool *p, const char *dir, wick_error *err) {
    DIR *d = opendir(dir);
    if (!d) return wick_fail(err, "cannot open models directory %s", dir);
    char *names[POOL_MAX];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) && n < POOL_MAX) {
        if (de->d_name[0] == '.') continue;
        bool ctl = false;
        for (const unsigned char *q = (const unsigned char *)de->d_name; *q; q++) ctl |= *q < 0x20 || *q == 0x7f;
        if (ctl) continue; /* no usable model name */
        char path[4096], cfg[4096];
        if (path_join(path, sizeof path, dir, de->d_name) != 0) continue;
        size_t l = strlen(de->d_name);
        bool gguf = l > 5 && strcmp(de->d_name + l - 5, ".gguf") == 0 && file_exists(path);
        bool hf = dir_exists(path) && path_join(cfg, sizeof cfg, path, "config.json") == 0 && file_exists(cfg);
        if (gguf || hf) names[n++] = strdup(path);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    int rc = 0;
    for (int i = 0; i < n; i++) {
        if (rc == 0 && names[i]) rc = add_model(p, names[i], err);
        free(names[i]);
    }
    return rc;
}

/* The cache folder's first failure of each kind, told to the operator (the
 * library calls this on the model's scheduler thread). */
static void cache_warning(void *user, const char *message) {
    const mpool_entry *e = user;
    if (!e->pool->cfg.warn) return;
    char line[700];
    snprintf(line, sizeof line, "model %s: %s (counted in wick:cache_disk_errors_total; the cache goes on in memory)",
             e->name, message);
    e->pool->cfg.warn(e->pool->cfg.warn_user, line);
}

/* ------------------------------------------------------- load / unload */

static wick_sched_stats add_stats(wick_sched_stats a, const wick_sched_stats *b) {
    a.prompt_tokens += b->prompt_tokens;
    a.generation_tokens += b->generation_tokens;
    a.preemptions += b->preemptions;
    a.prefix_queries += b->prefix_queries;
    a.prefix_hits += b->prefix_hits;
    a.span_queries += b->span_queries;
    a.span_hits += b->span_hits;
    a.requests_finished += b->requests_finished;
    a.steps += b->steps;
    a.step_tokens += b->step_tokens;
    a.spec_draft_tokens += b->spec_draft_tokens;
    a.spec_accepted_tokens += b->spec_accepted_tokens;
    a.spec_passes += b->spec_passes;
    return a;
}

/* The weight type as Ollama's quantization_level names it: the type the
 * matrices were converted to, else that of the first attention query matrix
 * (else the first matrix), upper case ("F32", "Q8_0"). */
static void quant_name(const wick_model *m, const wick_model_info *mi, char *out, size_t cap) {
    const char *t = mi->converted_to;
    for (int i = 0, n = wick_model_n_tensors(m); !t && i < n; i++) {
        const char *name, *type;
        int nd;
        int64_t ne[4];
        wick_model_tensor(m, i, &name, &type, &nd, ne);
        if (nd == 2 && (strstr(name, "attn_q") || strstr(name, "q_proj"))) t = type;
    }
    for (int i = 0, n = wick_model_n_tensors(m); !t && i < n; i++) {
        const char *name, *type;
        int nd;
        int64_t ne[4];
        wick_model_tensor(m, i, &name, &type, &nd, ne);
        if (nd == 2) t = type;
    }
    size_t k = 0;
    for (; t && t[k] && k + 1 < cap; k++) out[k] = (char)(t[k] >= 'a' && t[k] <= 'z' ? t[k] - 32 : t[k]);
    out[k] = 0;
}

/* MemAvailable from /proc/meminfo in bytes; 0 if unknown. */
static uint64_t mem_available(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return (uint64_t)kb * 1024;
}

/* Load e outside the lock; returns 0 or -1 with e->error. */
static int load_entry(serve_pool *p, mpool_entry *e) {
    const mpool_config *c = &p->cfg;
    wick_error err = {0};
    double t0 = wick_now_s();
    wick_model_params mp = {.dtype = c->dtype};
    wick_model *m = wick_model_load(e->path, &mp, &err);
    wick_context *ctx = NULL;
    wick_sched *s = NULL;
    kv_events_model *ev = NULL;
    if (!m) goto fail;
    if (c->chat_template && wick_model_set_chat_template(m, c->chat_template, &err) < 0) goto fail;
    const char *own = c->builtin_templates && !c->chat_template ? tok_chat_template(wick_model_tokenizer(m)) : NULL;
    if (own) {
        const char *name = chat_template_detect(own);
        if (wick_model_set_chat_template(m, chat_template_builtin(name ? name : "chatml"), &err) < 0) goto fail;
    }
    wick_model_info mi;
    wick_model_get_info(m, &mi);
    wick_context_params cp = {.n_ctx = c->n_ctx, .n_seq = c->n_seq > 0 ? c->n_seq : 1,
                              .n_threads = c->n_threads, .prefill_chunk = c->prefill_chunk,
                              .kv_type = c->kv_type, .no_prefix_cache = c->no_prefix_cache,
                              .no_span_cache = c->no_span_cache};
    const int bs = wick_kv_block_size();
    const size_t per_tok = (size_t)mi.n_layer * (size_t)mi.n_head_kv * (size_t)mi.head_dim * 2 *
                           (c->kv_type ? 2 : 4);
    if (c->cache_bytes) {
        size_t blocks = per_tok ? c->cache_bytes / (per_tok * (size_t)bs) : 0;
        cp.cache_blocks = blocks < 1 ? 1 : blocks > (size_t)1 << 30 ? 1 << 30 : (int)blocks;
    }
    const int n_ctx = c->n_ctx ? c->n_ctx : (mi.n_ctx_train < 4096 ? mi.n_ctx_train : 4096);
    const size_t min_blocks = (size_t)(n_ctx + bs - 1) / (size_t)bs; /* one full context at least */
    size_t blocks = 0;
    if (c->kv_tokens) {
        blocks = (c->kv_tokens + (size_t)bs - 1) / (size_t)bs;
    } else if (c->kv_bytes) {
        blocks = per_tok ? c->kv_bytes / (per_tok * (size_t)bs) : 0;
    } else {
        /* Default: every sequence's full context, but no more than half of
         * the memory available now (the pool is committed as it is used, and
         * the prefix cache fills what requests leave free). */
        blocks = min_blocks * (size_t)cp.n_seq;
        const uint64_t avail = mem_available();
        if (avail && per_tok && blocks * per_tok * (size_t)bs > avail / 2) blocks = avail / 2 / (per_tok * (size_t)bs);
    }
    if (blocks < min_blocks) blocks = min_blocks;
    cp.kv_blocks = blocks > (size_t)1 << 30 ? 1 << 30 : (int)blocks;
    char dir[4096];
    if (c->cache_dir && !c->no_prefix_cache) { /* the folder was checked when the server started */
        snprintf(dir, sizeof dir, "%s/%s", c->cache_dir, e->name);
        cp.cache_dir = dir;
        cp.cache_dir_bytes = c->cache_dir_bytes;
        cp.on_cache_warning = cache_warning;
        cp.cache_warning_user = e;
    }
    if (!(ctx = wick_context_new(m, &cp, &err)) && cp.cache_dir) {
        /* the model's cache folder is unusable: serve from memory, say why */
        char line[700];
        snprintf(line, sizeof line, "model %s: no cache folder (%s); its KV is cached in memory only", e->name, err.msg);
        if (c->warn) c->warn(c->warn_user, line);
        cp.cache_dir = NULL;
        ctx = wick_context_new(m, &cp, &err);
    }
    if (!ctx) goto fail;
    if (kv_events_attach(c->kv_events, ctx, e->name, &ev, &err) < 0) goto fail;
    wick_sched_params sp = {.max_queue = c->max_queue};
    if (!(s = wick_sched_new(ctx, &sp, &err))) goto fail;
    if (c->spec && wick_sched_set_spec(s, c->spec, &err) < 0) {
        /* not for this model: requests may still ask for prompt lookup */
        char line[700];
        snprintf(line, sizeof line, "model %s: speculative decoding by prompt lookup only: %s", e->name, err.msg);
        if (c->warn) c->warn(c->warn_user, line);
        wick_spec_params fb = {.lookup = c->spec->lookup, .draft_max = c->spec->draft_max};
        if (wick_sched_set_spec(s, &fb, &err) < 0) goto fail;
    }
    if (wick_sched_start(s, &err) < 0) goto fail;
    e->model = m;
    e->ctx = ctx;
    e->sched = s;
    e->kvev = ev;
    e->n_ctx = wick_context_n_ctx(ctx);
    e->mem_bytes = mi.weight_bytes + (uint64_t)wick_kv_blocks_total(ctx) * (uint64_t)wick_kv_block_size() *
                                         wick_kv_bytes_per_token(ctx);
    mpool_info *in = &e->info;
    in->known = true;
    snprintf(in->arch, sizeof in->arch, "%s", mi.arch ? mi.arch : "");
    snprintf(in->format, sizeof in->format, "%s", mi.format ? mi.format : "");
    quant_name(m, &mi, in->quant, sizeof in->quant);
    in->n_params = mi.n_params;
    in->n_ctx_train = mi.n_ctx_train;
    e->load_ms = (wick_now_s() - t0) * 1e3;
    return 0;
fail:
    snprintf(e->error, sizeof e->error, "%s", err.msg[0] ? err.msg : "load failed");
    wick_sched_free(s);
    kv_events_detach(ev);
    wick_context_free(ctx);
    wick_model_free(m);
    return -1;
}

/* Called with the lock held and e READY with no refs; drops it meanwhile. */
static void unload_locked(serve_pool *p, mpool_entry *e) {
    e->state = ST_UNLOADING;
    wick_sched_stats st;
    wick_sched_get_stats(e->sched, &st);
    uint64_t errs[WICK_CACHE_ERR_KINDS]; /* (failures while the context saves its cache at free are not counted) */
    wick_sched *s = e->sched;
    wick_context *c = e->ctx;
    wick_model *m = e->model;
    kv_events_model *ev = e->kvev;
    e->sched = NULL;
    e->ctx = NULL;
    e->model = NULL;
    e->kvev = NULL;
    pthread_mutex_unlock(&p->mu);
    wick_sched_free(s);
    kv_events_detach(ev); /* AllBlocksCleared */
    wick_context_cache_errors(c, errs);
    wick_context_free(c);
    wick_model_free(m);
    pthread_mutex_lock(&p->mu);
    e->base = add_stats(e->base, &st);
    for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++) e->disk_err_base[k] += errs[k];
    e->state = ST_UNLOADED;
    pthread_cond_broadcast(&p->cv);
}

static uint64_t est_bytes(const mpool_entry *e) {
    return e->mem_bytes ? e->mem_bytes : e->disk_bytes;
}

/* Room for e beside the models loaded now? */
static bool fits_locked(const serve_pool *p, const mpool_entry *e) {
    int loaded = 0;
    uint64_t bytes = 0;
    for (int i = 0; i < p->n; i++) {
        const mpool_entry *o = p->e[i];
        if (o == e || (o->state != ST_READY && o->state != ST_LOADING)) continue;
        loaded++;
        bytes += est_bytes(o);
    }
    int max = p->cfg.max_loaded > 0 ? p->cfg.max_loaded : 3;
    if (loaded >= max) return false;
    if (p->cfg.memory_budget && loaded > 0 && bytes + est_bytes(e) > p->cfg.memory_budget) return false;
    return true;
}

static void *loader_main(void *arg) {
    serve_pool *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        double now = wick_now_s();
        mpool_entry *expired = NULL, *want = NULL;
        double next = now + 1.0;
        for (int i = 0; i < p->n; i++) {
            mpool_entry *e = p->e[i];
            if (e->state == ST_READY && e->refs == 0) {
                if (e->expires_at <= now) expired = e;
                else if (e->expires_at < next) next = e->expires_at;
            }
            if (!want && e->want_load && (e->state == ST_UNLOADED || e->state == ST_FAILED)) want = e;
        }
        if (expired) {
            unload_locked(p, expired);
            continue;
        }
        if (want && !fits_locked(p, want)) {
            mpool_entry *lru = NULL;
            for (int i = 0; i < p->n; i++) {
                mpool_entry *e = p->e[i];
                if (e->state == ST_READY && e->refs == 0 && (!lru || e->last_used < lru->last_used)) lru = e;
            }
            if (lru) {
                unload_locked(p, lru);
                continue;
            }
            want = NULL; /* every loaded model is busy: wait for one to go idle */
        }
        if (want) {
            want->state = ST_LOADING;
            want->want_load = false;
            pthread_mutex_unlock(&p->mu);
            int rc = load_entry(p, want);
            pthread_mutex_lock(&p->mu);
            want->state = rc == 0 ? ST_READY : ST_FAILED;
            if (rc == 0) {
                want->ever_loaded = true;
                want->last_used = wick_now_s();
                double ka = p->cfg.keep_alive_s;
                want->expires_at = ka < 0 ? INFINITY : want->last_used + ka;
                wick_sched_get_stats(want->sched, &want->last);
            }
            want->load_gen++;
            pthread_cond_broadcast(&p->cv);
            continue;
        }
        double wait = next - now;
        if (wait < 0.01) wait = 0.01;
        if (wait > 1.0) wait = 1.0;
        const struct timespec ts = wick_deadline_ms(CLOCK_MONOTONIC, wait * 1e3); /* the clock p->cv was made with */
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* --------------------------------------------------------------- public */

serve_pool *mpool_new(const mpool_config *cfg, wick_error *err) {
    serve_pool *p = calloc(1, sizeof *p);
    if (!p) {
        wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
        return NULL;
    }
    p->cfg = *cfg;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    int rc = 0;
    for (int i = 0; i < cfg->n_paths && rc == 0; i++) {
        if (!file_exists(cfg->paths[i]) && !dir_exists(cfg->paths[i]))
            rc = wick_fail(err, "model not found: %s", cfg->paths[i]);
        else
            rc = add_model(p, cfg->paths[i], err);
    }
    if (rc == 0 && cfg->models_dir) rc = scan_dir(p, cfg->models_dir, err);
    if (rc == 0 && p->n == 0) rc = wick_fail(err, "no models (give -m MODEL or --models-dir DIR with .gguf files)");
    if (rc == 0 && pthread_create(&p->loader, NULL, loader_main, p) != 0) rc = wick_fail(err, "cannot start a thread");
    if (rc < 0) {
        mpool_free(p);
        return NULL;
    }
    p->loader_started = true;
    return p;
}

void mpool_stop(serve_pool *p) {
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void mpool_free(serve_pool *p) {
    if (!p) return;
    mpool_stop(p);
    if (p->loader_started) pthread_join(p->loader, NULL);
    pthread_mutex_lock(&p->mu);
    for (int i = 0; i < p->n; i++)
        if (p->e[i]->state == ST_READY) unload_locked(p, p->e[i]);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n; i++) {
        free(p->e[i]->name);
        free(p->e[i]->path);
        free(p->e[i]);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

kv_events *mpool_kv_events(const serve_pool *p) { return p->cfg.kv_events; }
const char *mpool_default_name(const serve_pool *p) { return p->n ? shown_name(p, p->e[0]) : ""; }

int mpool_default_state(serve_pool *p, char *msg, size_t cap) {
    pthread_mutex_lock(&p->mu);
    mpool_entry *e = p->e[0];
    int r = e->ever_loaded || e->state == ST_READY ? 1 : e->state == ST_FAILED ? -1 : 0;
    if (r < 0 && msg) snprintf(msg, cap, "%s", e->error);
    pthread_mutex_unlock(&p->mu);
    return r;
}

bool mpool_default_sleeping(serve_pool *p) {
    pthread_mutex_lock(&p->mu);
    const mpool_entry *e = p->e[0];
    const bool r = e->ever_loaded && e->state == ST_UNLOADED && !e->want_load;
    pthread_mutex_unlock(&p->mu);
    return r;
}

void mpool_preload(serve_pool *p, const char *name) {
    pthread_mutex_lock(&p->mu);
    mpool_entry *e = find_locked(p, name);
    if (e && (e->state == ST_UNLOADED || e->state == ST_FAILED)) {
        e->want_load = true;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
}

static void list_names_locked(const serve_pool *p, char *buf, size_t cap) {
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < p->n && o + 8 < cap; i++) {
        int w = snprintf(buf + o, cap - o, "%s%s", i ? ", " : "", shown_name(p, p->e[i]));
        if (w < 0) break;
        o += (size_t)w;
    }
    if (o >= cap) snprintf(buf + cap - 4, 4, "...");
}

int mpool_acquire(serve_pool *p, const char *name, mpool_lease *out, wick_error *err) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&p->mu);
    mpool_entry *e = find_locked(p, name);
    bool asked = false;
    if (!e && p->cfg.any_model_name && p->n && strlen(name) < sizeof out->asked) {
        e = p->e[0];
        asked = true;
    }
    if (!e) {
        char names[400];
        list_names_locked(p, names, sizeof names);
        pthread_mutex_unlock(&p->mu);
        return wick_fail_code(err, WICK_E_NOT_FOUND, "model \"%s\" not found; available: %s", name ? name : "", names);
    }
    bool waiting = false; /* for a load that this request asked for or found under way */
    unsigned gen = 0;
    double t0 = wick_now_s();
    for (;;) {
        if (p->stop) {
            pthread_mutex_unlock(&p->mu);
            return wick_fail_code(err, WICK_E_UNAVAILABLE, "server is shutting down");
        }
        if (e->state == ST_READY) break;
        if (e->state == ST_FAILED && waiting && e->load_gen != gen) {
            wick_fail_code(err, WICK_E_INTERNAL, "model \"%s\" failed to load: %s", e->name, e->error);
            pthread_mutex_unlock(&p->mu);
            return -1;
        }
        if (e->state == ST_UNLOADED || (e->state == ST_FAILED && !waiting)) {
            e->want_load = true;
            pthread_cond_broadcast(&p->cv);
        }
        if (!waiting || e->state == ST_UNLOADED) {
            waiting = true;
            gen = e->load_gen;
        }
        pthread_cond_wait(&p->cv, &p->mu);
    }
    e->refs++;
    e->last_used = wick_now_s();
    out->e = e;
    out->name = shown_name(p, e);
    if (asked) out->name = strcpy(out->asked, name);
    out->model = e->model;
    out->ctx = e->ctx;
    out->sched = e->sched;
    out->mx = &e->mx;
    out->n_ctx = e->n_ctx;
    out->load_ms = waiting ? (wick_now_s() - t0) * 1e3 : 0;
    pthread_mutex_unlock(&p->mu);
    return 0;
}

void mpool_release(serve_pool *p, mpool_lease *l, double keep_alive_s) {
    if (!l->e) return;
    pthread_mutex_lock(&p->mu);
    mpool_entry *e = l->e;
    e->refs--;
    e->last_used = wick_now_s();
    double ka = isnan(keep_alive_s) ? p->cfg.keep_alive_s : keep_alive_s;
    e->expires_at = ka < 0 ? INFINITY : e->last_used + ka;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    memset(l, 0, sizeof *l);
}

void mpool_release_peek(serve_pool *p, mpool_lease *l) {
    if (!l->e) return;
    pthread_mutex_lock(&p->mu);
    mpool_entry *e = l->e;
    e->refs--; /* expires_at as the last real use left it */
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    memset(l, 0, sizeof *l);
}

int mpool_list(serve_pool *p, mpool_info *out, int cap) {
    pthread_mutex_lock(&p->mu);
    double mono = wick_now_s(), wall = wick_wall_s();
    int n = 0;
    for (int i = 0; i < p->n && n < cap; i++) {
        mpool_entry *e = p->e[i];
        mpool_info *o = &out[n++];
        *o = e->info;
        o->name = shown_name(p, e);
        o->file_name = e->name;
        o->aliases = i == 0 ? p->cfg.aliases : NULL;
        o->n_aliases = i == 0 ? p->cfg.n_aliases : 0;
        o->path = e->path;
        o->loaded = e->state == ST_READY;
        o->loading = e->state == ST_LOADING;
        o->size = o->loaded ? e->mem_bytes : e->disk_bytes;
        o->mtime = e->mtime;
        o->n_ctx = o->loaded ? e->n_ctx : 0;
        o->expires_at = !o->loaded ? 0 : isinf(e->expires_at) ? -1 : wall + (e->expires_at - mono);
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

int mpool_metrics(serve_pool *p, metrics_view *out, int cap) {
    pthread_mutex_lock(&p->mu);
    int n = 0;
    for (int i = 0; i < p->n && n < cap; i++) {
        mpool_entry *e = p->e[i];
        if (i > 0 && !e->ever_loaded) continue;
        metrics_view *v = &out[n++];
        memset(v, 0, sizeof *v);
        v->name = e->name;
        v->m = &e->mx;
        v->kv_type = p->cfg.kv_type ? "f16" : "f32";
        v->loaded = e->state == ST_READY;
        wick_sched_stats cur = {0};
        if (v->loaded) wick_sched_get_stats(e->sched, &cur);
        else {
            cur.n_seq = e->last.n_seq;
            cur.kv_blocks_total = e->last.kv_blocks_total;
            cur.kv_block_size = e->last.kv_block_size ? e->last.kv_block_size : wick_kv_block_size();
        }
        wick_sched_stats sum = add_stats(e->base, &cur);
        sum.running = cur.running;
        sum.waiting = cur.waiting;
        sum.n_seq = cur.n_seq;
        sum.kv_blocks_total = cur.kv_blocks_total;
        sum.kv_blocks_used = cur.kv_blocks_used;
        sum.kv_blocks_cached = cur.kv_blocks_cached;
        sum.prefix_blocks = cur.prefix_blocks;
        sum.kv_block_size = cur.kv_block_size;
        v->st = sum;
        uint64_t errs[WICK_CACHE_ERR_KINDS] = {0};
        if (v->loaded) wick_context_cache_errors(e->ctx, errs);
        for (int k = 0; k < WICK_CACHE_ERR_KINDS; k++) v->disk_errors[k] = e->disk_err_base[k] + errs[k];
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}
