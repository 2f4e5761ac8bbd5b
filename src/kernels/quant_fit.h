/* quant_fit.h — the scale searches the block quantizers share.
 *
 * Each fits one group of n values x with per-value importance weights w
 * (w >= 0) to a small integer grid and returns the step; the grids are
 *   affine:    x ≈ step·L - offset, L in [0, nmax], step >= 0, offset >= 0
 *              (Q2_K, Q4_K, Q5_K sub-blocks)
 *   symmetric: x ≈ step·q, q in [-nmax, nmax-1] (Q3_K, Q6_K sub-blocks)
 *   table:     x ≈ step·values[L], L in [0, 16) (IQ4_NL, IQ4_XS blocks)
 * A search tries a fan of candidate steps around the one that maps the
 * extreme value onto the grid's end, rounds every x for each, refits the
 * step (and offset) by weighted least squares given those integers, and
 * keeps the candidate with the least weighted error — the method of
 * llama.cpp's reference quantizers (ggml-quants.c), written afresh here.
 * Rounding is to nearest, ties to even; every float→int conversion is
 * clamped first, so NaN, infinite or huge inputs give in-range integers. */
#ifndef WICK_KERNELS_QUANT_FIT_H
#define WICK_KERNELS_QUANT_FIT_H

#include <stdbool.h>
#include <stdint.h>

/* Groups whose largest |x| is below this are all zero (llama.cpp's GROUP_MAX_EPS). */
#define QFIT_EPS 1e-15f

/* v rounded to the nearest integer (ties to even), clamped to [lo, hi]; NaN gives lo. */
static inline int qfit_round(float v, int lo, int hi) {
    if (!(v >= (float)lo)) return lo;
    if (v >= (float)hi) return hi;
    return (int)__builtin_rintf(v);
}

/* d as an fp16 bit pattern, rounded to nearest even but saturating at
 * ±65504 instead of overflowing to infinity (a scale must stay finite). */
uint16_t qfit_fp16(float d);

/* The candidate steps of an affine search: (nmax + rmin + rdelta·s) / (max - min)
 * for s = 0..nstep; the error is Σ w·|x - x'| when abs_err, else Σ w·(x - x')². */
typedef struct qfit_fan {
    float rmin, rdelta;
    int nstep;
    bool abs_err;
} qfit_fan;

/* Affine fit: L[i] in [0, nmax], *offset >= 0 such that x ≈ step·L - offset;
 * returns step (0 when every x is equal: L = 0, offset = -min(x, 0)). */
float qfit_affine(int n, int nmax, const float *x, const float *w, uint8_t *L, float *offset, const qfit_fan *fan);

/* Symmetric fit with the candidate steps -m / (nmax + 0.1·s), s = -nsteps..nsteps,
 * m the x of largest |x|: q[i] in [-nmax, nmax-1] with x ≈ step·q; returns
 * step (signed: the extreme value maps to -nmax), 0 for an all-zero group. */
float qfit_symmetric(int n, int nmax, const float *x, const float *w, int8_t *q, int nsteps);

/* Symmetric fit by coordinate descent: start from the step -m / nmax, then
 * up to `passes` times move each q[i] to the integer nearest x[i] / (the
 * least-squares step of the others) when that lowers the weighted error. */
float qfit_symmetric_descent(int n, int nmax, const float *x, const float *w, int8_t *q, int passes);

/* The index of the entry of the ascending table values[16] nearest v (the
 * upper one on a tie). */
int qfit_table_index(const int8_t values[16], float v);

/* Table fit: the step of x ≈ step·values[L] (L the nearest entry to x/step);
 * candidate steps map the extreme value m onto -values[0] and onto
 * values[0] + s, s = -ntry..ntry; returns the step (0 for an all-zero group). */
float qfit_table(int n, const int8_t values[16], const float *x, const float *w, int ntry);

#endif
