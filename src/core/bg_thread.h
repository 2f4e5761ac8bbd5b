/* bg_thread.h — a background thread that runs until told to stop: started
 * once, stopped once (flag set under its owner's lock, its condition
 * signalled, the thread joined). The thread's loop checks bg_thread_stopping
 * under that lock and waits on that condition between rounds. */
#ifndef WICK_CORE_BG_THREAD_H
#define WICK_CORE_BG_THREAD_H

#include <pthread.h>
#include <stdbool.h>

typedef struct bg_thread {
    pthread_t thread;
    pthread_mutex_t *mu; /* the owner's lock, guarding `stop` and the thread's work */
    pthread_cond_t *cv;  /* the condition the thread waits on between rounds */
    bool running, stop;
} bg_thread;

/* Starts fn(arg) on a new thread; 0, or -1 when no thread could be made. */
int bg_thread_start(bg_thread *t, pthread_mutex_t *mu, pthread_cond_t *cv, void *(*fn)(void *), void *arg);

/* Sets the stop flag, wakes the thread and waits for it to end; nothing
 * when it was never started. Call without holding the owner's lock. */
void bg_thread_stop(bg_thread *t);

/* True once bg_thread_stop was called; read with the owner's lock held.
 * A thread made with bg_thread_start may test it before it is running. */
static inline bool bg_thread_stopping(const bg_thread *t) { return t->stop; }

#endif
