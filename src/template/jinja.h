/* jinja.h — a Jinja2 template interpreter for the subset chat templates use.
 *
 * Semantics follow Python Jinja2 as transformers configures it for chat
 * templates (trim_blocks and lstrip_blocks on, loop controls on, the sandbox's
 * range limit, `tojson` as json.dumps with ensure_ascii=False), because that is
 * what the models were trained with. Values print as Python prints them
 * (True, None, ['a', 1]); undefined names are falsy and print as "".
 *
 * Supported: {% if/elif/else %}, {% for %} (loop.*, for-else, `if` filter,
 * tuple unpacking), {% set %} (names, tuples, namespace attributes, blocks),
 * {% macro %} and calls, {% call %}, {% filter %}, {% with %},
 * {% break/continue %}, {% raw %}, {% generation %} (a no-op), comments and
 * whitespace control ({%- -%} {{- -}} {#- -#} {%+ +%}); expressions with
 * literals, lists, tuples, dicts, attribute/subscript/slice access, calls,
 * filters, tests, and/or/not, comparisons (chained), in / not in, arithmetic,
 * ~, conditional expressions; common str/dict methods, filters and tests.
 *
 * Rendering never crashes or runs forever: steps, nesting depth, string sizes
 * and live memory are capped (jinja_limits); every error, syntax or runtime,
 * is a wick_error "line L, column C: <what>". */
#ifndef WICK_TEMPLATE_JINJA_H
#define WICK_TEMPLATE_JINJA_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "wick.h"

typedef struct jinja_template jinja_template;

typedef struct jinja_limits {
    size_t max_string;  /* bytes of any one string, the output included (default 64 MiB) */
    size_t max_memory;  /* bytes held by live values at once (default 512 MiB) */
    uint64_t max_steps; /* evaluation steps (default 10 million, about a second) */
    int max_depth;      /* nesting of evaluation, macro calls included (default 500) */
} jinja_limits;

/* The defaults above. */
jinja_limits jinja_default_limits(void);

/* Parse a template (len bytes, need not be NUL-terminated). NULL + err on a
 * syntax error. The template is immutable and may be rendered many times. */
jinja_template *jinja_parse(const char *src, size_t len, wick_error *err);
void jinja_free(jinja_template *t);

/* Render with the variables of a JSON object (vars may be NULL = none).
 * lim NULL = jinja_default_limits(). Returns a malloc'd NUL-terminated string
 * (*out_len, if non-NULL, gets its length) or NULL + err. */
char *jinja_render(const jinja_template *t, const cJSON *vars, const jinja_limits *lim,
                   size_t *out_len, wick_error *err);

#endif
