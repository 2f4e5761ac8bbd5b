/* gbnf.h — llama.cpp's grammar format (GBNF) read into a cfg. */
#ifndef WICK_GRAMMAR_GBNF_H
#define WICK_GRAMMAR_GBNF_H

#include <stddef.h>

#include "grammar/cfg.h"

/* Adds the rules of text to g (empty, from cfg_new) and finishes it with
 * `root` as the start; -1 with err naming the problem and its line. */
int gbnf_compile(cfg *g, const char *text, size_t len, wick_error *err);

#endif
