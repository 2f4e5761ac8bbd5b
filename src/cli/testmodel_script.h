/* testmodel_script.h — scripted test models (`wick make-test-model --script`):
 * a one-layer model of a real architecture (qwen2, qwen3, llama) and a real
 * tokenizer whose greedy output, after a prompt that ends with a given text,
 * is exactly a given script followed by the end-of-turn token. Tests of tool
 * calling, JSON output and reasoning use them as deterministic models.
 *
 * The model is a backoff n-gram machine built from the scripts: every script
 * position is a rule "the last n tokens are these -> the next token is that",
 * and the longest rule whose tokens end the context wins; no rule = the end
 * token. Attention heads copy the previous tokens (head d looks d positions
 * back through RoPE), the feed-forward network has one pair of neurons per
 * rule, the embeddings give each token of the scripts a ±1 code (all other
 * tokens share one code). testmodel_script.c explains the construction.
 *
 * Texts are tokenized alone (special-token text as its token), so an
 * after-text should start where a token of the real prompt starts (at a
 * special token, or with the space a word carries). */
#ifndef WICK_CLI_TESTMODEL_SCRIPT_H
#define WICK_CLI_TESTMODEL_SCRIPT_H

#include <stdbool.h>

#include "wick.h"

/* The most tokens a rule looks at (the current token and those before it). */
#define SCRIPT_MAX_WINDOW 16

typedef struct script_model_params {
    const char *arch;          /* qwen2 | qwen3 | llama */
    const char *dtype;         /* f32 | f16 | bf16 */
    const char *tokenizer_dir; /* NULL = the small synthetic tokenizer (ChatML template) */
    int n_scripts;
    const char *const *scripts; /* the texts greedy decoding produces */
    const char *const *afters;  /* per script, the text the prompt ends with before it;
                                   NULL = the chat template's generation prompt */
    const char *out;            /* the .gguf file written */
} script_model_params;

/* What was built (for the one line the CLI prints). */
typedef struct script_model_info {
    int window;   /* tokens each rule looks at */
    int n_codes;  /* distinct tokens with a code of their own, "other" included */
    int n_rules;  /* rules after merging equal ones */
    int n_embd, n_ff, n_head;
    int32_t end;  /* the end-of-turn token */
} script_model_info;

/* Build, write, load back and check the model: for each script, greedy
 * decoding after its after-text gives the script's tokens and then the end
 * token. info may be NULL. Returns 0 or -1 with err. */
int make_script_model(const script_model_params *p, script_model_info *info, wick_error *err);

#endif
