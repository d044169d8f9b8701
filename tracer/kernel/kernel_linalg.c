// kernel_linalg: eigenvalues and singular values of the matrices of the last two axes (see
// kernel_linalg.h). Each matrix is copied into a work buffer, row-major, and worked on there.
#include "kernel_linalg.h"

#include <float.h>
#include <math.h>

#include "kernel_private.h"

#define AT(a, n, i, j) ((a)[(size_t)(i) * (n) + (size_t)(j)])

// |b| with the sign of a (Fortran's SIGN(b, a)).
static double with_sign_of(double a, double b) {
    return a >= 0.0 ? fabs(b) : -fabs(b);
}

// The exponent of the power of two that brings the largest |value| of count entries into
// [0.5, 1): scaling by it is exact, and the iterations then meet no overflow (products of
// entries stay small). 0 when every value is 0.
static int scale_exponent(const double *a, size_t count) {
    double largest = 0.0;
    for (size_t i = 0; i < count; i++)
        largest = fabs(a[i]) > largest ? fabs(a[i]) : largest;
    int e = 0;
    if (largest > 0.0)
        frexp(largest, &e);
    return e;
}

// ---------------------------------------------------------------- eigenvalues

// Rows i and j, and columns i and j, swapped: a similarity by a permutation, which moves values
// without changing them.
static void swap_index(double *a, size_t n, size_t i, size_t j) {
    for (size_t c = 0; c < n; c++) {
        double t = AT(a, n, i, c);
        AT(a, n, i, c) = AT(a, n, j, c);
        AT(a, n, j, c) = t;
    }
    for (size_t r = 0; r < n; r++) {
        double t = AT(a, n, r, i);
        AT(a, n, r, i) = AT(a, n, r, j);
        AT(a, n, r, j) = t;
    }
}

// Whether row (or column) j holds only zeros in the window [lo, hi] but on the diagonal.
static bool alone(const double *a, size_t n, size_t j, size_t lo, size_t hi, bool row) {
    for (size_t i = lo; i <= hi; i++)
        if (i != j && (row ? AT(a, n, j, i) : AT(a, n, i, j)) != 0.0)
            return false;
    return true;
}

// Rows that hold an eigenvalue alone moved to the bottom, then columns that do to the left, by
// swaps (EISPACK's balanc, its first part): a becomes block upper triangular, and each
// diagonal value outside the core [*lo, *hi] is an eigenvalue, exactly. A triangular matrix is
// all such values, as numpy finds too, however often a value repeats.
static void isolate(double *a, size_t n, size_t *lo, size_t *hi) {
    *lo = 0;
    *hi = n - 1;
    for (bool found = true; found && *hi > *lo;) {
        found = false;
        for (size_t j = *hi + 1; j-- > *lo && !found;)
            if (alone(a, n, j, *lo, *hi, true)) {
                swap_index(a, n, j, *hi);
                (*hi)--;
                found = true;
            }
    }
    for (bool found = true; found && *hi > *lo;) {
        found = false;
        for (size_t j = *lo; j <= *hi && !found; j++)
            if (alone(a, n, j, *lo, *hi, false)) {
                swap_index(a, n, j, *lo);
                (*lo)++;
                found = true;
            }
    }
}

// Rows and columns scaled by powers of two until each row and its column have sums of |entries|
// (the diagonal left out) within a factor of 2 of each other (Numerical Recipes' balanc). The
// eigenvalues stay the same, and come out more accurate where rows and columns differ in size.
static void balance(double *a, size_t n) {
    bool done = false;
    while (!done) {
        done = true;
        for (size_t i = 0; i < n; i++) {
            double c = 0.0, r = 0.0;
            for (size_t j = 0; j < n; j++)
                if (j != i) {
                    c += fabs(AT(a, n, j, i));
                    r += fabs(AT(a, n, i, j));
                }
            if (c == 0.0 || r == 0.0)
                continue;
            double g = r / 2.0, f = 1.0, s = c + r;
            while (c < g) {
                f *= 2.0;
                c *= 4.0;
            }
            g = r * 2.0;
            while (c > g) {
                f /= 2.0;
                c /= 4.0;
            }
            if ((c + r) / f < 0.95 * s) {
                done = false;
                for (size_t j = 0; j < n; j++)
                    AT(a, n, i, j) /= f;
                for (size_t j = 0; j < n; j++)
                    AT(a, n, j, i) *= f;
            }
        }
    }
}

// line[k × stride] for k = m..n-1 (a column of a: stride n; a row: 1) reflected by
// I - u u'/h: minus u times (u · line) / h, the dot product summed from the end as EISPACK's.
static void reflect(double *line, size_t stride, const double *u, size_t m, size_t n, double h) {
    double f = 0.0;
    for (size_t k = n; k-- > m;)
        f += u[k] * line[k * stride];
    f /= h;
    for (size_t k = m; k < n; k++)
        line[k * stride] -= f * u[k];
}

// a becomes upper Hessenberg (zero below the first subdiagonal) with the same eigenvalues, by
// one Householder reflection per column (EISPACK's orthes); ort holds n values of work.
static void hessenberg(double *a, size_t n, double *ort) {
    for (size_t m = 1; m + 1 < n; m++) {
        double scale = 0.0;
        for (size_t i = m; i < n; i++)
            scale += fabs(AT(a, n, i, m - 1));
        if (scale == 0.0)
            continue;
        double h = 0.0;
        for (size_t i = n; i-- > m;) {
            ort[i] = AT(a, n, i, m - 1) / scale;
            h += ort[i] * ort[i];
        }
        double g = -with_sign_of(ort[m], sqrt(h));
        h -= ort[m] * g;
        ort[m] -= g;
        // (I - u u'/h) a: each column from row m; then a (I - u u'/h): each row from column m
        for (size_t j = m; j < n; j++)
            reflect(&AT(a, n, 0, j), n, ort, m, n, h);
        for (size_t i = 0; i < n; i++)
            reflect(&AT(a, n, i, 0), 1, ort, m, n, h);
        AT(a, n, m, m - 1) = scale * g;
        for (size_t i = m + 1; i < n; i++)
            AT(a, n, i, m - 1) = 0.0;
    }
}

// The eigenvalues (wr + i wi) of the upper Hessenberg a by the Francis double-shift QR
// iteration, as Numerical Recipes' hqr (EISPACK's hqr) computes them, with a small subdiagonal
// entry one below DBL_EPSILON times its neighbours on the diagonal. Indices are signed: the
// active block [l, nn] shrinks from the bottom to nothing. False after `limit` steps without an
// eigenvalue found.
static bool hqr(double *a, long n, double *wr, double *wi, size_t limit) {
    double anorm = 0.0;
    for (long i = 0; i < n; i++)
        for (long j = i > 0 ? i - 1 : 0; j < n; j++)
            anorm += fabs(AT(a, n, i, j));
    long nn = n - 1, l = 0;
    double t = 0.0, p = 0.0, q = 0.0, r = 0.0, s, w, x, y, z;
    while (nn >= 0) {
        size_t its = 0;
        do {
            // l: the top of the block whose subdiagonal has no negligible entry
            for (l = nn; l >= 1; l--) {
                s = fabs(AT(a, n, l - 1, l - 1)) + fabs(AT(a, n, l, l));
                if (s == 0.0)
                    s = anorm;
                if (fabs(AT(a, n, l, l - 1)) <= DBL_EPSILON * s) {
                    AT(a, n, l, l - 1) = 0.0;
                    break;
                }
            }
            x = AT(a, n, nn, nn);
            if (l == nn) {  // one real eigenvalue split off
                wr[nn] = x + t;
                wi[nn] = 0.0;
                nn--;
                continue;
            }
            y = AT(a, n, nn - 1, nn - 1);
            w = AT(a, n, nn, nn - 1) * AT(a, n, nn - 1, nn);
            if (l == nn - 1) {  // a 2 × 2 block: two real eigenvalues or a conjugate pair
                p = 0.5 * (y - x);
                q = p * p + w;
                z = sqrt(fabs(q));
                x += t;
                if (q >= 0.0) {
                    z = p + with_sign_of(p, z);
                    wr[nn - 1] = wr[nn] = x + z;
                    if (z != 0.0)
                        wr[nn] = x - w / z;
                    wi[nn - 1] = wi[nn] = 0.0;
                } else {
                    wr[nn - 1] = wr[nn] = x + p;
                    wi[nn - 1] = z;
                    wi[nn] = -z;
                }
                nn -= 2;
                continue;
            }
            if (its == limit)
                return false;
            if (its == 10 || its == 20) {  // an exceptional shift breaks a cycle
                t += x;
                for (long i = 0; i <= nn; i++)
                    AT(a, n, i, i) -= x;
                s = fabs(AT(a, n, nn, nn - 1)) + fabs(AT(a, n, nn - 1, nn - 2));
                y = x = 0.75 * s;
                w = -0.4375 * s * s;
            }
            its++;
            // m: where two small subdiagonal entries in a row let the step start
            long m;
            for (m = nn - 2; m >= l; m--) {
                z = AT(a, n, m, m);
                r = x - z;
                s = y - z;
                p = (r * s - w) / AT(a, n, m + 1, m) + AT(a, n, m, m + 1);
                q = AT(a, n, m + 1, m + 1) - z - r - s;
                r = AT(a, n, m + 2, m + 1);
                s = fabs(p) + fabs(q) + fabs(r);
                p /= s;
                q /= s;
                r /= s;
                if (m == l)
                    break;
                double u = fabs(AT(a, n, m, m - 1)) * (fabs(q) + fabs(r));
                double v = fabs(p) * (fabs(AT(a, n, m - 1, m - 1)) + fabs(z) + fabs(AT(a, n, m + 1, m + 1)));
                if (u <= DBL_EPSILON * v)
                    break;
            }
            for (long i = m + 2; i <= nn; i++) {
                AT(a, n, i, i - 2) = 0.0;
                if (i != m + 2)
                    AT(a, n, i, i - 3) = 0.0;
            }
            // the double step: a bulge chased down the block by 3 × 3 reflections
            for (long k = m; k <= nn - 1; k++) {
                if (k != m) {
                    p = AT(a, n, k, k - 1);
                    q = AT(a, n, k + 1, k - 1);
                    r = k != nn - 1 ? AT(a, n, k + 2, k - 1) : 0.0;
                    x = fabs(p) + fabs(q) + fabs(r);
                    if (x != 0.0) {
                        p /= x;
                        q /= x;
                        r /= x;
                    }
                }
                s = with_sign_of(p, sqrt(p * p + q * q + r * r));
                if (s == 0.0)
                    continue;
                if (k != m)
                    AT(a, n, k, k - 1) = -s * x;
                else if (l != m)
                    AT(a, n, k, k - 1) = -AT(a, n, k, k - 1);
                p += s;
                x = p / s;
                y = q / s;
                z = r / s;
                q /= p;
                r /= p;
                for (long j = k; j <= nn; j++) {
                    p = AT(a, n, k, j) + q * AT(a, n, k + 1, j);
                    if (k != nn - 1) {
                        p += r * AT(a, n, k + 2, j);
                        AT(a, n, k + 2, j) -= p * z;
                    }
                    AT(a, n, k + 1, j) -= p * y;
                    AT(a, n, k, j) -= p * x;
                }
                long last = nn < k + 3 ? nn : k + 3;
                for (long i = l; i <= last; i++) {
                    p = x * AT(a, n, i, k) + y * AT(a, n, i, k + 1);
                    if (k != nn - 1) {
                        p += z * AT(a, n, i, k + 2);
                        AT(a, n, i, k + 2) -= p * r;
                    }
                    AT(a, n, i, k + 1) -= p * q;
                    AT(a, n, i, k) -= p;
                }
            }
        } while (l < nn - 1);
    }
    return true;
}

// |re + im i| of the scaled values, which cannot overflow; sqrt rounds once, as IEEE says.
static double modulus(double re, double im) {
    return sqrt(re * re + im * im);
}

// Whether eigenvalue (ar, ai) goes before (br, bi): the larger modulus, then the larger real
// part, then the larger imaginary part, where moduli or real parts that differ by tie or less
// count as equal (the cube roots of 1 have modulus 1 however they round: 1 comes first).
static bool eig_before(double ar, double ai, double br, double bi, double tie) {
    double ma = modulus(ar, ai), mb = modulus(br, bi);
    if (fabs(ma - mb) > tie)
        return ma > mb;
    if (fabs(ar - br) > tie)
        return ar > br;
    return ai > bi;
}

// The n eigenvalues (wr + i wi) of a (n × n, scaled, overwritten), with core (n × n) and ort
// (n) for work: the values isolate leaves alone, and those of the core, balanced, brought to
// Hessenberg form and iterated. False when the iteration stops at its limit.
static bool eigenvalues(double *a, size_t n, double *core, double *ort, double *wr, double *wi, size_t limit) {
    size_t lo, hi;
    isolate(a, n, &lo, &hi);
    for (size_t i = 0; i < n; i++)
        if (i < lo || i > hi) {
            wr[i] = AT(a, n, i, i);
            wi[i] = 0.0;
        }
    size_t c = hi - lo + 1;
    for (size_t i = 0; i < c; i++)
        for (size_t j = 0; j < c; j++)
            AT(core, c, i, j) = AT(a, n, lo + i, lo + j);
    balance(core, c);
    hessenberg(core, c, ort);
    return hqr(core, (long)c, wr + lo, wi + lo, limit);
}

KernelLinalg kernel_eigvals(Tensor *out, const Tensor *a, size_t iterations, size_t *failed) {
    expect_values(a);
    expect_values(out);
    size_t rank = a->shape.rank;
    ASSERT(rank >= 2 && a->shape.dim[rank - 1] == a->shape.dim[rank - 2]);
    size_t n = a->shape.dim[rank - 1], matrices = dims_product(&a->shape, 0, rank - 2);
    ASSERT(out->size == matrices * n * 2);
    if (n == 0)
        return KERNEL_LINALG_OK;
    double *work = util_calloc(2 * n * n + 3 * n, sizeof(double));
    if (!work)
        return KERNEL_LINALG_NO_MEMORY;
    double *core = work + n * n, *ort = core + n * n, *wr = ort + n, *wi = wr + n;
    KernelLinalg status = KERNEL_LINALG_OK;
    for (size_t b = 0; b < matrices; b++) {
        const double *m = a->data + b * n * n;
        int e = scale_exponent(m, n * n);
        for (size_t i = 0; i < n * n; i++)
            work[i] = ldexp(m[i], -e);
        if (!eigenvalues(work, n, core, ort, wr, wi, iterations)) {
            *failed = b;
            status = KERNEL_LINALG_NO_CONVERGENCE;
            break;
        }
        double largest = 0.0;
        for (size_t i = 0; i < n; i++)
            largest = modulus(wr[i], wi[i]) > largest ? modulus(wr[i], wi[i]) : largest;
        double tie = KERNEL_EIG_TIE * largest;
        // into the order, by insertion (stable; n² comparisons, next to the iteration's n³)
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && eig_before(wr[j], wi[j], wr[j - 1], wi[j - 1], tie); j--) {
                double tr = wr[j], ti = wi[j];
                wr[j] = wr[j - 1];
                wi[j] = wi[j - 1];
                wr[j - 1] = tr;
                wi[j - 1] = ti;
            }
        double *o = out->data + b * n * 2;
        for (size_t i = 0; i < n; i++) {
            // + 0.0 turns -0 into 0: an eigenvalue has no sign of zero to show
            o[2 * i] = ldexp(wr[i], e) + 0.0;
            o[2 * i + 1] = ldexp(wi[i], e) + 0.0;
        }
    }
    util_free(work);
    return status;
}

// ---------------------------------------------------------------- singular values

// Σ x[i] y[i] over the p values of two columns, in order.
static double column_dot(const double *x, const double *y, size_t p) {
    double sum = 0.0;
    for (size_t i = 0; i < p; i++)
        sum += x[i] * y[i];
    return sum;
}

// The rotation of columns x and y (p values) that makes them orthogonal, given
// alpha = |x|², beta = |y|², gamma = x · y (nonzero): t = tan θ, the root of
// t² + 2 ζ t - 1 = 0 smaller in size, ζ = (beta - alpha) / (2 gamma), written so that ζ² cannot
// overflow.
static void rotate(double *x, double *y, size_t p, double alpha, double beta, double gamma) {
    double zeta = (beta - alpha) / (2.0 * gamma);
    double t;
    if (fabs(zeta) > 1.0) {
        double inv = 1.0 / zeta;
        t = with_sign_of(zeta, 1.0) / (fabs(zeta) * (1.0 + sqrt(1.0 + inv * inv)));
    } else {
        t = with_sign_of(zeta, 1.0) / (fabs(zeta) + sqrt(1.0 + zeta * zeta));
    }
    double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
    for (size_t i = 0; i < p; i++) {
        double xi = x[i], yi = y[i];
        x[i] = c * xi - s * yi;
        y[i] = s * xi + c * yi;
    }
}

// The q columns of cols (p values each, p >= q) made orthogonal, sweep by sweep; false when
// the last of `sweeps` sweeps still rotated.
static bool orthogonalise(double *cols, size_t p, size_t q, size_t sweeps) {
    for (size_t sweep = 0; sweep < sweeps; sweep++) {
        bool rotated = false;
        for (size_t j = 0; j + 1 < q; j++)
            for (size_t k = j + 1; k < q; k++) {
                double *x = cols + j * p, *y = cols + k * p;
                double alpha = column_dot(x, x, p), beta = column_dot(y, y, p), gamma = column_dot(x, y, p);
                if (fabs(gamma) <= DBL_EPSILON * sqrt(alpha) * sqrt(beta))
                    continue;
                rotate(x, y, p, alpha, beta, gamma);
                rotated = true;
            }
        if (!rotated)
            return true;
    }
    return false;
}

KernelLinalg kernel_svdvals(Tensor *out, const Tensor *a, size_t sweeps, size_t *failed) {
    expect_values(a);
    expect_values(out);
    size_t rank = a->shape.rank;
    ASSERT(rank >= 2);
    size_t m = a->shape.dim[rank - 2], n = a->shape.dim[rank - 1], matrices = dims_product(&a->shape, 0, rank - 2);
    bool wide = n > m;  // then the columns of the transpose: q = m of them, p = n long
    size_t p = wide ? n : m, q = wide ? m : n;
    ASSERT(out->size == matrices * q);
    if (q == 0)
        return KERNEL_LINALG_OK;
    double *cols = util_calloc(p * q + q, sizeof(double));
    if (!cols)
        return KERNEL_LINALG_NO_MEMORY;
    double *sv = cols + p * q;
    KernelLinalg status = KERNEL_LINALG_OK;
    for (size_t b = 0; b < matrices; b++) {
        const double *mat = a->data + b * m * n;
        int e = scale_exponent(mat, m * n);
        // column j of what is orthogonalised: column j of a, or row j of a when a is wide
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < n; j++)
                cols[wide ? i * p + j : j * p + i] = ldexp(mat[i * n + j], -e);
        if (!orthogonalise(cols, p, q, sweeps)) {
            *failed = b;
            status = KERNEL_LINALG_NO_CONVERGENCE;
            break;
        }
        for (size_t j = 0; j < q; j++)
            sv[j] = sqrt(column_dot(cols + j * p, cols + j * p, p));
        // largest first, by insertion (stable)
        for (size_t i = 1; i < q; i++)
            for (size_t j = i; j > 0 && sv[j] > sv[j - 1]; j--) {
                double t = sv[j];
                sv[j] = sv[j - 1];
                sv[j - 1] = t;
            }
        for (size_t j = 0; j < q; j++)
            out->data[b * q + j] = ldexp(sv[j], e);
    }
    util_free(cols);
    return status;
}
