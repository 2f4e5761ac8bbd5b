/* bg_thread.c — starting and stopping a background thread (bg_thread.h). */
#include "core/bg_thread.h"

int bg_thread_start(bg_thread *t, pthread_mutex_t *mu, pthread_cond_t *cv, void *(*fn)(void *), void *arg) {
    t->mu = mu;
    t->cv = cv;
    t->stop = false;
    if (pthread_create(&t->thread, NULL, fn, arg) != 0) return -1;
    t->running = true;
    return 0;
}

void bg_thread_stop(bg_thread *t) {
    if (!t->running) return;
    pthread_mutex_lock(t->mu);
    t->stop = true;
    pthread_cond_broadcast(t->cv);
    pthread_mutex_unlock(t->mu);
    pthread_join(t->thread, NULL);
    t->running = false;
}
