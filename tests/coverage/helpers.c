/* Loops calling the user's own helpers. */
#include <stdio.h>

static double clamp(double v) {
  if (v < 0.0)
    return 0.0;
  return v > 1.0 ? 1.0 : v;
}

static void bump(double *a, int i) { a[i] += 1.0; }

static inline int idx(int i, int j, int m) { return i * m + j; }

void clamp_all(int n, double *a) {
  for (int i = 0; i < n; i++)
    a[i] = clamp(a[i]);
}

void bump_all(int n, double *a) {
  for (int i = 0; i < n; i++)
    bump(a, i);
}

void through_index(int n, int m, double *restrict a, double *restrict b) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[idx(i, j, m)] = a[idx(i, j, m)] * 3.0;
}

void report(int n, double *a) {
  for (int i = 0; i < n; i++)
    printf("%f\n", a[i]);
}

static void axpy_row(int m, double alpha, const double *x, double *y) {
  for (int j = 0; j < m; j++)
    y[j] += alpha * x[j];
}

static int sign(double v) {
  if (v > 0)
    return 1;
  if (v < 0)
    return -1;
  return 0;
}

static double total;

static void accumulate(double v) { total += v; }

void axpy_rows(int n, int m, double A[n][m], double B[n][m], const double *alpha) {
  for (int i = 0; i < n; i++)
    axpy_row(m, alpha[i], A[i], B[i]);
}

void signs(int n, const double *restrict a, int *restrict s) {
  for (int i = 0; i < n; i++)
    s[i] = sign(a[i] - 0.5);
}

void sum_into_global(int n, const double *a) {
  for (int i = 0; i < n; i++)
    accumulate(a[i]);
}
