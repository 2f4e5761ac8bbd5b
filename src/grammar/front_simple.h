/* front_simple.h — the small grammar front ends: a regular expression, a
 * list of choices, and free JSON (any object, as OpenAI's json_object and
 * Ollama's "json" ask for). */
#ifndef WICK_GRAMMAR_FRONT_SIMPLE_H
#define WICK_GRAMMAR_FRONT_SIMPLE_H

#include <stdbool.h>
#include <stddef.h>

#include "grammar/cfg.h"

/* g (empty, from cfg_new) accepts exactly the strings the pattern matches whole. */
int cfg_from_regex(cfg *g, const char *pattern, size_t len, wick_error *err);
/* g accepts exactly one of the n choices (their bytes as given). */
int cfg_from_choices(cfg *g, const char *const *choices, int n, wick_error *err);
/* g accepts any JSON object (whitespace between tokens when flexible_ws). */
int cfg_json_object(cfg *g, bool flexible_ws, wick_error *err);

#endif
