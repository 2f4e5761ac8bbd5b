/* grammar.h — what the scheduler asks of a compiled grammar beyond wick.h. */
#ifndef WICK_ENGINE_GRAMMAR_H
#define WICK_ENGINE_GRAMMAR_H

#include "wick.h"

/* The model g was compiled for. */
const wick_model *grammar_model(const wick_grammar *g);

#endif
