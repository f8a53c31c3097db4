/* guarded_update.c -- an update under a data-dependent `if` with a scalar declared in the
 * branch and a compound assignment (`y[i] += cond ? t * t : 0` in the model). */

void guarded_update(int n, int m, double A[n][m], double x[m], double y[n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      if (A[i][j] * x[j] > 0.9) {
        double t = A[i][j] * x[j];
        y[i] += t * t;
      } else {
        y[i] -= 0.5 * x[j];
      }
}
