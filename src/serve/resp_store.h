/* resp_store.h — the responses `wick serve` keeps for the OpenAI Responses
 * API (GET /v1/responses/{id}, previous_response_id): per response id, the
 * response object's JSON and the conversation it ends (its input items,
 * those of the responses before it included, then its output items). Held
 * in memory, bounded by a count and by bytes: the oldest go first. Safe to
 * use from any thread. */
#ifndef WICK_SERVE_RESP_STORE_H
#define WICK_SERVE_RESP_STORE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct resp_store resp_store;

/* At most max_entries responses and max_bytes of their texts (ids
 * included). NULL when out of memory. */
resp_store *resp_store_new(size_t max_entries, size_t max_bytes);
void resp_store_free(resp_store *st);

/* Keep copies of response and items (both JSON texts) under id, in place of
 * an older entry of that id; older entries are dropped until both bounds
 * hold. False (nothing kept) when the entry alone is over max_bytes or
 * memory runs out. */
bool resp_store_put(resp_store *st, const char *id, const char *response, const char *items);
/* Copies (malloc'd, the caller frees) of what id holds; either out may be
 * NULL. False when id is not held (or memory ran out: then nothing is
 * copied either). */
bool resp_store_get(resp_store *st, const char *id, char **response, char **items);
/* Drop id; false when it was not held. */
bool resp_store_delete(resp_store *st, const char *id);
/* Entries and bytes held now. */
void resp_store_usage(resp_store *st, size_t *entries, size_t *bytes);

#endif
