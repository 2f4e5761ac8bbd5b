/* text_out.c — a request's token → text path (see text_out.h). */
#include "engine/text_out.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "text/tokenizer.h"

int text_out_init(text_out *o, const wick_model *m, const char *const *stops, int n_stops, bool new_message,
                  wick_error *err) {
    memset(o, 0, sizeof *o);
    o->m = m;
    o->strip_space = new_message && tok_get_kind(m->tok) == TOK_KIND_SPM;
    utf8_stream_init(&o->u);
    return stop_init(&o->stop, stops, n_stops, sizeof o->u.out, err);
}

void text_out_free(text_out *o) {
    stop_free(&o->stop);
    free(o->tail);
    o->tail = NULL;
}

bool text_out_token(text_out *o, int32_t id, const char **text, size_t *len) {
    char piece[256];
    int n = tok_piece(o->m->tok, id, piece, sizeof piece);
    if (n < 0) n = 0;
    if (n > (int)sizeof piece) n = sizeof piece; /* pieces are short; never overflow */
    const char *bytes = piece;
    if (o->strip_space && n > 0) {
        if (piece[0] == ' ') bytes++, n--;
        o->strip_space = false;
    }
    size_t k = utf8_stream_push(&o->u, bytes, (size_t)n);
    return stop_feed(&o->stop, o->u.out, k, text, len);
}

static void tail_add(text_out *o, const char *text, size_t len) {
    if (!len) return;
    char *t = realloc(o->tail, o->n_tail + len + 1);
    if (!t) return;
    memcpy(t + o->n_tail, text, len);
    o->n_tail += len;
    t[o->n_tail] = 0;
    o->tail = t;
}

size_t text_out_finish(text_out *o, const char **text) {
    size_t n = utf8_stream_finish(&o->u);
    const char *t;
    size_t n_t = 0;
    bool matched = n && stop_feed(&o->stop, o->u.out, n, &t, &n_t);
    if (n) tail_add(o, t, n_t);
    if (!matched) {
        n_t = stop_flush(&o->stop, &t);
        tail_add(o, t, n_t);
    }
    *text = o->tail ? o->tail : "";
    return o->n_tail;
}
