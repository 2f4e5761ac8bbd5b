/* resp_store.c — the bounded in-memory store of Responses API responses
 * (see resp_store.h): a list in age order under one mutex; lookups walk it,
 * which is cheap at the few hundred entries it holds. */
#include "serve/resp_store.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    struct entry *prev, *next;
    char *id, *response, *items;
    size_t bytes;
} entry;

struct resp_store {
    pthread_mutex_t mu;
    entry *oldest, *newest;
    size_t n, bytes, max_n, max_bytes;
};

resp_store *resp_store_new(size_t max_entries, size_t max_bytes) {
    resp_store *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    if (pthread_mutex_init(&st->mu, NULL) != 0) {
        free(st);
        return NULL;
    }
    st->max_n = max_entries;
    st->max_bytes = max_bytes;
    return st;
}

static void entry_free(entry *e) {
    free(e->id);
    free(e->response);
    free(e->items);
    free(e);
}

static void unlink_entry(resp_store *st, entry *e) {
    if (e->prev) e->prev->next = e->next;
    else st->oldest = e->next;
    if (e->next) e->next->prev = e->prev;
    else st->newest = e->prev;
    st->n--;
    st->bytes -= e->bytes;
}

static entry *find(const resp_store *st, const char *id) {
    for (entry *e = st->newest; e; e = e->prev)
        if (strcmp(e->id, id) == 0) return e;
    return NULL;
}

void resp_store_free(resp_store *st) {
    if (!st) return;
    for (entry *e = st->oldest, *next; e; e = next) {
        next = e->next;
        entry_free(e);
    }
    pthread_mutex_destroy(&st->mu);
    free(st);
}

bool resp_store_put(resp_store *st, const char *id, const char *response, const char *items) {
    if (!st || !id || !response || !items) return false;
    const size_t bytes = strlen(id) + strlen(response) + strlen(items);
    if (bytes > st->max_bytes || st->max_n == 0) return false;
    entry *e = calloc(1, sizeof *e);
    if (!e) return false;
    e->id = strdup(id);
    e->response = strdup(response);
    e->items = strdup(items);
    e->bytes = bytes;
    if (!e->id || !e->response || !e->items) {
        entry_free(e);
        return false;
    }
    pthread_mutex_lock(&st->mu);
    entry *old = find(st, id);
    if (old) {
        unlink_entry(st, old);
        entry_free(old);
    }
    while (st->oldest && (st->n + 1 > st->max_n || st->bytes + bytes > st->max_bytes)) {
        entry *drop = st->oldest;
        unlink_entry(st, drop);
        entry_free(drop);
    }
    e->prev = st->newest;
    if (st->newest) st->newest->next = e;
    else st->oldest = e;
    st->newest = e;
    st->n++;
    st->bytes += bytes;
    pthread_mutex_unlock(&st->mu);
    return true;
}

bool resp_store_get(resp_store *st, const char *id, char **response, char **items) {
    if (response) *response = NULL;
    if (items) *items = NULL;
    if (!st || !id) return false;
    bool ok = false;
    pthread_mutex_lock(&st->mu);
    const entry *e = find(st, id);
    if (e) {
        char *r = response ? strdup(e->response) : NULL, *i = items ? strdup(e->items) : NULL;
        ok = (!response || r) && (!items || i);
        if (ok) {
            if (response) *response = r;
            if (items) *items = i;
        } else {
            free(r);
            free(i);
        }
    }
    pthread_mutex_unlock(&st->mu);
    return ok;
}

bool resp_store_delete(resp_store *st, const char *id) {
    if (!st || !id) return false;
    pthread_mutex_lock(&st->mu);
    entry *e = find(st, id);
    if (e) unlink_entry(st, e);
    pthread_mutex_unlock(&st->mu);
    if (e) entry_free(e);
    return e != NULL;
}

void resp_store_usage(resp_store *st, size_t *entries, size_t *bytes) {
    pthread_mutex_lock(&st->mu);
    if (entries) *entries = st->n;
    if (bytes) *bytes = st->bytes;
    pthread_mutex_unlock(&st->mu);
}
