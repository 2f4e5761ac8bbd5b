/* kv_events.h — `wick serve --kv-events`: publishes the prefix cache's block
 * events as vLLM KV events (the format llm-d's KV-cache indexer reads) on one
 * ZMQ PUB socket per server.
 *
 * Wire format: one message per scheduler step that changed the cache, three
 * frames [topic, seq, payload]: topic = --kv-events-topic or
 * "kv@HOST:PORT@MODEL"; seq = uint64 big-endian, 0, 1, 2, ... per publisher;
 * payload = msgpack [ts float64, [event...], nil] with events
 *   ["BlockStored", [hash], parent-hash|nil, [token ids], 128, nil]
 *   ["BlockRemoved", [hash]]
 *   ["AllBlocksCleared"]
 * Hashes are the low 64 bits of the cache's block keys, always encoded as
 * msgpack uint64 (0xcf). A model's detach (unload, shutdown) ends with
 * AllBlocksCleared. */
#ifndef WICK_SERVE_KV_EVENTS_H
#define WICK_SERVE_KV_EVENTS_H

#include "wick.h"

typedef struct kv_events kv_events;             /* the publisher: socket, seq, lock */
typedef struct kv_events_model kv_events_model; /* one loaded model's topic and batch */

/* Open the PUB socket: an endpoint containing '*' or starting with "ipc://"
 * is bound, any other is connected. topic: NULL = the default per model;
 * host names the server in the default topic (NULL = 127.0.0.1). */
kv_events *kv_events_open(const char *endpoint, const char *topic, const char *host, wick_error *err);
/* The server's HTTP port, for the default topic (call once it is bound). */
void kv_events_set_port(kv_events *p, int port);
/* Close the socket, giving queued messages up to a second to leave. Detach
 * every model first. */
void kv_events_close(kv_events *p);

/* Publish ctx's prefix-cache events under name's topic. Call before the
 * context's scheduler starts. *out = NULL (and 0) when p is NULL or ctx has
 * no prefix cache; -1 with err when out of memory. */
int kv_events_attach(kv_events *p, wick_context *ctx, const char *name, kv_events_model **out, wick_error *err);
/* Stop publishing for that model (its scheduler must be stopped) and send
 * AllBlocksCleared for it; frees m. NULL is ignored. */
void kv_events_detach(kv_events_model *m);

#endif
