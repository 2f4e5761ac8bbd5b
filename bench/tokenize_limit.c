/* tokenize_limit.c — what one long prompt costs the tokenizer: CPU time and the
 * peak memory (resident set) added while encoding it, with
 * wick_tokenizer_encode (the whole count) or wick_tokenizer_encode_max (a limit
 * on the ids). The peak is the kernel's high-water mark, reset (Linux
 * /proc/self/clear_refs) after the tokenizer is loaded and the text is made.
 * Text kinds: eng (English words and line breaks), word (one run of letters),
 * space (one run of spaces), cjk (one run of a CJK character), or a file.
 * Usage: build/bench/tokenize_limit TOKENIZER [MiB 8] [limit, -1 = none: 2048] [eng|word|space|cjk|FILE] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "wick.h"

static long status_kb(const char *key) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, k)) v = atol(line + k + 1);
    if (f) fclose(f);
    return v;
}

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static char *make_text(const char *kind, size_t n, size_t *len) {
    static const char *const W[] = {"Once", "upon", "a", "time,", "there", "was", "a", "little", "girl", "named",
                                    "Lily.", "She", "loved", "to", "play", "outside", "in", "the", "park.", "\n"};
    char *s = malloc(n + 4);
    size_t o = 0;
    unsigned r = 1;
    if (strcmp(kind, "eng") && strcmp(kind, "word") && strcmp(kind, "space") && strcmp(kind, "cjk")) {
        FILE *f = fopen(kind, "rb");
        if (!f) return NULL;
        while (o < n) { /* the file, again and again */
            size_t k = fread(s + o, 1, n - o, f);
            if (!k) {
                if (!o) break;
                rewind(f);
            }
            o += k;
        }
        fclose(f);
    }
    while (o < n) {
        if (!strcmp(kind, "eng")) {
            r = r * 1103515245u + 12345u;
            const char *w = W[(r >> 16) % 20];
            size_t l = strlen(w);
            if (o + l + 1 > n) break;
            memcpy(s + o, w, l);
            o += l;
            if (w[0] != '\n') s[o++] = ' ';
        } else if (!strcmp(kind, "word")) {
            s[o] = (char)('a' + o % 26);
            o++;
        } else if (!strcmp(kind, "space")) {
            s[o++] = ' ';
        } else {
            if (o + 3 > n) break;
            memcpy(s + o, "\xe4\xb8\xad", 3);
            o += 3;
        }
    }
    *len = o;
    return s;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tokenize_limit TOKENIZER [MiB 8] [limit 2048, -1 = none] [eng|word|space|cjk|FILE]\n");
        return 2;
    }
    double mib = argc > 2 ? atof(argv[2]) : 8;
    long limit = argc > 3 ? atol(argv[3]) : 2048;
    const char *kind = argc > 4 ? argv[4] : "eng";
    wick_error err = {0};
    wick_tokenizer *t = wick_tokenizer_load(argv[1], &err);
    if (!t) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    size_t len;
    char *text = make_text(kind, (size_t)(mib * 1048576), &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", kind);
        return 1;
    }
    FILE *cr = fopen("/proc/self/clear_refs", "w"); /* reset the high-water mark */
    if (cr) {
        fputs("5", cr);
        fclose(cr);
    }
    long rss0 = status_kb("VmRSS:");
    double c0 = cpu_s();
    int32_t *ids = NULL;
    size_t n = 0;
    int rc = limit < 0 ? wick_tokenizer_encode(t, text, len, true, &ids, &n, NULL, &err)
                       : wick_tokenizer_encode_max(t, text, len, true, (size_t)limit, &ids, &n, NULL, &err);
    double c1 = cpu_s();
    long hwm = status_kb("VmHWM:");
    printf("%s %zu bytes, limit %ld: rc %d, %s%zu ids, CPU %.4f s, peak RSS +%.1f MiB (bound %zu bytes/id)\n", kind, len,
           limit, rc, rc == 1 ? "> " : "", n, c1 - c0, (double)(hwm - rss0) / 1024, wick_tokenizer_max_bytes_per_id(t));
    free(ids);
    free(text);
    wick_tokenizer_free(t);
    return rc < 0;
}
