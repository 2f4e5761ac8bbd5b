/* gen_config.c — what a model's files say about generating with it: the
 * end-of-generation ids (the tokenizer's EOS and end-of-turn specials, plus
 * generation_config.json's eos_token_id) and the sampling defaults
 * (generation_config.json in an HF directory, llama.cpp's general.sampling.*
 * keys in a GGUF file). The model keeps only the values the files give, with
 * a bit per field; wick_model_sampling_defaults lays them over the caller's
 * values (wick_sampling_default() where nothing else applies). */
#include <stddef.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json_util.h"
#include "model/loader.h"
#include "model/model.h"

static void add_eog(wick_model *m, int32_t id) {
    if (id < 0 || id >= m->hp.n_vocab) return;
    for (int i = 0; i < m->n_eog; i++)
        if (m->eog[i] == id) return;
    if (m->n_eog < WICK_MAX_EOG) m->eog[m->n_eog++] = id;
}

void model_collect_eog(wick_model *m) {
    add_eog(m, tok_eos(m->tok));
    for (int32_t id = 0; id < tok_n_vocab(m->tok); id++)
        if (tok_is_eog(m->tok, id)) add_eog(m, id);
}

static void set_float(wick_model *m, unsigned field, float v) {
    switch (field) {
    case GEN_TEMPERATURE: m->gen_defaults.temperature = v; break;
    case GEN_TOP_P: m->gen_defaults.top_p = v; break;
    case GEN_MIN_P: m->gen_defaults.min_p = v; break;
    case GEN_REPEAT_PENALTY: m->gen_defaults.repeat_penalty = v; break;
    default: return;
    }
    m->gen_set |= field;
}

static void set_int(wick_model *m, unsigned field, int v) {
    switch (field) {
    case GEN_TOP_K: m->gen_defaults.top_k = v; break;
    case GEN_REPEAT_LAST_N: m->gen_defaults.repeat_last_n = v; break;
    default: return;
    }
    m->gen_set |= field;
}

int model_read_generation_config(wick_model *m, const char *dir, wick_error *err) {
    char path[4096];
    if (path_join(path, sizeof path, dir, "generation_config.json") < 0 || !file_exists(path))
        return 0;
    cJSON *g = json_read_file(path, err);
    if (!g) return -1;
    const char *what = "generation_config.json";
    int rc = 0;
    const cJSON *eos = cJSON_GetObjectItemCaseSensitive(g, "eos_token_id");
    if (cJSON_IsNumber(eos)) {
        add_eog(m, (int32_t)eos->valuedouble);
    } else if (cJSON_IsArray(eos)) {
        const cJSON *e;
        cJSON_ArrayForEach(e, eos) if (cJSON_IsNumber(e)) add_eog(m, (int32_t)e->valuedouble);
    }
    /* The knobs the file names; do_sample false means greedy. */
    double temp = -1, top_p = -1, min_p = -1, rep = -1;
    int64_t top_k = -1;
    bool do_sample = true;
    if (json_get_double(g, "temperature", &temp, what, err) < 0 ||
        json_get_double(g, "top_p", &top_p, what, err) < 0 ||
        json_get_double(g, "min_p", &min_p, what, err) < 0 ||
        json_get_double(g, "repetition_penalty", &rep, what, err) < 0 ||
        json_get_int(g, "top_k", 0, 1 << 30, &top_k, what, err) < 0 ||
        json_get_bool(g, "do_sample", &do_sample, what, err) < 0) {
        rc = -1;
    } else if (temp >= 0 || top_p >= 0 || top_k >= 0 || min_p >= 0 || rep >= 0 ||
               cJSON_GetObjectItemCaseSensitive(g, "do_sample")) {
        m->has_gen_defaults = true;
        if (temp >= 0) set_float(m, GEN_TEMPERATURE, (float)temp);
        if (!do_sample) set_float(m, GEN_TEMPERATURE, 0.0f);
        if (top_p >= 0) set_float(m, GEN_TOP_P, (float)top_p);
        if (top_k >= 0) set_int(m, GEN_TOP_K, (int)top_k);
        if (min_p >= 0) set_float(m, GEN_MIN_P, (float)min_p);
        if (rep >= 0) set_float(m, GEN_REPEAT_PENALTY, (float)rep);
    }
    cJSON_Delete(g);
    return rc;
}

int model_read_gguf_sampling(wick_model *m, wick_error *err) {
    static const struct {
        const char *key;
        unsigned field;
        bool integer;
    } KEYS[] = {
        {"general.sampling.temp", GEN_TEMPERATURE, false},
        {"general.sampling.top_k", GEN_TOP_K, true},
        {"general.sampling.top_p", GEN_TOP_P, false},
        {"general.sampling.min_p", GEN_MIN_P, false},
        {"general.sampling.penalty_repeat", GEN_REPEAT_PENALTY, false},
        {"general.sampling.penalty_last_n", GEN_REPEAT_LAST_N, true},
    };
    for (size_t i = 0; i < sizeof KEYS / sizeof KEYS[0]; i++) {
        double v;
        const int found = gguf_get_float(m->gguf, KEYS[i].key, &v, err);
        if (found < 0) return -1;
        if (found == 0) continue;
        m->has_gen_defaults = true;
        if (KEYS[i].integer) set_int(m, KEYS[i].field, (int)v);
        else set_float(m, KEYS[i].field, (float)v);
    }
    return 0;
}

bool wick_model_sampling_defaults(const wick_model *m, wick_sampling *out) {
    if (!m->has_gen_defaults) return false;
    const wick_sampling *d = &m->gen_defaults;
    if (m->gen_set & GEN_TEMPERATURE) out->temperature = d->temperature;
    if (m->gen_set & GEN_TOP_K) out->top_k = d->top_k;
    if (m->gen_set & GEN_TOP_P) out->top_p = d->top_p;
    if (m->gen_set & GEN_MIN_P) out->min_p = d->min_p;
    if (m->gen_set & GEN_REPEAT_PENALTY) out->repeat_penalty = d->repeat_penalty;
    if (m->gen_set & GEN_REPEAT_LAST_N) out->repeat_last_n = d->repeat_last_n;
    return true;
}
