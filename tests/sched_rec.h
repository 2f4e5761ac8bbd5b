/* sched_rec.h — what the scheduler tests record of a request's output
 * (test_scheduler.c, test_spec_decode.c, test_grammar_sched.c): its tokens,
 * their logprobs and most likely alternatives, the text with the stop tail,
 * the result and error, through the on_token/on_done callbacks below.
 * MAX_OUT (tokens kept per request) may be defined before including this;
 * the default is 256. A record must be zeroed before its request runs. */
#ifndef WICK_TESTS_SCHED_REC_H
#define WICK_TESTS_SCHED_REC_H

#include <stdio.h>
#include <string.h>

#include "wick.h"

#ifndef MAX_OUT
#define MAX_OUT 256
#endif

typedef struct out_rec {
    const int32_t *prompt; /* the request's prompt, where a test checks the KV against it */
    int n_prompt;
    int32_t ids[MAX_OUT]; /* the first MAX_OUT tokens */
    float logprob[MAX_OUT];
    int32_t top1[MAX_OUT]; /* the most likely token at each step; -1 without top logprobs */
    int n;
    char text[4096]; /* the text (up to what fits), NUL-terminated once done */
    size_t n_text;
    bool done;
    wick_request_result res; /* with error and tail NULL: they do not outlive on_done */
    char error[256];         /* res's error message, when it had one */
    int cancel_after;        /* on_token returns false after this many tokens; 0 = never */
} out_rec;

/* Append len bytes to o's text when they fit (with room left for a NUL). */
static inline void out_rec_append(out_rec *o, const char *text, size_t len) {
    if (o->n_text + len < sizeof o->text) {
        memcpy(o->text + o->n_text, text, len);
        o->n_text += len;
    }
}

static inline bool on_token(void *user, const wick_token_info *ti, const char *text, size_t len) {
    out_rec *o = user;
    if (o->n < MAX_OUT) {
        o->ids[o->n] = ti->id;
        o->logprob[o->n] = ti->logprob;
        o->top1[o->n] = ti->n_top > 0 ? ti->top_ids[0] : -1;
        o->n++;
    }
    out_rec_append(o, text, len);
    return !(o->cancel_after && o->n >= o->cancel_after);
}

static inline void on_done(void *user, const wick_request_result *res) {
    out_rec *o = user;
    o->res = *res;
    o->res.error = NULL;
    o->res.tail = NULL;
    if (res->error) snprintf(o->error, sizeof o->error, "%s", res->error);
    out_rec_append(o, res->tail, res->tail_len);
    o->text[o->n_text] = 0;
    o->done = true;
}

#endif
