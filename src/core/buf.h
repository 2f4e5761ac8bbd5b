/* buf.h — the one growable buffer of wick: a byte buffer (wbuf) that text,
 * JSON, HTTP bodies and binary headers are built in, and grow_array, the
 * growth step of the `T *items; size_t n, cap;` arrays.
 *
 * Both grow by doubling, check every size computation for overflow, and
 * report failure (out of memory, overflow, over a wbuf's byte cap) by their
 * return value; nothing aborts or prints. */
#ifndef WICK_CORE_BUF_H
#define WICK_CORE_BUF_H

#include <stdbool.h>
#include <stddef.h>

/* A zero-initialised wbuf is empty and ready. data is NUL-terminated once
 * anything was appended (the NUL is not counted in len); it may hold binary
 * bytes. */
typedef struct wbuf {
    char *data;
    size_t len, cap;
    size_t max; /* 0: no bound; else len never goes past max (an append that would is refused) */
    bool oom;   /* an append failed (no memory, size overflow, past max): the content is
                 * incomplete and every later append is refused until the caller clears it */
} wbuf;

/* Room for `extra` more bytes (and the NUL) without moving data. False (and
 * oom set) when it cannot be had; false at once when oom is already set. */
bool wbuf_reserve(wbuf *b, size_t extra);
/* Append n bytes of s (all of them or none). */
bool wbuf_put(wbuf *b, const void *s, size_t n);
bool wbuf_puts(wbuf *b, const char *s);
bool wbuf_printf(wbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* len = 0, memory kept; oom stays as it is. */
void wbuf_reset(wbuf *b);
/* Free the memory and zero b (max too). */
void wbuf_free(wbuf *b);
/* Hand the data over (malloc'd, NUL-terminated, "" when empty; the length in
 * *len when len is not NULL) and zero b. NULL (memory freed) when oom was set
 * or no memory is left. */
char *wbuf_take(wbuf *b, size_t *len);

/* Make room for `need` elements of `elem` bytes in the array *arr (arr: the
 * address of a pointer to the elements, which may point to NULL), whose
 * capacity in elements is *cap: doubling from at least 8 until need fits.
 * True when need <= *cap already or after growing (*arr and *cap updated);
 * false on overflow or out of memory, with *arr and *cap untouched. */
bool grow_array(void *arr, size_t elem, size_t need, size_t *cap);
/* grow_array for a pointer lvalue: GROW_ARRAY(l->items, l->n + 1, &l->cap). */
#define GROW_ARRAY(ptr, need, capp) grow_array(&(ptr), sizeof *(ptr), (need), (capp))

#endif
