/* regex_class.c — byte classes of a term: bytes that every byte set in the
 * term holds alike (all of them in it, or none) have the same derivative,
 * since a derivative looks at its byte only through those sets. A DFA row
 * is then filled a class at a time, and a walk over pairs of states tries
 * one byte per class. Partitions are hash-consed (few distinct ones), each
 * term files the id of its own. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "grammar/regex_internal.h"

#define CLASS_DEPTH 256 /* nesting followed; deeper terms take one class per byte (still exact) */

static uint64_t map_hash(const uint8_t *m) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int i = 0; i < 256; i += 8) {
        uint64_t v;
        memcpy(&v, m + i, 8);
        h = (h ^ v) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 32;
    }
    return h ^ (h >> 29);
}

static bool map_trivial(const uint8_t *m) {
    static const uint8_t zero[256];
    return memcmp(m, zero, 256) == 0;
}

static bool cls_index_grow(rx_store *s) {
    const size_t cap = s->cls_index_cap ? s->cls_index_cap * 2 : 64;
    int32_t *idx = malloc(sizeof *idx * cap);
    if (!idx) return false;
    for (size_t i = 0; i < cap; i++) idx[i] = -1;
    for (size_t k = 0; k < s->n_cls; k++) {
        size_t j = map_hash(s->cls_maps + k * 256) & (cap - 1);
        while (idx[j] >= 0) j = (j + 1) & (cap - 1);
        idx[j] = (int32_t)k;
    }
    free(s->cls_index);
    s->cls_index = idx;
    s->cls_index_cap = cap;
    return true;
}

/* The id of partition m (classes numbered by their first byte's order), or -1. */
static int32_t intern_map(rx_store *s, const uint8_t *m) {
    if ((s->n_cls + 1) * 2 > s->cls_index_cap && !cls_index_grow(s)) return -1;
    size_t j = map_hash(m) & (s->cls_index_cap - 1);
    for (; s->cls_index[j] >= 0; j = (j + 1) & (s->cls_index_cap - 1))
        if (memcmp(s->cls_maps + (size_t)s->cls_index[j] * 256, m, 256) == 0) return s->cls_index[j];
    if (s->n_cls >= INT32_MAX || !GROW_ARRAY(s->cls_maps, (s->n_cls + 1) * 256, &s->cls_maps_cap)) return -1;
    memcpy(s->cls_maps + s->n_cls * 256, m, 256);
    s->cls_index[j] = (int32_t)s->n_cls;
    return (int32_t)s->n_cls++;
}

void rx_class_refine(uint8_t *out, const uint8_t *p, const uint8_t *q) {
    int16_t head[256], next[256];
    uint8_t key_q[256];
    for (int i = 0; i < 256; i++) head[i] = -1;
    int n = 0;
    for (int c = 0; c < 256; c++) {
        int k = head[p[c]];
        while (k >= 0 && key_q[k] != q[c]) k = next[k];
        if (k < 0) { /* a new class: the pair (p's class, q's class) met first at c */
            k = n++;
            key_q[k] = q[c];
            next[k] = head[p[c]];
            head[p[c]] = (int16_t)k;
        }
        out[c] = (uint8_t)k;
    }
}

static int32_t class_of(rx_store *s, rx_id r, int depth) {
    if (s->cls_of[r] >= 0) return s->cls_of[r];
    uint8_t m[256];
    const rx_node n = s->nodes[r]; /* a copy: interning maps does not move nodes, but stay safe */
    if (depth > CLASS_DEPTH) {
        for (int c = 0; c < 256; c++) m[c] = (uint8_t)c;
    } else if (n.kind == RXK_BYTES) {
        const bool first = rx_byteset_has(&n.set, 0);
        for (int c = 0; c < 256; c++) m[c] = rx_byteset_has(&n.set, (unsigned)c) != first;
    } else if (n.kind == RXK_CONCAT || n.kind == RXK_REPEAT || n.kind == RXK_OR) {
        /* a concatenation derives its tail only after a nullable head */
        const int32_t k = n.kind == RXK_OR ? n.b : n.kind == RXK_CONCAT && s->nodes[n.a].nullable ? 2 : 1;
        int32_t cur = -1; /* the partition so far, while one of the parts' (no new map) */
        for (int32_t i = 0; i < k; i++) {
            const rx_id sub = n.kind == RXK_OR ? s->args[n.a + i] : i == 0 ? n.a : n.b;
            const int32_t id = class_of(s, sub, depth + 1);
            if (id < 0) return -1;
            const uint8_t *p = s->cls_maps + (size_t)id * 256;
            if (i == 0) {
                memcpy(m, p, 256), cur = id;
            } else if (id != cur && !map_trivial(p)) {
                if (cur >= 0 && map_trivial(m)) {
                    memcpy(m, p, 256), cur = id;
                } else {
                    uint8_t t[256];
                    rx_class_refine(t, m, p);
                    memcpy(m, t, 256), cur = -1;
                }
            }
        }
        if (cur >= 0) return s->cls_of[r] = cur; /* one part's partition: already filed */
    } else {
        memset(m, 0, 256);
    }
    const int32_t id = intern_map(s, m);
    if (id >= 0) s->cls_of[r] = id;
    return id;
}

const uint8_t *rx_class_map(rx_store *s, rx_id r) {
    if ((size_t)r >= s->cls_of_cap) {
        size_t cap = s->cls_of_cap;
        if (!GROW_ARRAY(s->cls_of, (size_t)r + 1, &cap)) return NULL;
        for (size_t i = s->cls_of_cap; i < cap; i++) s->cls_of[i] = -1;
        s->cls_of_cap = cap;
    }
    const int32_t id = class_of(s, r, 0);
    return id < 0 ? NULL : s->cls_maps + (size_t)id * 256;
}
