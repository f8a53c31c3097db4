/* logsumexp.c -- row-wise log(sum(exp(X[i][j]))): exp and log, a local scalar per row. */
#include <math.h>

void logsumexp(int n, int m, double X[n][m], double out[n])
{
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int j = 0; j < m; j++)
      s += exp(X[i][j]);
    out[i] = log(s);
  }
}
