/* grammar_check.h — whether a compiled grammar (a cfg) accepts a text
 * whole, run byte by byte through the Earley parser; shared by the tests
 * and test programs that compile grammars directly (test_json_schema.c,
 * json_schema_suite.c). */
#ifndef WICK_TESTS_GRAMMAR_CHECK_H
#define WICK_TESTS_GRAMMAR_CHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "grammar/earley.h"

/* True when g takes every byte of text (NUL-terminated) and is complete
 * after the last one; false when a byte is refused, the text ends where the
 * grammar is incomplete, or the parser could not be made. */
static inline bool cfg_accepts(const cfg *g, const char *text) {
    earley *e = earley_new(g, NULL, NULL);
    size_t i = 0, n = strlen(text);
    while (e && i < n && earley_push(e, (uint8_t)text[i])) i++;
    const bool ok = e && i == n && earley_accepting(e);
    earley_free(e);
    return ok;
}

#endif
