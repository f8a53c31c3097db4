/* recompute.c -- a local temporary defined once per iteration from inputs that are never
 * overwritten: reverse mode recomputes it rather than taping it. */
void recompute(int n, int m, double A[n][m], double B[n][m], double C[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double t = A[i][j] * B[i][j];
      C[i][j] = t * t + A[i][j];
    }
}
