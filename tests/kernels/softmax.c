/* softmax.c -- numerically stable row-wise softmax of an n x m matrix:
 * subtract the row maximum (fmax reduction), exponentiate, normalise.
 * Rows are independent.  C99 VLA array parameters, fmax, exp, local
 * scalars, -DBL_MAX from <float.h>.  The row sum is >= 1 (the maximum
 * contributes exp(0)), so the division is always safe. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <float.h>

#ifndef N
#define N 48
#endif
#ifndef M
#define M 64
#endif

static void init_array(int n, int m, double X[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      X[i][j] = (double)((i * 7 + j * 13) % 29) / 4.0 - 3.0;
}

void kernel_softmax(int n, int m, double X[n][m], double Y[n][m])
{
  for (int i = 0; i < n; i++) {
    double mx = -DBL_MAX;
    for (int j = 0; j < m; j++)
      mx = fmax(mx, X[i][j]);
    double s = 0.0;
    for (int j = 0; j < m; j++) {
      Y[i][j] = exp(X[i][j] - mx);
      s += Y[i][j];
    }
    for (int j = 0; j < m; j++)
      Y[i][j] = Y[i][j] / s;
  }
}

int main(void)
{
  double (*X)[M] = (double (*)[M])malloc(sizeof(double[N][M]));
  double (*Y)[M] = (double (*)[M])malloc(sizeof(double[N][M]));

  init_array(N, M, X);
  kernel_softmax(N, M, X, Y);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      checksum += Y[i][j] * (j + 1);
  printf("softmax checksum: %.6f\n", checksum);

  free(X);
  free(Y);
  return 0;
}
