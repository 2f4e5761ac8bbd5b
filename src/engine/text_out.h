/* text_out.h — one request's path from sampled tokens to text: token bytes →
 * UTF-8 completion (never a split character) → stop-string matching (text
 * that may start a stop string held back, the stop string never emitted).
 * The scheduler keeps one per request; buffers are sized at init. */
#ifndef WICK_ENGINE_TEXT_OUT_H
#define WICK_ENGINE_TEXT_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/stop.h"
#include "model/model.h"
#include "text/utf8_stream.h"

typedef struct text_out {
    const wick_model *m;
    utf8_stream u;
    stop_matcher stop;
    bool strip_space; /* drop one leading space of the next piece (SentencePiece, new message) */
    char *tail;       /* what text_out_finish returns */
    size_t n_tail;
} text_out;

/* stops are borrowed and must outlive o. new_message: the text starts a new
 * message (a chat reply), so a SentencePiece model's first piece loses its
 * leading space, as its decoder does. */
int text_out_init(text_out *o, const wick_model *m, const char *const *stops, int n_stops, bool new_message,
                  wick_error *err);
void text_out_free(text_out *o);

/* Feed token id: *text / *len get the text it releases (may be empty; valid
 * until the next call). Returns true if a stop string matched: *text is then
 * what precedes it, and generation must end. */
bool text_out_token(text_out *o, int32_t id, const char **text, size_t *len);
/* At the end of generation (not after a stop match): the text still held,
 * an unfinished character as U+FFFD. Valid until text_out_free. */
size_t text_out_finish(text_out *o, const char **text);

#endif
