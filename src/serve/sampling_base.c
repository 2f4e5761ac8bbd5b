/* sampling_base.c — a request's starting sampling and token limit: model
 * defaults overlaid by the server's flags (see sampling_base.h). */
#include "serve/sampling_base.h"

#include "serve/fields.h"
#include "serve/server.h"

void serve_sampling_base(const serve_server *s, const wick_model *m, wick_sampling *out) {
    *out = wick_sampling_default();
    if (m) wick_model_sampling_defaults(m, out);
    const serve_sampling_flags *f = &s->cfg.sampling;
    if (f->temp) out->temperature = f->v.temperature;
    if (f->top_k) out->top_k = f->v.top_k;
    if (f->top_p) out->top_p = f->v.top_p;
    if (f->min_p) out->min_p = f->v.min_p;
    if (f->rep) out->repeat_penalty = f->v.repeat_penalty;
    if (f->rep_n) out->repeat_last_n = f->v.repeat_last_n;
    if (f->pres) out->presence_penalty = f->v.presence_penalty;
    if (f->freq) out->frequency_penalty = f->v.frequency_penalty;
    out->seed = f->seed ? f->v.seed : fld_random_seed();
}

void serve_sampling_keep_seed(const serve_server *s, bool request_has_seed, wick_sampling *v) {
    if (!request_has_seed && s->cfg.sampling.seed) v->seed = s->cfg.sampling.v.seed;
}

long long serve_n_predict_for(const serve_server *s, long long requested) {
    return requested < 0 && s->cfg.n_predict > 0 ? s->cfg.n_predict : requested;
}
