/* check.h — the tiny assertion kit of wick's C tests.
 *
 * Each tests/test_*.c is one program: it calls CHECK* macros inside
 * functions run by RUN(fn), and main ends with `return check_summary("name");`,
 * which prints "name: N passed, N failed" and returns non-zero on failure.
 * Tests that need ../shared use shared_path() and SKIP when it is absent (a
 * whole test function), or SKIP_PART (a part of one): a check is never left
 * out without a "SKIP: <what and why>" line. */
#ifndef WICK_TESTS_CHECK_H
#define WICK_TESTS_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int check_passed, check_failed, check_skipped;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            check_passed++;                                                          \
        } else {                                                                     \
            check_failed++;                                                          \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                              \
    do {                                                                  \
        if (cond) {                                                       \
            check_passed++;                                               \
        } else {                                                          \
            check_failed++;                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
        }                                                                 \
    } while (0)

#define CHECK_INT(a, b)                                                                   \
    do {                                                                                  \
        long long va_ = (long long)(a), vb_ = (long long)(b);                             \
        CHECK_MSG(va_ == vb_, "%s = %lld, expected %lld", #a, va_, vb_);                  \
    } while (0)

#define CHECK_STR(a, b)                                                                   \
    do {                                                                                  \
        const char *sa_ = (a), *sb_ = (b);                                                \
        CHECK_MSG(sa_ && sb_ && strcmp(sa_, sb_) == 0, "%s = \"%s\", expected \"%s\"", #a, \
                  sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                            \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                           \
    do {                                                                                \
        double va_ = (double)(a), vb_ = (double)(b);                                    \
        CHECK_MSG(fabs(va_ - vb_) <= (tol), "%s = %.9g, expected %.9g (tol %g)", #a, va_, \
                  vb_, (double)(tol));                                                  \
    } while (0)

#define RUN(fn)                          \
    do {                                 \
        int f0_ = check_failed;          \
        fn();                            \
        if (check_failed != f0_)         \
            fprintf(stderr, "  in %s\n", #fn); \
    } while (0)

#define SKIP(...)                          \
    do {                                   \
        check_skipped++;                   \
        fprintf(stderr, "SKIP: " __VA_ARGS__); \
        fputc('\n', stderr);               \
        return;                            \
    } while (0)

/* A part of a test left out (a fixture or a CPU feature this machine lacks):
 * one "SKIP: ..." line, counted, and the test goes on. */
#define SKIP_PART(...)                     \
    do {                                   \
        check_skipped++;                   \
        fprintf(stderr, "SKIP: " __VA_ARGS__); \
        fputc('\n', stderr);               \
    } while (0)

/* For tests that run kernels on every ISA up to cpu_best_isa() (they include
 * kernels/cpu.h): a SKIP line for each ISA this CPU lacks. */
#define SKIP_ISAS_THIS_CPU_LACKS()                                                                           \
    do {                                                                                                     \
        for (int isa_ = (int)cpu_best_isa() + 1; isa_ <= (int)ISA_AVX512; isa_++)                            \
            SKIP_PART("the %s kernels: this CPU lacks %s", cpu_isa_name((cpu_isa)isa_),                     \
                      isa_ == (int)ISA_AVX512 ? "AVX-512 F/BW/VL with VNNI" : "AVX2 with FMA and F16C");     \
    } while (0)

/* The shared fixtures folder: $WICK_SHARED, else ../shared. NULL if absent. */
static inline const char *shared_dir(void) {
    const char *d = getenv("WICK_SHARED");
    if (!d || !*d) d = "../shared";
    struct stat st;
    return (stat(d, &st) == 0 && S_ISDIR(st.st_mode)) ? d : NULL;
}

/* shared_dir() + "/" + rel into a static buffer; NULL if the folder or the file is absent. */
static inline const char *shared_path(const char *rel) {
    static char buf[4][1024];
    static int k;
    const char *d = shared_dir();
    if (!d) return NULL;
    char *b = buf[k++ & 3];
    snprintf(b, sizeof buf[0], "%s/%s", d, rel);
    struct stat st;
    return stat(b, &st) == 0 ? b : NULL;
}

static inline int check_summary(const char *name) {
    printf("%s: %d passed, %d failed", name, check_passed, check_failed);
    if (check_skipped) printf(", %d skipped", check_skipped);
    printf("\n");
    return check_failed ? 1 : 0;
}

#endif
