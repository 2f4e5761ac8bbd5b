/* fields_known.c — request fields that OpenAI, vLLM, llama.cpp or Ollama
 * define and wick does not implement (see fields_known.h). Each is listed
 * with the value that asks for nothing (absent, null, false, 0, 1, empty),
 * which is accepted; any other value is a 400 naming the field, so that a
 * request never silently gets less than it asked for. Fields that change
 * only where or how fast work runs (num_gpu, num_thread, use_mmap, ...) or
 * that wick's behaviour already satisfies (cache_prompt: caching never
 * changes an output) are not listed. */
#include "serve/fields_known.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef enum when {
    W_SET,       /* any value but null */
    W_TRUE,      /* anything but false (or null) */
    W_FALSE,     /* anything but true (or null) */
    W_NONZERO,   /* a number other than 0 */
    W_NOT_ONE,   /* a number other than 1 */
    W_NONEMPTY,  /* a non-empty string, array or object */
    W_NOT_TEXT,  /* modalities other than ["text"] */
    W_NONNEG,    /* a number >= 0 (-1 = none) */
    W_POSITIVE,  /* a number > 0 (<= 0 = off) */
    W_OVER_ONE,  /* a number > 1 */
} when;

typedef struct known {
    const char *name;
    when w;
    const char *who; /* the API that defines it */
} known;

/* Shared by /v1/chat/completions and /v1/completions. */
static const known OPENAI_BOTH[] = {
    /* OpenAI */
    {"audio", W_SET, "OpenAI"},
    {"modalities", W_NOT_TEXT, "OpenAI"},
    {"prediction", W_SET, "OpenAI"},
    {"reasoning_effort", W_SET, "OpenAI"},
    {"verbosity", W_SET, "OpenAI"},
    {"web_search_options", W_SET, "OpenAI"},
    {"functions", W_NONEMPTY, "OpenAI"},
    {"function_call", W_SET, "OpenAI"},
    {"store", W_TRUE, "OpenAI"},
    /* vLLM */
    {"use_beam_search", W_TRUE, "vLLM"},
    {"length_penalty", W_NOT_ONE, "vLLM"},
    {"stop_token_ids", W_NONEMPTY, "vLLM"},
    {"include_stop_str_in_output", W_TRUE, "vLLM"},
    {"min_tokens", W_NONZERO, "vLLM"},
    {"skip_special_tokens", W_FALSE, "vLLM"},
    {"spaces_between_special_tokens", W_FALSE, "vLLM"},
    {"truncate_prompt_tokens", W_SET, "vLLM"},
    {"allowed_token_ids", W_NONEMPTY, "vLLM"},
    {"prompt_logprobs", W_SET, "vLLM"},
    {"bad_words", W_NONEMPTY, "vLLM"},
    {"documents", W_NONEMPTY, "vLLM"},
    {"mm_processor_kwargs", W_NONEMPTY, "vLLM"},
    {"guided_whitespace_pattern", W_SET, "vLLM"},
    {"priority", W_NONZERO, "vLLM"},
    {"logits_processors", W_NONEMPTY, "vLLM"},
    {"return_tokens_as_token_ids", W_TRUE, "vLLM"},
    {"return_token_ids", W_TRUE, "vLLM"},
    {"kv_transfer_params", W_SET, "vLLM"},
    {"vllm_xargs", W_SET, "vLLM"},
    /* llama.cpp */
    {"typical_p", W_NOT_ONE, "llama.cpp"},
    {"dry_multiplier", W_NONZERO, "llama.cpp"},
    {"xtc_probability", W_NONZERO, "llama.cpp"},
    {"mirostat", W_NONZERO, "llama.cpp"},
    {"dynatemp_range", W_NONZERO, "llama.cpp"},
    {"top_n_sigma", W_POSITIVE, "llama.cpp"},
    {"n_probs", W_NONZERO, "llama.cpp"},
    {"min_keep", W_NONZERO, "llama.cpp"},
    {"t_max_predict_ms", W_NONZERO, "llama.cpp"},
    {"return_tokens", W_TRUE, "llama.cpp"},
    {"samplers", W_SET, "llama.cpp"},
    {"post_sampling_probs", W_TRUE, "llama.cpp"},
    {"response_fields", W_NONEMPTY, "llama.cpp"},
    {"lora", W_NONEMPTY, "llama.cpp"},
    {"n_indent", W_NONZERO, "llama.cpp"},
    {"n_cmpl", W_OVER_ONE, "llama.cpp"},
    {"image_data", W_NONEMPTY, "llama.cpp"},
    {"multimodal_data", W_NONEMPTY, "llama.cpp"},
};

static const known OPENAI_CHAT[] = {
    {"add_special_tokens", W_TRUE, "vLLM"}, /* chat's default is false */
};

static const known OPENAI_COMPLETIONS[] = {
    {"add_special_tokens", W_FALSE, "vLLM"}, /* completions' default is true */
    {"timings_per_token", W_TRUE, "llama.cpp"},
    {"return_progress", W_TRUE, "llama.cpp"},
};

/* /api/generate and /api/chat, top level */
static const known OLLAMA_TOP[] = {
    {"template", W_NONEMPTY, "Ollama"},
    {"truncate", W_TRUE, "Ollama"},
    {"shift", W_TRUE, "Ollama"},
    {"logprobs", W_TRUE, "Ollama"},
    {"top_logprobs", W_NONZERO, "Ollama"},
    {"debug_render_only", W_TRUE, "Ollama"},
};

/* the Ollama "options" object */
static const known OLLAMA_OPTIONS[] = {
    {"typical_p", W_NOT_ONE, "Ollama"},
    {"mirostat", W_NONZERO, "Ollama"},
    {"tfs_z", W_NOT_ONE, "Ollama"},
    {"penalize_newline", W_TRUE, "Ollama"},
    {"vocab_only", W_TRUE, "Ollama"},
    {"logits_all", W_TRUE, "Ollama"},
};

/* Does value v ask for something (1), nothing (0), or have the wrong type (-1)? */
static int asks(const cJSON *v, when w) {
    switch (w) {
    case W_SET: return 1;
    case W_TRUE: return cJSON_IsFalse(v) ? 0 : cJSON_IsBool(v) ? 1 : -1;
    case W_FALSE: return cJSON_IsTrue(v) ? 0 : cJSON_IsBool(v) ? 1 : -1;
    case W_NONZERO:
    case W_NOT_ONE:
    case W_NONNEG:
    case W_POSITIVE:
    case W_OVER_ONE: {
        if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return -1;
        const double d = v->valuedouble;
        return w == W_NONZERO ? d != 0 : w == W_NOT_ONE ? d != 1 : w == W_NONNEG ? d >= 0 : w == W_POSITIVE ? d > 0 : d > 1;
    }
    case W_NONEMPTY:
        if (cJSON_IsString(v)) return v->valuestring[0] != 0;
        if (cJSON_IsArray(v) || cJSON_IsObject(v)) return v->child != NULL;
        return 1;
    case W_NOT_TEXT: {
        if (!cJSON_IsArray(v)) return -1;
        const cJSON *it;
        cJSON_ArrayForEach(it, v) if (!cJSON_IsString(it) || strcmp(it->valuestring, "text") != 0) return 1;
        return 0;
    }
    }
    return 1;
}

static int check(const cJSON *o, const known *t, size_t n, const char *prefix, fld_error *e) {
    if (!cJSON_IsObject(o)) return 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, t[i].name);
        if (!v || cJSON_IsNull(v)) continue;
        const int a = asks(v, t[i].w);
        char name[96];
        snprintf(name, sizeof name, "%s%s", prefix, t[i].name);
        if (a < 0) return fld_fail(e, 400, name, "\"%s\" has the wrong type", name);
        if (a > 0)
            return fld_fail(e, 400, name, "\"%s\" (%s) is not supported by this server; leave it out", name,
                            t[i].who);
    }
    return 0;
}

#define CHECK(o, t, prefix, e) check(o, t, sizeof t / sizeof t[0], prefix, e)

int fld_unsupported_openai(const cJSON *body, bool chat, fld_error *e) {
    if (CHECK(body, OPENAI_BOTH, "", e) < 0) return -1;
    return chat ? CHECK(body, OPENAI_CHAT, "", e) : CHECK(body, OPENAI_COMPLETIONS, "", e);
}

int fld_unsupported_ollama(const cJSON *body, fld_error *e) {
    if (CHECK(body, OLLAMA_TOP, "", e) < 0) return -1;
    return CHECK(cJSON_GetObjectItemCaseSensitive(body, "options"), OLLAMA_OPTIONS, "options.", e);
}
