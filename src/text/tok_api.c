/* tok_api.c — the public tokenizer API of wick.h (wick_tokenizer_*): loading a
 * tokenizer on its own from any source wick reads (model or vocab-only GGUF,
 * model directory, tokenizer-only directory, a tokenizer.json path), and
 * encode (with or without a limit on the ids) / decode with invalid UTF-8
 * counted. A model's own tokenizer: wick_model_tokenizer (model_api.c). */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "format/gguf.h"
#include "text/tok_internal.h"

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

wick_tokenizer *wick_tokenizer_load(const char *path, wick_error *err) {
    if (!path || !*path) {
        wick_fail(err, "no tokenizer path given");
        return NULL;
    }
    if (dir_exists(path)) return tok_load_hf_dir(path, err);
    if (!file_exists(path)) {
        wick_fail_code(err, WICK_E_NOT_FOUND, "%s: no such file or directory", path);
        return NULL;
    }
    if (ends_with(path, "tokenizer.json") || ends_with(path, "vocab.json") ||
        ends_with(path, "tokenizer_config.json")) {
        /* a file of a tokenizer directory: load the directory */
        size_t n = strlen(path);
        char *dir = malloc(n + 2);
        if (!dir) {
            wick_fail_code(err, WICK_E_NO_MEMORY, "out of memory");
            return NULL;
        }
        memcpy(dir, path, n + 1);
        char *slash = strrchr(dir, '/');
        if (slash == dir) slash[1] = 0;
        else if (slash) *slash = 0;
        else strcpy(dir, ".");
        wick_tokenizer *t = tok_load_hf_dir(dir, err);
        free(dir);
        return t;
    }
    gguf_file *f = gguf_open(path, err);
    if (!f) return NULL;
    wick_tokenizer *t = tok_load_gguf(f, err);
    if (!t) wick_fail_prefix(err, "%s: ", path);
    gguf_close(f);
    return t;
}

void wick_tokenizer_free(wick_tokenizer *t) { tok_free(t); }

int wick_tokenizer_n_vocab(const wick_tokenizer *t) { return t ? tok_n_vocab(t) : 0; }

int wick_tokenizer_encode(const wick_tokenizer *t, const char *text, size_t len, bool add_special,
                          int32_t **ids, size_t *n_ids, size_t *n_invalid, wick_error *err) {
    if (ids) *ids = NULL;
    if (n_ids) *n_ids = 0;
    if (n_invalid) *n_invalid = 0;
    if (!t || !ids || !n_ids) return wick_fail(err, "wick_tokenizer_encode: NULL argument");
    if (n_invalid && text) *n_invalid = tok_utf8_count_invalid(text, len);
    return tok_encode(t, text, len, add_special, true, ids, n_ids, err);
}

int wick_tokenizer_encode_max(const wick_tokenizer *t, const char *text, size_t len, bool add_special,
                              size_t max_ids, int32_t **ids, size_t *n_ids, size_t *n_invalid, wick_error *err) {
    if (ids) *ids = NULL;
    if (n_ids) *n_ids = 0;
    if (n_invalid) *n_invalid = 0;
    if (!t || !ids || !n_ids) return wick_fail(err, "wick_tokenizer_encode_max: NULL argument");
    int rc = tok_encode_limit(t, text, len, add_special, true, max_ids, 0, ids, n_ids, NULL, err);
    if (rc == 0 && n_invalid && text) *n_invalid = tok_utf8_count_invalid(text, len);
    return rc;
}

size_t wick_tokenizer_max_bytes_per_id(const wick_tokenizer *t) { return tok_max_bytes_per_id(t); }

char *wick_tokenizer_decode(const wick_tokenizer *t, const int32_t *ids, size_t n,
                            bool skip_special, size_t *len, wick_error *err) {
    if (len) *len = 0;
    if (!t || (!ids && n)) {
        wick_fail(err, "wick_tokenizer_decode: NULL argument");
        return NULL;
    }
    return tok_decode_len(t, ids, n, skip_special, len, err);
}

int wick_tokenizer_piece(const wick_tokenizer *t, int32_t id, char *buf, size_t cap) {
    return t ? tok_piece(t, id, buf, cap) : -1;
}
