/* quant_fit.c — owns the scale searches of the block quantizers (see
 * quant_fit.h): affine (step and offset), symmetric (fan of steps, or
 * coordinate descent) and non-linear table fits of one group of values. */
#include "kernels/quant_fit.h"

#include <math.h>

#include "kernels/convert.h"

uint16_t qfit_fp16(float d) {
    if (d > 65504.0f) d = 65504.0f;
    if (d < -65504.0f) d = -65504.0f;
    return f32_to_fp16(d);
}

/* ---- affine: x ≈ step·L - offset ---- */

/* Weighted error of step·L + lo against x. */
static float affine_error(int n, const float *x, const float *w, const uint8_t *L, float step, float lo,
                          bool abs_err) {
    float e = 0.0f;
    for (int i = 0; i < n; i++) {
        const float diff = step * (float)L[i] + lo - x[i];
        e += w[i] * (abs_err ? fabsf(diff) : diff * diff);
    }
    return e;
}

float qfit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *offset, const qfit_fan *fan) {
    float lo = x[0], hi = x[0], sw = 0.0f, swx = 0.0f;
    for (int i = 0; i < n; i++) {
        lo = fminf(lo, x[i]);
        hi = fmaxf(hi, x[i]);
        sw += w[i];
        swx += w[i] * x[i];
    }
    if (lo > 0.0f) lo = 0.0f; /* the offset only ever lowers values */
    if (!(hi > lo) || !isfinite(hi - lo)) {
        for (int i = 0; i < n; i++) L[i] = 0;
        *offset = isfinite(lo) ? -lo : 0.0f;
        return 0.0f;
    }
    /* the plain grid: lo at 0, hi at nmax */
    float inv = (float)nmax / (hi - lo), step = 1.0f / inv;
    for (int i = 0; i < n; i++) L[i] = (uint8_t)qfit_round(inv * (x[i] - lo), 0, nmax);
    float best = affine_error(n, x, w, L, step, lo, fan->abs_err);
    uint8_t cand[256];
    for (int s = 0; s <= fan->nstep; s++) {
        inv = ((float)nmax + fan->rmin + fan->rdelta * (float)s) / (hi - lo);
        float sl = 0.0f, sll = 0.0f, sxl = 0.0f;
        for (int i = 0; i < n; i++) {
            const int l = qfit_round(inv * (x[i] - lo), 0, nmax);
            cand[i] = (uint8_t)l;
            sl += w[i] * (float)l;
            sll += w[i] * (float)(l * l);
            sxl += w[i] * (float)l * x[i];
        }
        /* weighted least squares of x on (L, 1), the offset held at or below 0 */
        const float det = sw * sll - sl * sl;
        if (!(det > 0.0f)) continue;
        float a = (sw * sxl - swx * sl) / det, b = (sll * swx - sl * sxl) / det;
        if (b > 0.0f) {
            b = 0.0f;
            a = sxl / sll;
        }
        const float e = affine_error(n, x, w, cand, a, b, fan->abs_err);
        if (e < best) {
            best = e;
            step = a;
            lo = b;
            for (int i = 0; i < n; i++) L[i] = cand[i];
        }
    }
    *offset = -lo;
    return step;
}

/* ---- symmetric: x ≈ step·q ---- */

/* The x of largest |x| (the first on a tie), its sign kept. */
static float extreme(int n, const float *x) {
    float amax = 0.0f, m = 0.0f;
    for (int i = 0; i < n; i++)
        if (fabsf(x[i]) > amax) {
            amax = fabsf(x[i]);
            m = x[i];
        }
    return m;
}

float qfit_symmetric(int n, int nmax, const float *x, const float *w, int8_t *q, int nsteps) {
    const float m = extreme(n, x);
    if (!(fabsf(m) >= QFIT_EPS) || !isfinite(m)) {
        for (int i = 0; i < n; i++) q[i] = 0;
        return 0.0f;
    }
    float best_sxq = 0.0f, best_sqq = 0.0f;
    bool have = false;
    for (int k = 0; k <= 2 * nsteps; k++) {
        /* s = 0 first (the extreme exactly on -nmax), then the fan around it */
        const int s = k == 0 ? 0 : k <= nsteps ? -k : k - nsteps;
        const float inv = -((float)nmax + 0.1f * (float)s) / m;
        float sxq = 0.0f, sqq = 0.0f;
        for (int i = 0; i < n; i++) {
            const int l = qfit_round(inv * x[i], -nmax, nmax - 1);
            sxq += w[i] * x[i] * (float)l;
            sqq += w[i] * (float)(l * l);
        }
        /* the refit step sxq/sqq leaves error Σwx² - sxq²/sqq: keep the largest sxq²/sqq */
        if (sqq > 0.0f && (!have || sxq * sxq * best_sqq > best_sxq * best_sxq * sqq)) {
            have = true;
            best_sxq = sxq;
            best_sqq = sqq;
            for (int i = 0; i < n; i++) q[i] = (int8_t)qfit_round(inv * x[i], -nmax, nmax - 1);
        }
    }
    const float step = have ? best_sxq / best_sqq : 0.0f;
    if (!have || !isfinite(step)) { /* every weight zero, or sums beyond float's range: the plain grid */
        for (int i = 0; i < n; i++) q[i] = (int8_t)qfit_round(-(float)nmax / m * x[i], -nmax, nmax - 1);
        return -m / (float)nmax;
    }
    return step;
}

float qfit_symmetric_descent(int n, int nmax, const float *x, const float *w, int8_t *q, int passes) {
    const float m = extreme(n, x);
    if (!(fabsf(m) >= QFIT_EPS) || !isfinite(m)) {
        for (int i = 0; i < n; i++) q[i] = 0;
        return 0.0f;
    }
    const float inv = -(float)nmax / m;
    float sxq = 0.0f, sqq = 0.0f;
    for (int i = 0; i < n; i++) {
        q[i] = (int8_t)qfit_round(inv * x[i], -nmax, nmax - 1);
        sxq += w[i] * x[i] * (float)q[i];
        sqq += w[i] * (float)(q[i] * q[i]);
    }
    if (!(sqq > 0.0f) || !isfinite(sxq * sxq)) return -m / (float)nmax; /* zero weights or overflow: plain grid */
    for (int p = 0; p < passes; p++) {
        int changed = 0;
        for (int i = 0; i < n; i++) {
            /* the sums without element i give the others' step; move q[i] to its nearest multiple */
            const float oxq = sxq - w[i] * x[i] * (float)q[i];
            const float oqq = sqq - w[i] * (float)(q[i] * q[i]);
            if (!(oxq > 0.0f)) continue;
            const int l = qfit_round(x[i] * oqq / oxq, -nmax, nmax - 1);
            if (l == q[i]) continue;
            const float nxq = oxq + w[i] * x[i] * (float)l, nqq = oqq + w[i] * (float)(l * l);
            if (nqq > 0.0f && nxq * nxq * sqq > sxq * sxq * nqq) {
                q[i] = (int8_t)l;
                sxq = nxq;
                sqq = nqq;
                changed++;
            }
        }
        if (!changed) break;
    }
    return sxq / sqq;
}

/* ---- non-linear table ---- */

int qfit_table_index(const int8_t values[16], float v) {
    if (!(v > (float)values[0])) return 0; /* NaN too */
    if (v >= (float)values[15]) return 15;
    int lo = 0, hi = 15; /* values[lo] < v < values[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (v < (float)values[mid]) hi = mid;
        else lo = mid;
    }
    return v - (float)values[lo] < (float)values[hi] - v ? lo : hi;
}

float qfit_table(int n, const int8_t values[16], const float *x, const float *w, int ntry) {
    const float m = extreme(n, x);
    if (!(fabsf(m) >= QFIT_EPS) || !isfinite(m)) return 0.0f;
    float best_sxq = 0.0f, best_sqq = 0.0f;
    bool have = false;
    /* candidate inverse steps: m onto -values[0] (beyond the positive end), then onto
     * values[0] + s, s = -ntry..ntry (onto the negative end and around it). Steps that
     * put m on the positive end lose on plain squared error although they can win on
     * the x²-weighted one, so they are not tried. */
    for (int k = 0; k <= 2 * ntry + 1; k++) {
        const float inv = k == 0 ? -(float)values[0] / m : ((float)values[0] + (float)(k - 1 - ntry)) / m;
        float sxq = 0.0f, sqq = 0.0f;
        for (int i = 0; i < n; i++) {
            const float v = (float)values[qfit_table_index(values, inv * x[i])];
            sxq += w[i] * v * x[i];
            sqq += w[i] * v * v;
        }
        if (sqq > 0.0f && (!have || sxq * sxq * best_sqq > best_sxq * best_sxq * sqq)) {
            have = true;
            best_sxq = sxq;
            best_sqq = sqq;
        }
    }
    const float step = have ? best_sxq / best_sqq : 0.0f;
    /* zero weights or sums beyond float's range: m onto -values[0] */
    return have && isfinite(step) ? step : m / -(float)values[0];
}
