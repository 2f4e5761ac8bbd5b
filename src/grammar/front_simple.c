/* front_simple.c — regex, choice and free-JSON grammars (front_simple.h). */
#include "grammar/front_simple.h"

#include <string.h>

#include "core/error.h"
#include "grammar/json_schema.h"

static int one_terminal(cfg *g, rx_id t, wick_error *err) {
    const int32_t start = cfg_nonterm(g);
    const cfg_sym s = cfg_terminal(t);
    if (start < 0 || cfg_add_rule(g, start, &s, 1) < 0) return wick_fail_code(err, WICK_E_NO_MEMORY, "grammar: out of memory");
    return cfg_finish(g, start, err);
}

int cfg_from_regex(cfg *g, const char *pattern, size_t len, wick_error *err) {
    const rx_id r = rx_parse(g->rx, pattern, len, err);
    if (r < 0) return -1;
    if (r == RX_NOTHING) return wick_fail(err, "regular expression: it matches nothing");
    return one_terminal(g, r, err);
}

int cfg_from_choices(cfg *g, const char *const *choices, int n, wick_error *err) {
    if (n <= 0) return wick_fail(err, "choice: the list is empty");
    rx_id r = RX_NOTHING;
    for (int i = 0; i < n; i++) {
        if (!choices[i]) return wick_fail(err, "choice %d: not a string", i);
        r = rx_or(g->rx, r, rx_literal(g->rx, choices[i], strlen(choices[i])));
    }
    if (!rx_store_ok(g->rx)) return wick_fail_code(err, WICK_E_NO_MEMORY, "grammar: out of memory");
    return one_terminal(g, r, err);
}

int cfg_json_object(cfg *g, bool flexible_ws, wick_error *err) {
    cJSON *schema = cJSON_Parse("{\"type\":\"object\"}");
    if (!schema) return wick_fail_code(err, WICK_E_NO_MEMORY, "grammar: out of memory");
    const json_schema_opts o = {.strict = false, .flexible_ws = flexible_ws};
    const int rc = json_schema_compile(g, schema, &o, err);
    cJSON_Delete(schema);
    return rc;
}
