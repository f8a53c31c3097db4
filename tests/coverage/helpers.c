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
