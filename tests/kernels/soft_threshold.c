/* soft_threshold.c -- element-wise soft-thresholding (the shrinkage
 * operator of ISTA / lasso solvers) with the per-element residual:
 *   Y = sign(X) * max(|X| - lambda, 0),   E = |X - Y|.
 * Fixed-size array parameters, ternary, fmax, fabs, a local scalar. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#ifndef N
#define N 64
#endif
#ifndef M
#define M 80
#endif

static void init_array(int n, int m, double *lambda, double X[N][M])
{
  *lambda = 0.25;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      X[i][j] = (double)((i * 11 + j * 5) % 21 - 10) / 10.0;
}

void kernel_soft_threshold(int n, int m, double lambda, double X[N][M],
                           double Y[N][M], double E[N][M])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      double v = X[i][j];
      Y[i][j] = v > 0.0 ? fmax(v - lambda, 0.0) : -fmax(-v - lambda, 0.0);
      E[i][j] = fabs(v - Y[i][j]);
    }
}

int main(void)
{
  static double X[N][M];
  static double Y[N][M];
  static double E[N][M];
  double lambda;

  init_array(N, M, &lambda, X);
  kernel_soft_threshold(N, M, lambda, X, Y, E);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      checksum += Y[i][j] + 2.0 * E[i][j];
  printf("soft_threshold checksum: %.6f\n", checksum);
  return 0;
}
