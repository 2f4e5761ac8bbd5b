/* wick.h — the public C API of wick, a local LLM inference engine.
 *
 * Handles are opaque. Every function that can fail takes a `wick_error *`
 * (may be NULL) and returns NULL / -1 on failure with one line in err->msg
 * and its kind in err->code (wick_errcode).
 * The library never prints and never exits. There are no globals that two
 * models or two contexts share except the read-only CPU feature table.
 *
 *   wick_model   weights + tokenizer + architecture facts, read-only once loaded
 *   wick_context a KV cache (blocks of token rows), scratch memory and a thread
 *                pool, sized at creation: the decode loop allocates nothing.
 *                It holds up to n_seq sequences; wick_decode() runs one forward
 *                pass over a batch whose tokens may come from several sequences,
 *                each at its own positions. */
#ifndef WICK_H
#define WICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What kind of failure a wick_error reports, so callers can act on it
 * without reading the message. */
typedef enum wick_errcode {
    WICK_OK = 0,          /* no error (a cleared record) */
    WICK_E_INVALID,       /* a bad argument or request; also the kind of any failure not named below */
    WICK_E_TOO_LONG,      /* the prompt (or prompt plus tokens asked for) does not fit the context */
    WICK_E_QUEUE_FULL,    /* the scheduler's queue is at its max_queue limit; retry later */
    WICK_E_NO_MEMORY,     /* an allocation failed */
    WICK_E_IO,            /* a file or folder could not be opened, read, written or mapped */
    WICK_E_FORMAT,        /* a model or file is malformed, truncated or inconsistent */
    WICK_E_UNSUPPORTED,   /* well-formed but asks for something wick does not do */
    WICK_E_CANCELLED,     /* the work was cancelled before it finished */
    WICK_E_NOT_FOUND,     /* a named thing (a model, a tensor) does not exist */
    WICK_E_UNAVAILABLE,   /* cannot be served now (e.g. shutting down); not the caller's fault */
    WICK_E_INTERNAL,      /* a failure on wick's side the caller could not have avoided */
} wick_errcode;

/* A failure: one human-readable line and its kind. A zeroed record
 * (`wick_error e = {0};`) is "no error". */
typedef struct wick_error {
    char msg[512];
    wick_errcode code;
} wick_error;

typedef struct wick_model wick_model;
typedef struct wick_context wick_context;

/* ---- version ---- */

/* The version, "MAJOR.MINOR.PATCH": what `wick --version` and the server's
 * /api/version report. */
const char *wick_version(void);
/* The build: the git commit the library was built from ("-dirty" with local
 * changes, "unknown" outside git) and the compiler, e.g. "1a2b3c4d5e6f, gcc 12.2.0". */
const char *wick_build(void);
/* The build as OpenAI's system_fingerprint, in llama-server's form:
 * "b<version>-<commit>". */
const char *wick_fingerprint(void);

/* ---- models ---- */

/* A bias added to one token's logit (OpenAI's logit_bias: -100 bans the
 * token in practice, +100 all but forces it). */
typedef struct wick_logit_bias {
    int32_t token;
    float bias;
} wick_logit_bias;

/* Sampling knobs, applied in this order: logit biases, repetition /
 * presence / frequency penalties over the last repeat_last_n tokens,
 * temperature, top-k, top-p, min-p, then a draw from a PRNG seeded with
 * `seed`. temperature 0 = greedy (argmax of the biased, penalized logits).
 * A zeroed struct is greedy with every filter off; for a knob, 0 also means
 * "off" (repeat_penalty 0 or 1, top_p 0 or 1). Logprobs reported with tokens
 * are the model's own (before any knob). */
typedef struct wick_sampling {
    float temperature;       /* 0 = greedy */
    int top_k;               /* 0 = off */
    float top_p;             /* 0 or 1 = off */
    float min_p;             /* 0 = off */
    float repeat_penalty;    /* 0 or 1 = off; > 1 discourages repeats */
    int repeat_last_n;       /* history the penalties see; 0 = none, -1 = whole sequence */
    float presence_penalty;  /* 0 = off */
    float frequency_penalty; /* 0 = off */
    uint64_t seed;
    const wick_logit_bias *logit_bias; /* n_logit_bias entries (a request copies them at submit) */
    int n_logit_bias;
} wick_sampling;

/* llama.cpp-like defaults: temperature 0.8, top-k 40, top-p 0.95, min-p 0.05,
 * repeat_last_n 64, penalties off, seed 0. */
wick_sampling wick_sampling_default(void);


typedef struct wick_model_params {
    int reserved; /* zero-initialize */
    /* Convert the matrix weights (2-D, embedding and output included) at load
     * to this type: "q8_0", "q6_k", "q5_k", "q5_1", "q5_0", "q4_k", "q4_1",
     * "q4_0", "iq4_nl", "iq4_xs", "q3_k", "q2_k", "f16", "bf16" or "f32"; NULL
     * or "" = as stored. A matrix whose rows are not whole blocks of the type
     * gets llama-quantize's fallback type (Q4_K -> Q5_0, ..., else F16). */
    const char *dtype;
} wick_model_params;

/* path: a .gguf file or a Hugging Face model directory. */
wick_model *wick_model_load(const char *path, const wick_model_params *params, wick_error *err);
void wick_model_free(wick_model *m);

typedef struct wick_model_info {
    const char *arch;        /* "llama", "mistral", "qwen2", "qwen3", "granite", "gemma2", "gemma3", "phi3",
                                "qwen2moe", "qwen3moe", "mixtral" */
    const char *format;      /* "gguf" or "hf" */
    int n_vocab, n_embd, n_layer, n_head, n_head_kv, head_dim, n_ff, n_ctx_train;
    float rms_eps, rope_theta;
    const char *rope_scaling; /* "none", "linear", "llama3", "longrope" */
    float rope_factor;
    bool tied_embeddings, qkv_bias, qk_norm;
    int sliding_window;       /* 0 = none */
    int64_t n_params;
    size_t weight_bytes;
    const char *tokenizer_kind;
    int tokenizer_vocab;
    int32_t bos, eos;         /* -1 = none */
    bool add_bos;
    bool has_chat_template;
    size_t decode_bytes;      /* weight bytes one decode step reads (every matrix once; of a
                                 mixture-of-experts layer only the k experts a token uses) */
    const char *converted_to; /* "Q8_0" etc. when matrices were converted at load, else NULL */
    /* Architecture features (Granite, Gemma 2/3, Phi-3); 1 / 0 when off: */
    const char *ffn_act;      /* "silu" (SwiGLU) or "gelu_tanh" (GeGLU) */
    float attn_scale;         /* attention score scale (1/sqrt(head_dim) unless the arch says) */
    float embd_scale, resid_scale, logit_scale; /* embeddings, block outputs, logits multiplied by */
    float attn_softcap, final_softcap;          /* 0 = none */
    int sliding_period;       /* with sliding_window: layer i slides iff i % P < P - 1; 0 = every layer */
    float rope_theta_local;   /* RoPE base of the sliding layers; 0 = rope_theta for all */
    bool fused_qkv, post_norms;
    /* mixture of experts (n_expert 0 = dense) */
    int n_expert, n_expert_used, n_ff_exp, n_ff_shexp; /* n_ff_shexp 0 = no shared expert */
    int n_moe_layers;
    size_t resident_bytes;    /* weight bytes decoding keeps in memory: decode_bytes + idle experts */
} wick_model_info;

void wick_model_get_info(const wick_model *m, wick_model_info *info);
/* Tensor listing for `wick info`: name, type name, dims (ne[0] innermost). */
int wick_model_n_tensors(const wick_model *m);
void wick_model_tensor(const wick_model *m, int i, const char **name, const char **type,
                       int *n_dims, int64_t ne[4]);

/* The sampling defaults the model's files give (HF generation_config.json,
 * GGUF general.sampling.*), written over the matching fields of *out (start
 * from wick_sampling_default()); the other fields are left as they are.
 * false, *out untouched, when the files give none. */
bool wick_model_sampling_defaults(const wick_model *m, wick_sampling *out);

/* ---- tokenizer ---- */

/* Encode text. add_special: BOS/EOS as the model adds by default.
 * Special-token text (e.g. "<|im_start|>") is always recognized.
 * Returns the number of ids (writing at most cap into out), or -1. A text that
 * needs more than cap ids is given up early (wick_tokenizer_encode_max): the
 * number returned is then > cap but may be below the full count. */
int wick_tokenize(const wick_model *m, const char *text, size_t len, bool add_special,
                  int32_t *out, int cap, wick_error *err);
/* The bytes of one token (see tok_piece); returns length or -1. */
int wick_token_piece(const wick_model *m, int32_t id, char *buf, size_t cap);
bool wick_token_is_eog(const wick_model *m, int32_t id); /* EOS or another end token */

/* ---- standalone tokenizers ---- */

/* A tokenizer on its own, without weights: the same object a model holds.
 * path: a model .gguf or a vocab-only .gguf (tokenizer.ggml.* keys), a Hugging
 * Face model directory, or a directory holding just tokenizer.json
 * (+ tokenizer_config.json) or vocab.json + merges.txt (+ tokenizer_config.json);
 * a path to a tokenizer.json file means its directory. */
typedef struct wick_tokenizer wick_tokenizer;

wick_tokenizer *wick_tokenizer_load(const char *path, wick_error *err);
void wick_tokenizer_free(wick_tokenizer *t);
/* The model's tokenizer (owned by the model; valid while it lives). */
const wick_tokenizer *wick_model_tokenizer(const wick_model *m);
/* Replace the model's chat template (Jinja) with a copy of tmpl, before the
 * model is used: `wick serve --chat-template-file`. 0, or -1 with err. */
int wick_model_set_chat_template(wick_model *m, const char *tmpl, wick_error *err);
int wick_tokenizer_n_vocab(const wick_tokenizer *t); /* ids are [0, n_vocab) */

/* Encode len bytes of text. add_special: BOS/EOS as the tokenizer adds them
 * by default. Special-token text (e.g. "<|im_start|>") is always recognized.
 * Bytes that are not valid UTF-8 are replaced by U+FFFD before tokenizing and
 * counted in *n_invalid (may be NULL). *ids is malloc'd (caller frees; never
 * NULL on success, even for 0 ids). Returns 0 or -1. */
int wick_tokenizer_encode(const wick_tokenizer *t, const char *text, size_t len, bool add_special,
                          int32_t **ids, size_t *n_ids, size_t *n_invalid, wick_error *err);
/* wick_tokenizer_encode with a limit: gives up as soon as the text is known to
 * need more than max_ids ids (add_special ones included). Returns 0 (ids as
 * wick_tokenizer_encode gives them, bit-identical), 1 (too long: no ids are
 * returned, *n_ids gets a lower bound > max_ids on the count), or -1 (error).
 * Time and memory for a text that is too long stay in proportion to max_ids,
 * not to len (unless the tokenizer's steps may delete text: see below).
 * *n_invalid (may be NULL) is counted on success only. */
int wick_tokenizer_encode_max(const wick_tokenizer *t, const char *text, size_t len, bool add_special,
                              size_t max_ids, int32_t **ids, size_t *n_ids, size_t *n_invalid, wick_error *err);
/* The most input bytes one id can stand for (0 = no bound, when normalization may delete text): a
 * text of len bytes needs at least ceil(len / this) ids. */
size_t wick_tokenizer_max_bytes_per_id(const wick_tokenizer *t);
/* Decode ids to text as the tokenizer's decoder does (e.g. the SentencePiece
 * leading space of the first piece is dropped). skip_special: leave out
 * control tokens (BOS, EOS, <|im_end|>, ...). Returns malloc'd UTF-8,
 * NUL-terminated; *len (may be NULL) gets its length (the text itself may
 * hold NUL bytes). NULL on error (an id out of range). */
char *wick_tokenizer_decode(const wick_tokenizer *t, const int32_t *ids, size_t n,
                            bool skip_special, size_t *len, wick_error *err);
/* The raw bytes one token stands for when streamed (the decoder applied to
 * that token alone: a byte token gives its byte, so a piece may end inside a
 * UTF-8 character; a SentencePiece piece keeps its leading space). Writes up
 * to cap bytes, returns the full length, or -1 for an id out of range. */
int wick_tokenizer_piece(const wick_tokenizer *t, int32_t id, char *buf, size_t cap);

/* ---- contexts and forward passes ---- */

typedef struct wick_context_params {
    int n_ctx;          /* max tokens per sequence; 0 = min(model's, 4096) */
    int n_seq;          /* max concurrent sequences; 0 = 1 */
    int n_threads;      /* 0 = number of cores */
    int prefill_chunk;  /* tokens per forward pass during prefill; 0 = whole prompt. -1 = default (256;
                           512 for float weights) */
    int kv_type;        /* KV cache element type: 0 = F32 (default), 1 = F16 (half the memory) */
    /* KV pool size in blocks of wick_kv_block_size() positions, shared by all
     * sequences; 0 = enough for every sequence's full context (n_seq × n_ctx).
     * Memory is committed only as positions are used. A smaller pool makes
     * the scheduler preempt when it runs out. */
    int kv_blocks;
    /* Batch capacity in tokens (the scheduler's budget per forward step);
     * 0 = max(prefill_chunk, n_seq) (the whole context when chunking is off). */
    int max_batch;
    /* The automatic prefix cache (on unless no_prefix_cache): KV blocks are
     * shared between sequences by content, and kept after their requests end
     * until evicted, least recently used first. cache_blocks bounds the
     * blocks kept while no sequence holds them (0 = the whole pool). */
    bool no_prefix_cache;
    int cache_blocks;
    /* Persist the prefix cache in this folder (NULL = not): evicted blocks,
     * and every cached one when the context is freed, are written there; a
     * miss reads them back, also in a later process. Files that are damaged
     * or belong to another model are skipped (wick_context_cache_warnings,
     * wick_context_cache_errors). The folder is made private (0700, files
     * 0600); one owned by another user or writable by its group or others is
     * refused (wick_context_new fails). cache_dir_bytes bounds the folder
     * (0 = 10 GiB), oldest files first. */
    const char *cache_dir;
    size_t cache_dir_bytes;
    /* Called the first time each kind of cache-folder failure happens (on the
     * thread that runs the cache), with a one-line message; NULL = none. */
    void (*on_cache_warning)(void *user, const char *message);
    void *cache_warning_user;
    /* Do not keep span KV (wick_spans) after a request: every span is
     * computed again each time (same results, no reuse). */
    bool no_span_cache;
} wick_context_params;

/* Files of the cache directory skipped or failed so far; *last (if not NULL)
 * gets the last reason ("" if none). */
int wick_context_cache_warnings(const wick_context *c, const char **last);
/* Kinds of cache-directory failure (wick_context_cache_errors). */
typedef enum wick_cache_error {
    WICK_CACHE_ERR_SKIPPED, /* a file ignored when the folder is indexed: not a regular file of ours,
                               another model's or layout's, a damaged header */
    WICK_CACHE_ERR_READ,    /* a block could not be read back (gone, unreadable, short) */
    WICK_CACHE_ERR_CORRUPT, /* a block read back failed its checksum or its key */
    WICK_CACHE_ERR_WRITE,   /* a block could not be written (read-only folder, disk full) */
    WICK_CACHE_ERR_KINDS
} wick_cache_error;
const char *wick_cache_error_name(wick_cache_error k); /* "skipped", "read", "corrupt", "write" */
/* How many failures of each kind so far (zeros without a cache folder); any thread. */
void wick_context_cache_errors(const wick_context *c, uint64_t counts[WICK_CACHE_ERR_KINDS]);
/* Commit the KV pool's memory now (every page written once) so that no
 * request later pays for faulting in fresh pages (slow on some VMs); the
 * whole pool then counts in RSS. For steady-state measurements. */
void wick_context_prefault(wick_context *c);

/* ---- profiling ----
 * Time per op type, summed over forward passes, while profiling is on
 * (WICK_PROFILE=1 in the environment when the context is created, or
 * wick_context_set_profiling). The library only accumulates; callers print. */
typedef enum wick_op {
    WICK_OP_MATMUL, WICK_OP_ATTENTION, WICK_OP_NORM, WICK_OP_ROPE,
    WICK_OP_ELEMENTWISE, /* embedding, bias, SiLU gate, residual, KV store */
    WICK_OP_SAMPLING,
    WICK_OP_COUNT
} wick_op;

typedef struct wick_profile {
    int64_t n_forward, n_tokens; /* forward passes and batch tokens profiled */
    double ms[WICK_OP_COUNT];
} wick_profile;

const char *wick_op_name(int op);                 /* "matmul", "attention", ... */
void wick_context_set_profiling(wick_context *c, bool on);
bool wick_context_profiling(const wick_context *c);
void wick_context_profile(const wick_context *c, wick_profile *out);
void wick_context_profile_reset(wick_context *c);

wick_context *wick_context_new(wick_model *m, const wick_context_params *p, wick_error *err);
void wick_context_free(wick_context *c);
int wick_context_n_ctx(const wick_context *c);

/* One forward pass. Tokens of the same sequence must be contiguous and in
 * position order; pos[i] must equal the sequence's current length plus its
 * index among that sequence's tokens in the batch. want_logits may be NULL
 * (= logits for the last token only). Returns 0 or -1. */
typedef struct wick_batch {
    int n;
    const int32_t *tokens;
    const int32_t *pos;
    const int32_t *seq;         /* sequence ids in [0, n_seq) */
    const bool *want_logits;
    /* RoPE positions (NULL = pos). pos is the token's slot in its sequence,
     * which orders the causal mask; a span request (below) places documents
     * whose RoPE positions differ from their slots. */
    const int32_t *rope_pos;
} wick_batch;

int wick_decode(wick_context *c, const wick_batch *b, wick_error *err);
/* Logits of the i-th token of the last batch that asked for them (n_vocab floats). */
const float *wick_logits(const wick_context *c, int i);
/* Number of tokens sequence s holds in the KV cache. */
int wick_seq_len(const wick_context *c, int seq);
/* Drop everything from position `from` on in sequence s. */
void wick_seq_truncate(wick_context *c, int seq, int from);
/* Positions per KV block (the unit of KV memory and of admission). */
int wick_kv_block_size(void);
/* Blocks in the context's KV pool, and how many sequences hold now. */
int wick_kv_blocks_total(const wick_context *c);
int wick_kv_blocks_used(const wick_context *c);
/* Bytes of KV memory one position takes (all layers, K and V). */
size_t wick_kv_bytes_per_token(const wick_context *c);

/* ---- structured output: grammars ----
 * A grammar constrains what a request generates: at every step only the
 * tokens whose bytes continue some sentence of the grammar may be sampled
 * (a token mask applied before penalties, temperature and the filters, so
 * greedy and seeded sampling stay deterministic), and end-of-generation
 * only where a sentence is complete. Special and control tokens never match
 * grammar text. A grammar is compiled for one model (its vocabulary; the
 * first compile on a model builds the vocabulary's trie) and is read-only
 * afterwards: any number of requests, on any threads, may use it at once,
 * each with its own matcher. */
typedef enum wick_grammar_kind {
    WICK_GRAMMAR_JSON_SCHEMA = 1, /* text: a JSON Schema (as JSON text) */
    WICK_GRAMMAR_JSON,            /* any JSON object; text unused */
    WICK_GRAMMAR_REGEX,           /* text: a regular expression (ECMAScript/PCRE subset) the whole output matches */
    WICK_GRAMMAR_GBNF,            /* text: a grammar in llama.cpp's GBNF, started at rule "root" */
    WICK_GRAMMAR_CHOICE,          /* the output is exactly one of choices */
} wick_grammar_kind;

typedef struct wick_grammar_spec {
    wick_grammar_kind kind;
    const char *text;
    size_t len;                  /* bytes of text; 0 = up to its NUL */
    const char *const *choices;  /* WICK_GRAMMAR_CHOICE */
    int n_choices;
    bool strict;      /* JSON Schema: an object schema without "additionalProperties" allows no other keys
                         (OpenAI's strict mode; the spec's default allows any) */
    bool declared_only; /* JSON Schema: an object schema that declares "properties" and says nothing of
                           "additionalProperties" allows no other keys (llama.cpp's and XGrammar's reading,
                           used for tool-call arguments); one that declares none still allows any */
    bool flexible_ws; /* JSON: whitespace wherever JSON allows it (else none: the compact form) */
    bool single_space; /* JSON Schema: at most one space between tokens (json.dumps' ", " and ": ", the
                          spacing models write tool calls in); bounded, unlike flexible_ws */
    /* JSON Schema: framed values when prefix is set (a tool call's syntax
     * around its JSON): prefix + value + suffix, min_values to max_values of
     * them (max 0 = no limit), separator between two. */
    const char *prefix, *suffix, *separator;
    int min_values, max_values;
} wick_grammar_spec;

typedef struct wick_grammar wick_grammar;

/* Compile spec for model m: the grammar, or NULL with err (WICK_E_INVALID:
 * a syntax error, or a JSON Schema keyword it cannot honour, with the
 * schema path, e.g. `keyword "not" is not supported (#/properties/a)`). */
wick_grammar *wick_grammar_compile(const wick_model *m, const wick_grammar_spec *spec, wick_error *err);
void wick_grammar_free(wick_grammar *g);
/* Milliseconds the compile took (the vocabulary's first build not included). */
double wick_grammar_compile_ms(const wick_grammar *g);

/* One output's place in a grammar, token by token (what a request with a
 * grammar runs; also for callers that sample themselves). */
typedef struct wick_grammar_matcher wick_grammar_matcher;
wick_grammar_matcher *wick_grammar_matcher_new(const wick_grammar *g, wick_error *err);
void wick_grammar_matcher_free(wick_grammar_matcher *m);
/* Take token id: true, or false when the grammar forbids it (nothing
 * changes). An end-of-generation id is taken only where complete. */
bool wick_grammar_matcher_accept(wick_grammar_matcher *m, int32_t id);
/* Forget the last n tokens taken (speculative verification). */
void wick_grammar_matcher_rollback(wick_grammar_matcher *m, int n);
/* May the output end here? */
bool wick_grammar_matcher_complete(const wick_grammar_matcher *m);
/* The tokens allowed next as a bitset of (n_vocab + 63) / 64 words (bit
 * id % 64 of word id / 64), end-of-generation ids set where complete; how
 * many ids are allowed: 0, 1, or 2 for two or more (counting stops there,
 * so that a wide mask costs no count of the whole vocabulary). */
int wick_grammar_matcher_mask(wick_grammar_matcher *m, uint64_t *bits);

/* ---- generation ---- */

typedef enum wick_finish {
    WICK_FINISH_STOP = 0,      /* an end-of-generation token or a stop string */
    WICK_FINISH_LENGTH = 1,    /* n_predict reached or the context full */
    WICK_FINISH_CANCELLED = 2, /* wick_sched_cancel, or on_token returned false */
    WICK_FINISH_ERROR = 3,     /* see the result's error text */
} wick_finish;

typedef struct wick_timings {
    double load_ms, prefill_ms, ttft_ms, decode_ms;
    int prompt_tokens, prefill_tokens, generated_tokens;
    int cached_tokens, span_cached_tokens; /* prompt tokens reused (span cache hits among them) */
    int draft_tokens, accepted_tokens;     /* speculative decoding: drafted, and accepted of those */
    int spec_passes;                       /* target passes that verified drafts */
} wick_timings;

/* Called with each generated token and its text (complete UTF-8 only; bytes
 * of an unfinished character are held until it completes). Return false to stop. */
typedef bool (*wick_token_cb)(int32_t token, const char *text, size_t len, void *user);

/* ---- speculative decoding ----
 * A drafter proposes up to k tokens; the target model verifies them in one
 * forward pass (they are a short prefill of the same sequence) and keeps the
 * longest accepted run plus one token of its own; the rejected tokens' KV is
 * dropped. Greedy: a draft is accepted while it equals the target's choice,
 * so the output is byte-identical to plain decoding. Sampling: the
 * speculative-sampling rule (accept with min(1, p/q), else draw from the
 * normalized max(0, p - q)), with every knob applied to p and q alike, so
 * the output distribution is exactly the target's (the same seed gives
 * another sample than without speculation). The draft length adapts to the
 * recent acceptance rate, up to draft_max. Drafters:
 *   DRAFT   a smaller model with the same vocabulary (token count and texts);
 *   LAYERS  self-speculation: the target's first N layers, its final norm
 *           and output head (no second model);
 *   LOOKUP  prompt lookup: the continuation of the latest earlier match of
 *           the last n (N down to 1) tokens in the prompt and the text so far. */
typedef enum wick_spec_method {
    WICK_SPEC_DEFAULT = 0, /* a request: the scheduler's default */
    WICK_SPEC_OFF,
    WICK_SPEC_DRAFT,
    WICK_SPEC_LAYERS,
    WICK_SPEC_LOOKUP,
} wick_spec_method;

#define WICK_DRAFT_MAX_LIMIT 32

/* What a scheduler can speculate with (wick_sched_set_spec). */
typedef struct wick_spec_params {
    wick_model *draft_model; /* NULL = none; borrowed (must outlive the scheduler) */
    int draft_layers;        /* 0 = none; else 1 .. n_layer - 1 */
    int lookup;              /* prompt lookup's longest n-gram; 0 = none (requests may still ask: 3) */
    int draft_max;           /* most drafted tokens per step, 1 .. WICK_DRAFT_MAX_LIMIT; 0 = 8 */
    /* for requests that leave it to the scheduler: WICK_SPEC_DEFAULT = the
     * first configured of DRAFT, LAYERS, LOOKUP (OFF when none is) */
    wick_spec_method default_method;
} wick_spec_params;

/* A request's choice (zeroed: the scheduler's default). */
typedef struct wick_spec_request {
    wick_spec_method method;
    int draft_max; /* 0 = the scheduler's; at most WICK_DRAFT_MAX_LIMIT */
    int lookup;    /* LOOKUP's longest n-gram; 0 = the scheduler's */
} wick_spec_request;

/* Context shift (llama-server's, opt-in): when a generating sequence fills
 * the context, the n_discard tokens after its first n_keep are dropped and
 * generation goes on. The kept tokens are computed again (their KV is
 * exactly that of a fresh request whose prompt is the kept tokens), the
 * request's sampler, stop strings and grammar state carry on. The output
 * then depends on what was dropped; without it nothing changes. */
typedef struct wick_ctx_shift {
    bool on;
    int n_keep;    /* tokens kept at the start (clamped so at least one is dropped) */
    int n_discard; /* tokens dropped per shift; 0 = half of those after n_keep */
} wick_ctx_shift;

typedef struct wick_generate_params {
    int n_predict;        /* max new tokens; -1 = until the context is full */
    wick_sampling sampling;
    wick_token_cb on_token;
    void *user;
    const char *const *stop; /* stop strings: generation ends before the first
                                occurrence (matched across tokens, never emitted) */
    int n_stop;
    int stream_every;     /* call on_token every K tokens with the text so far (0/1 = every token) */
    bool new_message;     /* the output starts a new message (a chat reply), not a continuation:
                             SentencePiece models then drop the first piece's leading space,
                             as their decoders do */
    const struct wick_spans *spans; /* a span request (see below); prompt is then unused */
    const wick_spec_params *spec;   /* speculative decoding (NULL = none) */
    const wick_grammar *grammar;    /* structured output (NULL = none); must outlive the call */
} wick_generate_params;

/* Generate in sequence 0 from `prompt`. Reuses the longest common prefix of
 * the tokens already cached in sequence 0 (checked token by token) and
 * prefills only the rest, in chunks. Writes generated ids to out_tokens
 * (malloc'd, may be NULL) and fills finish/timings. Errors if the prompt does
 * not fit the context or n_predict exceeds the room left. */
int wick_generate(wick_context *c, const int32_t *prompt, int n_prompt,
                  const wick_generate_params *p, int32_t **out_tokens, int *n_out,
                  wick_finish *finish, wick_timings *timings, wick_error *err);

/* ---- scheduler: continuous batching ----
 *
 * A scheduler runs many requests over one context's sequences. Every step
 * builds ONE forward batch from the next token of every running sequence
 * plus prefill chunks of admitted ones, within a token budget, then samples
 * each sequence's next token and streams it to its request. A request is
 * admitted when a sequence is free and the KV pool has blocks for its prompt;
 * when the pool runs out mid-generation the newest running request is
 * preempted (its blocks freed, itself requeued at the front, its prompt and
 * tokens so far recomputed later, its sampler state kept), so nobody fails.
 * A request's tokens and logits do not depend on what else is in the batch,
 * on how its prompt was chunked or on the thread count: greedy output (and
 * sampled output with the same seed) is byte-identical to the request run
 * alone. A sequence idle after a request keeps its KV; a new request takes
 * the idle sequence with the longest common prefix and prefills only the
 * rest (cached_tokens), and idle sequences give their blocks back, least
 * recently used first, before anyone is preempted.
 *
 * A decoding request may speculate (wick_sched_set_spec, wick_request.spec):
 * its drafts ride in the same batch and its output stays exact (see
 * "speculative decoding" above).
 *
 * Threads: submit, cancel and stats may be called from any thread. Steps run
 * either on the caller (wick_sched_step) or on the scheduler's own thread
 * (wick_sched_start); callbacks run on whichever thread runs the step. */
typedef struct wick_sched wick_sched;

typedef struct wick_sched_params {
    int step_tokens; /* token budget of one forward step; 0 = the context's batch capacity */
    int max_queue;   /* requests waiting for admission beyond which submit fails; 0 = no limit */
} wick_sched_params;

/* The scheduler drives c (which must outlive it and is used by nothing else
 * while it exists). */
wick_sched *wick_sched_new(wick_context *c, const wick_sched_params *p, wick_error *err);
/* Cancels every request (their on_done run with WICK_FINISH_CANCELLED), stops
 * the thread if started, frees. */
void wick_sched_free(wick_sched *s);
wick_context *wick_sched_context(wick_sched *s);

#define WICK_MAX_TOP_LOGPROBS 20

/* One generated token as it reaches the request. */
typedef struct wick_token_info {
    int32_t id;
    int index;      /* 0 for the first generated token */
    /* With logprobs >= 0: log-softmax of the model's raw logits (before
     * penalties, temperature and filters) at id, and the n_top most likely
     * ids (highest first, lower id on ties) with theirs.
     * With post_sampling_probs also set, the same storage holds instead the
     * probabilities of the distribution id was drawn from (after every
     * processor, penalty, temperature and filter): prob at id, and the n_top
     * most likely candidates with theirs (highest first, lower id on ties),
     * only tokens the filters kept. Greedy (temperature <= 0): id has 1, and
     * the runners-up by processed logit (within top_k when set; none the
     * logit processors ruled out) follow with 0, as llama-server lists them. */
    union { float logprob; float prob; };
    int n_top;
    int32_t top_ids[WICK_MAX_TOP_LOGPROBS];
    union { float top_logprobs[WICK_MAX_TOP_LOGPROBS]; float top_probs[WICK_MAX_TOP_LOGPROBS]; };
} wick_token_info;

typedef struct wick_request_result {
    wick_finish finish;
    const char *error;   /* WICK_FINISH_ERROR: what went wrong; else NULL */
    /* Text still held when generation ended (bytes that might have started a
     * stop string, an unfinished UTF-8 character completed by U+FFFD): the
     * caller appends it after the last on_token text. */
    const char *tail;
    size_t tail_len;
    int prompt_tokens;    /* tokens of the prompt */
    int cached_tokens;    /* prompt tokens whose KV was reused, not computed */
    int span_cached_tokens; /* of those, span tokens placed from the span cache */
    int generated_tokens;
    int preemptions;      /* times the request was preempted and recomputed */
    int ctx_shifts;       /* times its context was shifted (wick_request.ctx_shift) */
    int ctx_dropped;      /* tokens those shifts dropped */
    int draft_tokens;     /* speculative decoding: tokens drafted, */
    int accepted_tokens;  /* of those accepted, */
    int spec_passes;      /* and the target passes that verified them */
    double queue_ms;      /* submit -> admission (first admission) */
    double ttft_ms;       /* submit -> first token */
    double prefill_ms;    /* admission -> first token */
    double decode_ms;     /* first token -> end */
    double total_ms;      /* submit -> end */
} wick_request_result;

/* ---- span requests: position-independent caching of documents ----
 *
 * A span request is a prefix P, spans S1..SN (documents) and a suffix Q,
 * each tokenized on its own. Span k is computed as its own causal sequence
 * A ++ Sk, where the anchor A is P, [BOS], nothing or given ids; its K is
 * kept before RoPE, V as is, in the span cache (content-addressed by model,
 * KV type, anchor and span ids: never a position). The request's sequence
 * is P (causal), then every span placed: K rotated once to its placed
 * position with the ordinary RoPE kernel, V copied (a span sees only its
 * anchor and itself), then Q and the generated tokens, which see everything
 * before them. Positions: SEQUENTIAL, span k starts at |P| + sum of the
 * earlier spans' lengths; SHARED, every span starts at |P| and Q at
 * |P| + the longest span (spans are then laid out in a canonical order, so
 * their order in the request does not matter). blend_first_k recomputes the
 * first K tokens of every span at their placed positions with full
 * attention over everything before them (K = 0: plain; K >= every span:
 * an ordinary prefill of P ++ S1..SN ++ Q). The result depends on this
 * schedule only: cache cold, warm, evicted or off give the same bits. */
typedef enum wick_span_anchor {
    WICK_ANCHOR_PREFIX = 0, /* A = P (default) */
    WICK_ANCHOR_BOS,        /* A = [BOS] (none if the model has no BOS) */
    WICK_ANCHOR_NONE,       /* A = [] */
    WICK_ANCHOR_IDS,        /* A = anchor_ids */
} wick_span_anchor;

typedef enum wick_span_positions { WICK_POSITIONS_SEQUENTIAL = 0, WICK_POSITIONS_SHARED } wick_span_positions;

typedef struct wick_spans {
    const int32_t *prefix;
    int n_prefix;                   /* may be 0 */
    const int32_t *const *spans;    /* n_spans token lists, none empty */
    const int *span_len;
    int n_spans;
    const int32_t *suffix;          /* not empty: its last token's logits give the first new token */
    int n_suffix;
    wick_span_anchor anchor;
    const int32_t *anchor_ids;      /* WICK_ANCHOR_IDS */
    int n_anchor_ids;
    wick_span_positions positions;
    int blend_first_k;              /* >= 0 */
} wick_spans;

#define WICK_MAX_GRAMMAR_TRIGGERS 8

typedef struct wick_request {
    const int32_t *prompt;   /* copied at submit */
    int n_prompt;
    int n_predict;           /* max new tokens; -1 = until the context is full */
    wick_sampling sampling;  /* per request; its seed seeds the request's own PRNG */
    const char *const *stop; /* stop strings (copied); generation ends before the first one */
    int n_stop;
    bool ignore_eos;         /* do not stop at end-of-generation tokens */
    bool new_message;        /* as wick_generate_params.new_message */
    int logprobs;            /* -1 = none; 0..WICK_MAX_TOP_LOGPROBS: the token's logprob and that many top ones */
    /* With logprobs >= 0: report the post-sampling probabilities instead of
     * the raw logprobs (wick_token_info.prob / top_probs). Never changes
     * which tokens are drawn. */
    bool post_sampling_probs;
    /* Prefix-cache salt (NULL or "" = none): requests share cached KV only
     * with requests of the same salt (vLLM's cache_salt). */
    const char *cache_salt;
    /* Forget instead of compute (llama-server's slot erase): the prefix
     * cache's KV of prompt under cache_salt is dropped, every block of its
     * chain in memory and in the cache folder, in submission order with the
     * other requests. Nothing is generated; on_done reports
     * WICK_FINISH_STOP. A block a running request holds stays with it. */
    bool forget_prefix;
    /* A span request (copied at submit; prompt and n_prompt are then unused). */
    const wick_spans *spans;
    wick_spec_request spec;  /* speculative decoding (zeroed: the scheduler's default) */
    /* Another choice of the same request (n > 1) has counted this prompt:
     * it stays out of the prompt and prefix-cache statistics. */
    bool prompt_shared;
    /* Context shift (off when zeroed): n_predict may then exceed the room
     * the prompt leaves (-1 still stops at a full context). Not for span
     * requests. */
    wick_ctx_shift ctx_shift;
    /* Structured output (NULL = none): a grammar compiled for the
     * scheduler's model, alive until on_done is called (it may be freed
     * there: the request no longer reads it). */
    const wick_grammar *grammar;
    /* A lazily started grammar (n_grammar_triggers > 0; copied at submit):
     * the output is free until one of these tokens is sampled, and the
     * grammar applies from then on: it takes the trigger itself where it can
     * write it, else it starts right after it (a special token it cannot
     * write). Such requests do not speculate. At most
     * WICK_MAX_GRAMMAR_TRIGGERS. */
    const int32_t *grammar_triggers;
    int n_grammar_triggers;
    /* Each generated token with the text it releases (complete UTF-8, stop
     * strings held back; may be empty). Return false to cancel. May be NULL. */
    bool (*on_token)(void *user, const wick_token_info *tok, const char *text, size_t len);
    /* Prompt processing (may be NULL; not for span requests): called when
     * the request is first admitted (n_processed == n_cached, the tokens the
     * prefix cache gave it) and after each forward pass that computed
     * prompt tokens of it, until n_processed == n_prompt; always before its
     * first token. */
    void (*on_progress)(void *user, int n_cached, int n_processed, int n_prompt);
    /* The raw logits each new token is sampled from (n_vocab floats, valid
     * during the call). May be NULL. */
    void (*on_logits)(void *user, const float *logits, int n_vocab);
    /* Called exactly once per accepted request, last. Must not be NULL. */
    void (*on_done)(void *user, const wick_request_result *res);
    void *user;
} wick_request;

/* Let the scheduler speculate (before its first step): creates the drafters
 * p names and makes room for the extra logit rows. -1 with err: a draft
 * model whose vocabulary differs from the target's, draft_layers outside
 * [1, n_layer), draft_max outside [1, WICK_DRAFT_MAX_LIMIT], ... */
int wick_sched_set_spec(wick_sched *s, const wick_spec_params *p, wick_error *err);

/* Queue a request; returns its id (> 0), or -1 with err: an empty prompt, a
 * prompt that does not fit the context, n_predict beyond the room left
 * (unless the request shifts its context),
 * token ids out of range, or a full queue (err->msg starts "queue full"). */
int64_t wick_sched_submit(wick_sched *s, const wick_request *r, wick_error *err);
/* Cancel a request, queued or running: its blocks are freed at the next
 * step and on_done reports WICK_FINISH_CANCELLED. Unknown ids are ignored. */
void wick_sched_cancel(wick_sched *s, int64_t id);
/* Run one step on the calling thread (never with wick_sched_start). Returns
 * the number of requests still queued or running, or -1 with err (a failed
 * forward pass: the requests in it end with WICK_FINISH_ERROR). */
int wick_sched_step(wick_sched *s, wick_error *err);
/* Run steps on a thread of the scheduler's own, sleeping while idle. */
int wick_sched_start(wick_sched *s, wick_error *err);

typedef struct wick_sched_stats {
    int running, waiting;          /* requests admitted / queued */
    int n_seq;                     /* sequences (max running) */
    int kv_blocks_total, kv_block_size;
    int kv_blocks_used;            /* held by running requests */
    int kv_blocks_cached;          /* in the prefix cache and held by no request (evicted on demand) */
    int prefix_blocks;             /* full blocks in the prefix cache, held or not */
    uint64_t steps, step_tokens;   /* forward steps run and tokens in them */
    uint64_t prompt_tokens;        /* prompt tokens of admitted requests (cached included) */
    uint64_t generation_tokens;
    uint64_t preemptions;
    uint64_t prefix_queries, prefix_hits; /* tokens looked up / found in the cache */
    uint64_t span_queries, span_hits;     /* placed span tokens looked up / found in the span cache */
    uint64_t requests_finished;
    uint64_t spec_draft_tokens, spec_accepted_tokens; /* speculative decoding: drafted / accepted */
    uint64_t spec_passes;          /* sequence-steps that verified drafts */
} wick_sched_stats;

/* A consistent snapshot, cheap enough for every metrics scrape. */
void wick_sched_get_stats(wick_sched *s, wick_sched_stats *out);

/* ---- chat ---- */

/* A multi-turn conversation in sequence 0 of a context. Each turn renders the
 * whole conversation with the model's chat template (or a named built-in:
 * "chatml", "llama3", "llama2", "mistral"), tokenizes it, and generates with
 * wick_generate — which keeps the longest common prefix with the KV cache,
 * so a turn prefills only the tokens that are new since the last one. */
typedef struct wick_chat wick_chat;

/* system may be NULL. template_name NULL = the model's own template.
 * enable_thinking: -1 = leave undefined, 0 = false, 1 = true. */
wick_chat *wick_chat_new(wick_context *c, const char *system, const char *template_name,
                         int enable_thinking, wick_error *err);
void wick_chat_free(wick_chat *chat);
/* Add a user message, generate the reply (streamed through p->on_token) and
 * append it to the conversation. *reply (malloc'd, may be NULL) gets the text. */
int wick_chat_send(wick_chat *chat, const char *user_text, const wick_generate_params *p,
                   char **reply, wick_finish *finish, wick_timings *timings, wick_error *err);
/* Render the conversation (plus a pending user message if non-NULL) as the
 * prompt text the model sees; malloc'd. For `wick generate --chat`. */
char *wick_chat_prompt(wick_chat *chat, const char *user_text, wick_error *err);

#ifdef __cplusplus
}
#endif
#endif
