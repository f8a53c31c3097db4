/* Undeclared built-ins, as polyhedral test suites and PENCIL code use them. */

void clip_then_scale(int n, double *a, double *b) {
  for (int i = 0; i < n; i++)
    a[i] = min(a[i], 1.0);
  for (int i = 0; i < n; i++)
    b[i] = 2.0 * a[i];
}

void tiled_copy(int n, double A[n][n], double B[n][n]) {
  for (int t = 0; t <= floord(n - 1, 32); t++)
    for (int i = 32 * t; i < n && i < 32 * t + 32; i++)
      A[i][0] = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = A[i][j] + 1.0;
}

void assumed(int n, double *x) {
  __pencil_assume(n >= 4);
  for (int i = 0; i < n; i++)
    x[i] = x[i] * 0.5;
}
