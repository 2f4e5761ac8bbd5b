/* sched_check.h — stepping a scheduler to rest in the tests, with the KV
 * pool's and the prefix cache's invariants (kv_check) checked after every
 * step, and no block held by a sequence at the end. */
#ifndef WICK_TESTS_SCHED_CHECK_H
#define WICK_TESTS_SCHED_CHECK_H

#include "check.h"
#include "engine/context.h"
#include "kv/kv_check.h"
#include "wick.h"

/* Step s until nothing is queued or running (at most max_steps steps). */
static void run_checked(wick_sched *s, int max_steps) {
    wick_error err;
    char msg[256];
    int left, guard = 0;
    while ((left = wick_sched_step(s, &err)) > 0 && guard++ < max_steps) {
        if (kv_check(&wick_sched_context(s)->kv.pool, &wick_sched_context(s)->kv.tab, msg, sizeof msg) < 0) {
            CHECK_MSG(false, "invariant: %s", msg);
            return;
        }
    }
    CHECK_MSG(left == 0, "step: %s", left < 0 ? err.msg : "did not finish");
    CHECK_MSG(kv_check(&wick_sched_context(s)->kv.pool, &wick_sched_context(s)->kv.tab, msg, sizeof msg) == 0,
              "invariant at rest: %s", msg);
    CHECK_INT(kv_blocks_used(&wick_sched_context(s)->kv), 0);
}

#endif
