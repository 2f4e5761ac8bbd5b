/* jinja_arena.c — the template arena: bump allocation in chunks that a
 * parsed template owns and frees at once, and static strings living in it. */
#include <stdlib.h>
#include <string.h>

#include "template/jinja_internal.h"

struct jarena_chunk {
    jarena_chunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
};

void *jarena_alloc(jarena *a, size_t n) {
    n = (n + 15) & ~(size_t)15;
    jarena_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *jarena_strndup(jarena *a, const char *s, size_t n) {
    char *p = jarena_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

void jarena_free(jarena *a) {
    while (a->head) {
        jarena_chunk *c = a->head;
        a->head = c->next;
        free(c);
    }
}

jv jinja_static_str(jarena *a, const char *s, size_t n) {
    jstr *o = jarena_alloc(a, sizeof *o);
    if (!o) return jv_none();
    o->h.fixed = 1;
    o->h.rc = 1;
    o->h.type = JO_STR;
    o->s = jarena_strndup(a, s, n);
    if (!o->s) return jv_none();
    o->len = o->cap = n;
    return jv_strobj(o);
}
