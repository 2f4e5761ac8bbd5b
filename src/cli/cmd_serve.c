/* cmd_serve.c — `wick serve`: parse the options, start the HTTP server
 * (src/serve/), print where it listens, wait for SIGINT/SIGTERM, shut down
 * cleanly. The access log (-v) is printed here: the library only hands lines
 * to a callback (with client strings escaped). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/spec_args.h"
#include "core/fileio.h"
#include "serve/fields.h"
#include "serve/serve.h"
#include "template/chat_template.h"

/* The server's default prefill chunk: each scheduler step carries at most this
 * many prompt tokens beside the running streams' decode tokens, so it bounds
 * their inter-token latency (the library's default, for one user, is longer). */
#define SERVE_PREFILL_CHUNK 128

int cmd_serve(int argc, char **argv);

static const char USAGE[] =
    "usage: wick serve [-m MODEL]... [--models-dir DIR] [options]\n"
    "\n"
    "An HTTP server with OpenAI-compatible (/v1/models, /v1/completions,\n"
    "/v1/chat/completions, /v1/*/render) and Ollama-compatible (/api/generate,\n"
    "/api/chat, /api/tags, /api/ps, /api/show, /api/version) routes, plus /health,\n"
    "/metrics (Prometheus, vLLM names), /tokenize, /detokenize and spnl's span\n"
    "queries (POST /v1/query/execute). Requests are batched continuously per model.\n"
    "\n"
    "models:\n"
    "  -m, --model MODEL         a .gguf file or Hugging Face directory (repeatable); the\n"
    "                            first is the default for requests without \"model\".\n"
    "                            Named by file name without .gguf, or folder name.\n"
    "                            Default: the built-in demo model ($WICK_MODEL).\n"
    "  --models-dir DIR          also serve every .gguf file / HF folder in DIR\n"
    "  --max-loaded-models N     models held loaded at once (default 3; env\n"
    "                            OLLAMA_MAX_LOADED_MODELS); idle ones unload LRU first\n"
    "  --memory-budget MB        unload idle models to keep weights + KV under MB\n"
    "  --keep-alive DUR          how long an idle model stays loaded: seconds or a Go\n"
    "                            duration (\"5m\", \"1h30m\"; negative = for ever; default\n"
    "                            5m or env OLLAMA_KEEP_ALIVE); requests may override\n"
    "  --sleep-idle-seconds N    llama-server's name for it: N seconds (-1 = for ever);\n"
    "                            /props then shows is_sleeping while unloaded\n"
    "per model:\n"
    "  -t, --threads N           threads per model (default: all cores)\n"
    "  --ctx N                   context per sequence (default min(model's, 4096);\n"
    "                            env OLLAMA_CONTEXT_LENGTH)\n"
    "  -c, --ctx-size N          total context as llama-server means it: with --parallel P\n"
    "                            each sequence gets N/P positions; without it each gets\n"
    "                            N and all share one KV pool of N positions (llama-server's\n"
    "                            unified KV); 0 = the model's default, as for --ctx\n"
    "  -kvu, --kv-unified        with -c and --parallel: each sequence may use all N\n"
    "                            positions of the one shared pool of N (llama-server's\n"
    "                            unified KV; a full pool preempts the newest sequence)\n"
    "  --no-kv-unified           with -c and --parallel: N/P positions each (the default)\n"
    "  -np, --parallel N         sequences run at once (default 8; env OLLAMA_NUM_PARALLEL)\n"
    "  --kv-mb MB                KV cache pool, committed as it is used (default:\n"
    "                            parallel x ctx positions, at most half the memory\n"
    "                            available when the model loads)\n"
    "prefix cache (KV blocks shared by content across requests):\n"
    "  --no-prefix-cache         compute every prompt in full\n"
    "  --cache-mb MB             KV kept cached while no request uses it (default: as\n"
    "                            much as the pool has free; evicted LRU on demand)\n"
    "  --cache-dir DIR           keep evicted and, at shutdown, all cached blocks in\n"
    "                            DIR and read them back on a miss (survives restarts)\n"
    "  --cache-dir-mb MB         disk budget of --cache-dir (default 10240)\n"
    "  --kv-events ENDPOINT      publish vLLM KV events (BlockStored, BlockRemoved,\n"
    "                            AllBlocksCleared) on a ZMQ PUB socket: \"tcp://*:5557\"\n"
    "                            binds, \"tcp://HOST:PORT\" connects\n"
    "  --kv-events-topic T       topic frame (default kv@HOST:PORT@MODEL)\n"
    "  --kv-type f32|f16         KV cache element type (default f32)\n"
    "  --dtype T                 convert weight matrices at load (q8_0|q4_0|f16|bf16|f32)\n"
    "  --prefill-chunk N         prompt tokens per forward pass (default 128)\n"
    "  -b, --batch-size N        prompt tokens per forward pass, as --prefill-chunk\n"
    "speculative decoding (greedy output unchanged; sampling keeps the model's distribution):\n"
    "  --draft MODEL             draft with a smaller model of the same vocabulary\n"
    "  --draft-layers N          draft with the model's own first N layers (self-speculation)\n"
    "  --lookup N                draft by prompt lookup (n-grams up to N of the prompt and output)\n"
    "  --draft-max K             most tokens drafted per step (1-32, default 8); alone: no\n"
    "                            default drafter, but requests may ask for prompt lookup\n"
    "  a request opts in or out with \"speculative\": true|false|{\"method\": \"default\"|\"off\"|\n"
    "  \"draft\"|\"layers\"|\"lookup\", \"num_speculative_tokens\": K, \"lookup\": N}\n"
    "span requests (documents cached position-independently: a /v1/completions prompt\n"
    "{prefix, spans, suffix}, chat messages with \"span\": true, POST /v1/query/execute):\n"
    "  --no-span-cache           keep no span KV after a request: every span is computed\n"
    "                            again each time (same results, no reuse)\n"
    "server:\n"
    "  --host HOST               address to bind (default 127.0.0.1)\n"
    "  --port PORT               port (default 8080; 0 = a free one, printed)\n"
    "  --api-key KEY             require \"Authorization: Bearer KEY\" or \"x-api-key: KEY\"\n"
    "                            (not for /health, /metrics, /models, / and the\n"
    "                            web chat's /webui/ files); env WICK_API_KEY\n"
    "  --metrics-key KEY         require this key for /metrics (default: open, for\n"
    "                            scrapers); env WICK_METRICS_KEY\n"
    "  --allowed-origins LIST    browser origins allowed besides the loopback ones:\n"
    "                            comma-separated, '*' matches any run (\"*.example.com\",\n"
    "                            \"http://host:*\", \"*\"); env WICK_ORIGINS. While bound to a\n"
    "                            loopback address only loopback Host names are answered\n"
    "  --max-queue N             waiting requests per model before 503 (default 512;\n"
    "                            env OLLAMA_MAX_QUEUE)\n"
    "  --timeout SEC             close a connection without traffic after SEC (default 600)\n"
    "  --header-timeout SEC      a whole request (headers and body; +1 s per 64 KiB of\n"
    "                            body) must arrive within SEC of the connection's start\n"
    "                            or its previous answer (default 30; 0 = none)\n"
    "  --max-connections N       connections held at once (default 2048); over it a new\n"
    "                            one evicts the oldest that has sent no whole request,\n"
    "                            or is answered 503\n"
    "  --max-connections-per-ip N  the same cap per client address (default 512)\n"
    "  --request-timeout SEC     cancel a generation running longer (default: none)\n"
    "  --reasoning-format F      deepseek (default; also auto, deepseek-legacy): thinking\n"
    "                            returned apart as reasoning_content / thinking; none: kept\n"
    "                            inline in the content\n"
    "  --reasoning on|off|auto   thinking in chat templates that switch it (llama-server's):\n"
    "                            off renders them with enable_thinking false; on and\n"
    "                            auto (the default) with true. A request's\n"
    "                            chat_template_kwargs.enable_thinking overrides it\n"
    "  --body-limit BYTES        largest request body (default 8388608; larger: 413)\n"
    "  --slot-save-path DIR      where POST /slots/ID?action=save writes (default: saving off)\n"
    "  --no-slots                GET /slots answers 501 (--slots: served, the default)\n"
    "  -v, --verbose             one log line per request on stderr; answers carry\n"
    "                            llama-server's __verbose (the prompt as text)\n"
    "request defaults (llama-server's flags; a request's own field overrides each one):\n"
    "  --temp T, --top-k K, --top-p P, --min-p P, --repeat-penalty R, --repeat-last-n N,\n"
    "  --presence-penalty P, --frequency-penalty F, --seed S (-1 = random per request)\n"
    "                            sampling over the model's own defaults, on every API\n"
    "  -n, --n-predict N         the token limit of a request that sets none (its own limit\n"
    "                            wins; -1 = until the context is full, the default)\n"
    "context shift (llama-server's; off by default):\n"
    "  --context-shift           a prompt that fills a sequence's context is cut (its first\n"
    "                            n_keep tokens and whole blocks of its end kept) and a\n"
    "                            generation that fills it drops n_discard tokens after the\n"
    "                            first n_keep and goes on (request fields n_keep, n_discard;\n"
    "                            answers say \"truncated\": true). Outputs then depend on\n"
    "                            the dropped tokens\n"
    "  --no-context-shift        the default: a prompt that does not fit is a 400, a full\n"
    "                            context ends the request\n"
    "model names and templates:\n"
    "  -a, --alias NAME[,NAME]   other names of the default model (repeatable): each\n"
    "                            answers in \"model\"; the first in byte order is the\n"
    "                            one listed (as llama-server)\n"
    "  --tags TAG[,TAG]          the default model's tags in /v1/models (informational)\n"
    "  --any-model-name          answer a request naming a model this server does not\n"
    "                            have with the default model, under the name asked for\n"
    "                            (as a one-model llama-server does), not with a 404\n"
    "  --chat-template NAME      use a built-in template instead of the model's: llama-\n"
    "                            server's names (chatml, llama3, command-r, gemma, phi3,\n"
    "                            phi4, zephyr, vicuna, deepseek3, granite, mistral-v7, ...;\n"
    "                            an unknown name's error lists them all); with --jinja,\n"
    "                            any other text is the template's Jinja\n"
    "  --chat-template-file F    use the Jinja template in F instead of the model's\n"
    "  --jinja                   accepted: templates are always rendered as Jinja\n"
    "  --no-jinja                render chats with built-in formats, as llama-server does:\n"
    "                            each model's (or the file's) template is read as the\n"
    "                            built-in format it is recognised as, else ChatML\n"
    "llama-server flags taken for compatibility:\n"
    "  --cors-origins LIST       the same as --allowed-origins\n"
    "  --no-webui                no web chat: / answers \"Ollama is running\" to browsers too\n"
    "  --metrics                 no effect: /metrics is always served\n"
    "  -ngl, --n-gpu-layers N    wick runs on the CPU: 0 and auto are taken, more warns\n"
    "  -fa, --flash-attn on|off|auto  no effect (one attention kernel)\n"
    "  -cb, --cont-batching      no effect: batching is always continuous\n"
    "  -ctk, -ctv f32|f16        KV cache type, as --kv-type (K and V must agree; llama-\n"
    "                            server's default f16 for the one not given)\n"
    "\n"
    "It prints \"listening on http://HOST:PORT\" on stdout once ready to accept\n"
    "connections; SIGINT, SIGTERM or SIGHUP shut it down (streams end, the cache is\n"
    "saved); SIGUSR1 and SIGUSR2 are ignored.\n";

static void log_line(void *user, const char *line) {
    (void)user;
    time_t t = time(NULL);
    struct tm tm;
    char ts[32];
    localtime_r(&t, &tm);
    strftime(ts, sizeof ts, "%H:%M:%S", &tm);
    fprintf(stderr, "%s %s\n", ts, line);
}

static void warn_line(void *user, const char *line) {
    (void)user;
    fprintf(stderr, "wick: warning: %s\n", line);
}

/* Raise the open-file limit to its hard maximum (idle clients each hold a
 * socket) and keep the connection cap within it, with room for model files
 * and the cache folder. */
static int fit_open_files(int max_conn) {
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return max_conn;
    if (rl.rlim_cur < rl.rlim_max) {
        rlim_t was = rl.rlim_cur;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0) rl.rlim_cur = was;
    }
    const rlim_t reserve = 256, room = rl.rlim_cur > reserve ? (rl.rlim_cur - reserve) * 8 / 9 : 16;
    if ((rlim_t)max_conn <= room) return max_conn;
    fprintf(stderr, "wick: warning: --max-connections %d lowered to %llu (open-file limit %llu)\n", max_conn,
            (unsigned long long)room, (unsigned long long)rl.rlim_cur);
    return (int)room;
}

static int env_int(const char *name, int dflt) {
    const char *v = getenv(name);
    if (!v || !*v) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 1 << 30 ? dflt : (int)x;
}

/* --alias and --tags values (flag): comma-separated and/or repeated names,
 * split into names[] (pointing into buf), duplicates dropped, in byte order
 * (llama-server keeps them in a std::set: its model's name is the first).
 * -1 after printing. */
#define SERVE_MAX_ALIASES 64
static int cmp_name(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static int split_aliases(const char *flag, const cli_list *given, char *buf, size_t cap, const char **names, int *n) {
    size_t o = 0;
    *n = 0;
    for (int i = 0; i < given->n; i++) {
        const size_t l = strlen(given->v[i]);
        if (o + l + 1 > cap) return cli_error("serve: %s values too long", flag);
        memcpy(buf + o, given->v[i], l + 1);
        char *save = NULL;
        for (char *t = strtok_r(buf + o, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
            while (*t == ' ') t++;
            size_t tl = strlen(t);
            while (tl && t[tl - 1] == ' ') t[--tl] = 0;
            if (!tl) continue;
            for (const unsigned char *q = (const unsigned char *)t; *q; q++)
                if (*q < 0x20 || *q == 0x7f) return cli_error("serve: %s \"%s\" has a control character", flag, t);
            bool dup = false;
            for (int k = 0; k < *n; k++) dup |= !strcmp(names[k], t);
            if (dup) continue;
            if (*n == SERVE_MAX_ALIASES) return cli_error("serve: at most %d %s names", SERVE_MAX_ALIASES, flag);
            names[(*n)++] = t;
        }
        o += l + 1;
    }
    if (given->n && !*n) return cli_error("serve: %s needs a name", flag);
    qsort(names, (size_t)*n, sizeof *names, cmp_name);
    return 0;
}

/* -ngl N / auto / all: wick runs on the CPU, so 0 and auto are what it does;
 * a request for GPU layers is taken with a warning, as llama.cpp's CPU builds do. */
static int check_gpu_layers(const char *v) {
    if (!v || !strcmp(v, "auto") || !strcmp(v, "0")) return 0;
    char *end;
    long n = strtol(v, &end, 10);
    if (strcmp(v, "all") && (end == v || *end || n < 0))
        return cli_error("serve: --n-gpu-layers must be a number, auto or all, not \"%s\"", v);
    fprintf(stderr, "wick: warning: wick runs on the CPU; --n-gpu-layers %s has no effect\n", v);
    return 0;
}

int cmd_serve(int argc, char **argv) {
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(USAGE, stdout);
            return 0;
        }
    cli_list models = {0};
    const char *models_dir = NULL, *host = "127.0.0.1", *api_key = getenv("WICK_API_KEY"), *keep_alive = NULL;
    const char *metrics_key = getenv("WICK_METRICS_KEY"), *origins = getenv("WICK_ORIGINS");
    int port = 8080, parallel = 0, max_queue = 0, max_loaded = 0, timeout = 600, kv_mb = 0, mem_mb = 0;
    int header_timeout = 30, max_conn = 2048, max_per_ip = 512, sleep_idle = 0;
    bool sleep_set = false, keep_alive_flag = false;
    int cache_mb = 0, cache_dir_mb = 10240;
    bool no_prefix_cache = false, no_span_cache = false;
    const char *cache_dir = NULL, *kv_events = NULL, *kv_events_topic = NULL, *reasoning_format = NULL, *reasoning = NULL;
    float req_timeout = 0;
    uint64_t body_limit = 8u << 20;
    bool verbose = false, parallel_set = false, queue_set = false, loaded_set = false, ctx_set = false;
    /* llama-server's flags */
    cli_list alias_given = {0}, tags_given = {0};
    const char *chat_template = NULL, *chat_template_file = NULL, *slot_save_path = NULL, *cors = NULL;
    const char *gpu_layers = NULL, *flash_attn = NULL, *seed = NULL, *cache_k = NULL, *cache_v = NULL;
    int ctx_size = 0, n_predict = -1;
    bool kv_unified = false, no_kv_unified = false;
    bool ctx_size_set = false, jinja = false, no_jinja = false, no_slots = false, slots = false, metrics_flag = false, no_webui = false;
    bool cont_batching = false, api_key_set = false, any_model_name = false, ctx_shift = false, no_ctx_shift = false;
    cli_sampling sf;
    cli_sampling_init(&sf);
    cli_runtime rt;
    cli_runtime_init(&rt);
    cli_spec_args spa;
    cli_opt opts[96] = {
        {"--model", "-m", OPT_LIST, &models, NULL},
        {"--models-dir", NULL, OPT_STR, &models_dir, NULL},
        {"--parallel", "-np", OPT_INT, &parallel, &parallel_set},
        {"--kv-mb", NULL, OPT_INT, &kv_mb, NULL},
        {"--host", NULL, OPT_STR, &host, NULL},
        {"--port", NULL, OPT_INT, &port, NULL},
        {"--api-key", NULL, OPT_STR, &api_key, &api_key_set},
        {"--metrics-key", NULL, OPT_STR, &metrics_key, NULL},
        {"--allowed-origins", NULL, OPT_STR, &origins, NULL},
        {"--header-timeout", NULL, OPT_INT, &header_timeout, NULL},
        {"--max-connections", NULL, OPT_INT, &max_conn, NULL},
        {"--max-connections-per-ip", NULL, OPT_INT, &max_per_ip, NULL},
        {"--max-queue", NULL, OPT_INT, &max_queue, &queue_set},
        {"--max-loaded-models", NULL, OPT_INT, &max_loaded, &loaded_set},
        {"--memory-budget", NULL, OPT_INT, &mem_mb, NULL},
        {"--keep-alive", NULL, OPT_STR, &keep_alive, &keep_alive_flag},
        {"--sleep-idle-seconds", NULL, OPT_INT, &sleep_idle, &sleep_set},
        {"--timeout", NULL, OPT_INT, &timeout, NULL},
        {"--request-timeout", NULL, OPT_FLOAT, &req_timeout, NULL},
        {"--body-limit", NULL, OPT_U64, &body_limit, NULL},
        {"--verbose", "-v", OPT_FLAG, &verbose, NULL},
        {"--no-prefix-cache", NULL, OPT_FLAG, &no_prefix_cache, NULL},
        {"--no-span-cache", NULL, OPT_FLAG, &no_span_cache, NULL},
        {"--cache-mb", NULL, OPT_INT, &cache_mb, NULL},
        {"--cache-dir", NULL, OPT_STR, &cache_dir, NULL},
        {"--cache-dir-mb", NULL, OPT_INT, &cache_dir_mb, NULL},
        {"--kv-events", NULL, OPT_STR, &kv_events, NULL},
        {"--kv-events-topic", NULL, OPT_STR, &kv_events_topic, NULL},
        {"--reasoning-format", NULL, OPT_STR, &reasoning_format, NULL},
        {"--reasoning", "-rea", OPT_STR, &reasoning, NULL},
        {"--alias", "-a", OPT_LIST, &alias_given, NULL},
        {"--tags", NULL, OPT_LIST, &tags_given, NULL},
        {"--any-model-name", NULL, OPT_FLAG, &any_model_name, NULL},
        {"--ctx-size", "-c", OPT_INT, &ctx_size, &ctx_size_set},
        {"--kv-unified", "-kvu", OPT_FLAG, &kv_unified, NULL},
        {"--no-kv-unified", NULL, OPT_FLAG, &no_kv_unified, NULL},
        {"--n-predict", "-n", OPT_INT, &n_predict, NULL},
        {"--chat-template", NULL, OPT_STR, &chat_template, NULL},
        {"--chat-template-file", NULL, OPT_STR, &chat_template_file, NULL},
        {"--jinja", NULL, OPT_FLAG, &jinja, NULL},
        {"--no-jinja", NULL, OPT_FLAG, &no_jinja, NULL},
        {"--slot-save-path", NULL, OPT_STR, &slot_save_path, NULL},
        {"--no-slots", NULL, OPT_FLAG, &no_slots, NULL},
        {"--slots", NULL, OPT_FLAG, &slots, NULL},
        {"--cors-origins", NULL, OPT_STR, &cors, NULL},
        {"--metrics", NULL, OPT_FLAG, &metrics_flag, NULL},
        {"--no-webui", NULL, OPT_FLAG, &no_webui, NULL},
        {"--n-gpu-layers", "-ngl", OPT_STR, &gpu_layers, NULL},
        {"--gpu-layers", NULL, OPT_STR, &gpu_layers, NULL},
        {"--flash-attn", "-fa", OPT_STR, &flash_attn, NULL},
        {"--cont-batching", "-cb", OPT_FLAG, &cont_batching, NULL},
        {"--cache-type-k", "-ctk", OPT_STR, &cache_k, NULL},
        {"--cache-type-v", "-ctv", OPT_STR, &cache_v, NULL},
        {"--context-shift", NULL, OPT_FLAG, &ctx_shift, NULL},
        {"--no-context-shift", NULL, OPT_FLAG, &no_ctx_shift, NULL},
        {"--batch-size", "-b", OPT_INT, &rt.chunk, &rt.chunk_set}, /* llama-server's name for --prefill-chunk */
    };
    int n0 = 0; /* the entries above; the shared ones follow */
    while (n0 < (int)(sizeof opts / sizeof opts[0]) && opts[n0].name) n0++;
    int n = cli_spec_opts(opts, cli_sampling_opts(opts, cli_runtime_opts(opts, n0, &rt), &sf), &spa);
    for (int i = 0; i < n; i++) {
        if (!strcmp(opts[i].name, "--ctx")) opts[i].alias = NULL; /* -c is llama-server's --ctx-size here */
        if (!strcmp(opts[i].name, "--seed")) /* llama-server's -1 = random */
            opts[i] = (cli_opt){"--seed", "-s", OPT_STR, &seed, NULL};
    }
    const int prc = cli_parse("serve", argc, argv, opts, n);
    if (prc) return prc < 0;
    ctx_set = rt.ctx > 0;
    if (cli_runtime_check("serve", &rt) < 0 || cli_sampling_check("serve", &sf) < 0) return 1;
    if (seed) {
        char *end;
        errno = 0;
        const long long sv = strtoll(seed, &end, 10);
        if (end == seed || *end) return cli_error("serve: --seed must be an integer (-1 = random), not \"%s\"", seed);
        if (sv >= 0 || errno == ERANGE) {
            sf.seed = true;
            sf.v.seed = errno == ERANGE ? strtoull(seed, NULL, 10) : (uint64_t)sv;
        }
    }
    if (n_predict < -2 || n_predict == 0)
        return cli_error("serve: --n-predict must be at least 1, or -1 for no limit");
    if (kv_unified && no_kv_unified) return cli_error("serve: give --kv-unified or --no-kv-unified, not both");
    if (ctx_size_set && ctx_set) return cli_error("serve: give --ctx (per sequence) or -c/--ctx-size (in all), not both");
    if (ctx_size < 0) return cli_error("serve: --ctx-size must not be negative");
    if (chat_template && chat_template_file)
        return cli_error("serve: give --chat-template or --chat-template-file, not both");
    if (no_jinja && jinja) return cli_error("serve: give --jinja or --no-jinja, not both");
    if (no_slots && slots) return cli_error("serve: give --slots or --no-slots, not both");
    if (ctx_shift && no_ctx_shift) return cli_error("serve: give --context-shift or --no-context-shift, not both");
    if (flash_attn && strcmp(flash_attn, "on") && strcmp(flash_attn, "off") && strcmp(flash_attn, "auto"))
        return cli_error("serve: --flash-attn must be on, off or auto, not \"%s\"", flash_attn);
    if (check_gpu_layers(gpu_layers) < 0) return 1;
    if (cache_k || cache_v) { /* llama-server's per-tensor KV types (its default f16); wick stores K and V alike */
        const char *k = cache_k ? cache_k : "f16", *v = cache_v ? cache_v : "f16";
        if (strcmp(k, v))
            return cli_error("serve: -ctk %s with -ctv %s: wick keeps K and V in one type (f32 or f16)", k, v);
        if (strcmp(k, "f32") && strcmp(k, "f16"))
            return cli_error("serve: KV cache type \"%s\" is not supported (f32 or f16)", k);
        if (rt.kv_type && strcmp(rt.kv_type, k)) return cli_error("serve: --kv-type %s and -ctk/-ctv %s disagree", rt.kv_type, k);
        rt.kv_type = k;
    }
    if (api_key_set && api_key && strchr(api_key, ','))
        return cli_error("serve: --api-key takes one key (llama-server's comma-separated list of keys is not supported)");
    if (cors) origins = cors;
    char alias_buf[4096], tag_buf[4096];
    const char *aliases[SERVE_MAX_ALIASES], *tags[SERVE_MAX_ALIASES];
    int n_aliases = 0, n_tags = 0;
    if (split_aliases("--alias", &alias_given, alias_buf, sizeof alias_buf, aliases, &n_aliases) < 0 ||
        split_aliases("--tags", &tags_given, tag_buf, sizeof tag_buf, tags, &n_tags) < 0)
        return 1;
    const char *tmpl = NULL;
    char *tmpl_file = NULL;
    /* as llama-server: a built-in name, or with --jinja the template's text itself */
    if (chat_template && !(tmpl = chat_template_builtin(chat_template)) && !(jinja && (tmpl = chat_template)))
        return cli_error("serve: wick has no built-in chat template \"%s\" (it has %s); give the template's "
                         "Jinja with --chat-template-file, or as the text of --chat-template after --jinja",
                         chat_template, chat_template_builtin_names());
    if (chat_template_file) {
        wick_error ferr;
        if (!(tmpl_file = file_read_all(chat_template_file, NULL, &ferr)))
            return cli_error("serve: --chat-template-file: %s", ferr.msg);
        tmpl = tmpl_file;
        if (no_jinja) { /* as llama-server: the built-in format the file's template is recognised as */
            const char *name = chat_template_detect(tmpl_file);
            tmpl = chat_template_builtin(name ? name : "chatml");
        }
    }
    if (!parallel_set) parallel = env_int("OLLAMA_NUM_PARALLEL", 8);
    if (!queue_set) max_queue = env_int("OLLAMA_MAX_QUEUE", 512);
    if (!loaded_set) max_loaded = env_int("OLLAMA_MAX_LOADED_MODELS", 3);
    if (!ctx_set) rt.ctx = env_int("OLLAMA_CONTEXT_LENGTH", 0);
    if (parallel < 1 || parallel > 4096) return cli_error("serve: --parallel must be between 1 and 4096");
    size_t kv_tokens = 0;
    if (ctx_size > 0) { /* llama-server: n_ctx in all, n_ctx / n_parallel per slot (unified: all of it each) */
        const bool divided = (parallel_set || getenv("OLLAMA_NUM_PARALLEL")) && !kv_unified;
        rt.ctx = divided ? ctx_size / parallel : ctx_size;
        kv_tokens = kv_mb ? 0 : (size_t)ctx_size; /* an explicit --kv-mb sizes the pool instead */
        if (rt.ctx < 16)
            return cli_error("serve: -c %d over --parallel %d leaves %d positions per sequence (at least 16)",
                             ctx_size, parallel, rt.ctx);
    }
    if (port < 0 || port > 65535) return cli_error("serve: --port must be between 0 and 65535");
    if (max_queue < 1 || max_loaded < 1) return cli_error("serve: --max-queue and --max-loaded-models must be at least 1");
    if (kv_mb < 0 || mem_mb < 0 || timeout < 0 || req_timeout < 0 || cache_mb < 0 || cache_dir_mb < 0)
        return cli_error("serve: --kv-mb, --cache-mb, --cache-dir-mb, --memory-budget, --timeout and --request-timeout must not be negative");
    if (reasoning_format && strcmp(reasoning_format, "none") && strcmp(reasoning_format, "deepseek") &&
        strcmp(reasoning_format, "auto") && strcmp(reasoning_format, "deepseek-legacy"))
        return cli_error("serve: --reasoning-format must be none, deepseek, deepseek-legacy or auto, not \"%s\"",
                         reasoning_format);
    bool reasoning_off = false;
    if (reasoning) { /* llama-server's spellings of on, off and auto */
        static const char *const spell[] = {"on", "enabled", "true", "1", "off", "disabled", "false", "0", "auto", "-1"};
        int k = -1;
        for (int i = 0; i < 10; i++)
            if (!strcmp(reasoning, spell[i])) k = i;
        if (k < 0) return cli_error("serve: --reasoning must be on, off or auto, not \"%s\"", reasoning);
        reasoning_off = k >= 4 && k < 8;
    }
    if (body_limit < 1024) return cli_error("serve: --body-limit must be at least 1024 bytes");
    if (header_timeout < 0) return cli_error("serve: --header-timeout must not be negative");
    if (max_conn < 1 || max_per_ip < 1)
        return cli_error("serve: --max-connections and --max-connections-per-ip must be at least 1");
    max_conn = fit_open_files(max_conn);
    double ka = 300;
    if (!keep_alive) keep_alive = getenv("OLLAMA_KEEP_ALIVE");
    if (keep_alive && *keep_alive && fld_parse_duration(keep_alive, &ka) < 0) {
        char *end;
        ka = strtod(keep_alive, &end);
        if (*end || !isfinite(ka))
            return cli_error("serve: invalid --keep-alive \"%s\" (seconds, or a duration like 5m, 1h30m)", keep_alive);
    }
    if (sleep_set) { /* llama-server's name for the keep-alive: -1 = never unload */
        if (keep_alive_flag) return cli_error("serve: --sleep-idle-seconds and --keep-alive set the same thing; give one");
        if (sleep_idle == 0 || sleep_idle < -1) return cli_error("serve: --sleep-idle-seconds must be -1 or at least 1");
        ka = sleep_idle;
    }
    const char *dflt = NULL;
    if (models.n == 0 && !models_dir) {
        dflt = cli_default_model();
        if (!dflt) return cli_error("serve: no model given (-m MODEL or --models-dir DIR) and the built-in demo model is not there");
        models.v[models.n++] = dflt;
    }
    if (cli_spec_check("serve", &spa) < 0) return 1;
    if (spa.draft && !(spa.draft_model = cli_load_model_dtype("serve", spa.draft, rt.dtype)))
        return 1;
    spa.v.draft_model = spa.draft_model;
    serve_config cfg = {
        .host = host, .port = port, .api_key = api_key && *api_key ? api_key : NULL,
        .metrics_key = metrics_key && *metrics_key ? metrics_key : NULL, .allowed_origins = origins,
        .body_limit = (size_t)body_limit, .idle_timeout_s = timeout, .request_timeout_s = req_timeout,
        .reasoning_inline = reasoning_format && strcmp(reasoning_format, "none") == 0,
        .reasoning_off = reasoning_off,
        .header_timeout_s = header_timeout ? header_timeout : -1, .max_connections = max_conn,
        .max_per_ip = max_per_ip,
        .max_queue = max_queue, .models = models.v, .n_models = models.n, .models_dir = models_dir,
        .max_loaded = max_loaded, .memory_budget = (size_t)mem_mb << 20, .keep_alive_s = ka,
        .n_threads = rt.threads, .n_ctx = rt.ctx, .kv_type = cli_kv_type("serve", rt.kv_type),
        .parallel = parallel, .prefill_chunk = rt.chunk < 0 ? SERVE_PREFILL_CHUNK : rt.chunk, .kv_bytes = (size_t)kv_mb << 20,
        .dtype = cli_dtype(rt.dtype),
        .no_prefix_cache = no_prefix_cache, .no_span_cache = no_span_cache,
        .cache_bytes = (size_t)cache_mb << 20, .cache_dir = cache_dir,
        .cache_dir_bytes = (size_t)cache_dir_mb << 20, .kv_events = kv_events, .kv_events_topic = kv_events_topic,
        .log = verbose ? log_line : NULL, .verbose = verbose,
        .warn = warn_line,
        .spec = cli_spec_given(&spa) || spa.draft_max > 0 ? &spa.v : NULL,
        .kv_tokens = kv_tokens, .aliases = aliases, .n_aliases = n_aliases, .tags = tags, .n_tags = n_tags, .chat_template = tmpl,
        .builtin_templates = no_jinja && !tmpl, .any_model_name = any_model_name,
        .slot_save_path = slot_save_path, .no_slots = no_slots, .no_webui = no_webui, .n_predict = n_predict,
        .ctx_shift = ctx_shift,
        .sampling = {.v = sf.v, .temp = sf.temp, .top_k = sf.top_k, .top_p = sf.top_p, .min_p = sf.min_p,
                     .rep = sf.rep, .rep_n = sf.rep_n, .pres = sf.pres, .freq = sf.freq, .seed = sf.seed},
    };
    /* SIGINT/SIGTERM/SIGHUP are taken by sigwait below: block them before any
     * thread starts; the others that would end the process at once are ignored */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGUSR1, SIG_IGN);
    signal(SIGUSR2, SIG_IGN);
    wick_error err;
    serve_server *s = serve_start(&cfg, &err);
    if (!s) {
        cli_spec_free(&spa);
        free(tmpl_file);
        return cli_error("serve: %s", err.msg);
    }
    printf("listening on http://%s:%d (default model: %s)\n", strchr(host, ':') ? "[::]" : host, serve_port(s),
           serve_default_model(s));
    fflush(stdout);
    int sig = 0;
    sigwait(&sigs, &sig);
    if (verbose)
        fprintf(stderr, "wick: %s, shutting down\n", sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "SIGTERM");
    serve_stop(s);
    cli_spec_free(&spa);
    free(tmpl_file);
    return 0;
}
