/* chi2.h — the chi-square test the sampling tests share: the regularized
 * upper incomplete gamma function Q(a, x) (series below a + 1, Lentz's
 * continued fraction above) and the p-value of observed counts against
 * probabilities. */
#ifndef WICK_TESTS_CHI2_H
#define WICK_TESTS_CHI2_H

#include <math.h>

/* Q(a, x); the p-value of a chi-square statistic 2x on 2a degrees of freedom. */
static inline double gamma_q(double a, double x) {
    if (x <= 0) return 1.0;
    const double lg = lgamma(a);
    if (x < a + 1) { /* series for P */
        double sum = 1.0 / a, term = sum;
        for (int n = 1; n < 1000; n++) {
            term *= x / (a + n);
            sum += term;
            if (fabs(term) < fabs(sum) * 1e-15) break;
        }
        return 1.0 - sum * exp(-x + a * log(x) - lg);
    }
    /* continued fraction for Q (Lentz) */
    double b = x + 1 - a, c = 1e300, d = 1 / b, h = d;
    for (int i = 1; i < 1000; i++) {
        const double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < 1e-300) d = 1e-300;
        c = b + an / c;
        if (fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        const double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-15) break;
    }
    return exp(-x + a * log(x) - lg) * h;
}

/* p-value of counts against probabilities (cells with expectation < 5 are
 * pooled into one; a count in a zero-probability cell fails outright). */
static inline double chi2_pvalue(const long *count, const double *prob, int n, long total) {
    double chi = 0, pool_e = 0, pool_o = 0;
    int df = -1;
    for (int i = 0; i < n; i++) {
        const double e = prob[i] * (double)total;
        if (prob[i] <= 0) {
            if (count[i] > 0) return 0;
            continue;
        }
        if (e < 5) {
            pool_e += e, pool_o += (double)count[i];
            continue;
        }
        chi += (count[i] - e) * (count[i] - e) / e;
        df++;
    }
    if (pool_e > 0) {
        chi += (pool_o - pool_e) * (pool_o - pool_e) / pool_e;
        df++;
    }
    if (df < 1) return 1;
    return gamma_q(df / 2.0, chi / 2.0);
}

#endif
