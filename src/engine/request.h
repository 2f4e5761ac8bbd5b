/* request.h — what request.c offers outside the scheduler: the one clamp of
 * a generation length to the context, for the callers that clamp a limit
 * rather than refuse it (wick_chat, the server's max_tokens). */
#ifndef WICK_ENGINE_REQUEST_H
#define WICK_ENGINE_REQUEST_H

/* The most tokens a request may generate after an n_prompt-token prompt in
 * a context of n_ctx: n_predict, except that -1 (any negative: until the
 * context is full) and anything beyond the room the prompt leaves become
 * that room (0 when the prompt fills the context or more). */
int request_clamp_predict(long long n_predict, int n_ctx, int n_prompt);

#endif
