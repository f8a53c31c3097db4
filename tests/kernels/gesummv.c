/* gesummv.c -- summed matrix-vector products: y = alpha*A*x + beta*B*x.
 * Fixed-size array parameters; the two row sums live in local scalars. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 90
#endif

static void init_array(int n, double *alpha, double *beta,
                       double A[N][N], double B[N][N], double x[N])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++) {
    x[i] = (double)(i % n) / n;
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i * j + 1) % n) / n;
      B[i][j] = (double)((i * j + 2) % n) / n;
    }
  }
}

void kernel_gesummv(int n, double alpha, double beta,
                    double A[N][N], double B[N][N], double x[N], double y[N])
{
  for (int i = 0; i < n; i++) {
    double ta = 0.0;
    double tb = 0.0;
    for (int j = 0; j < n; j++) {
      ta += A[i][j] * x[j];
      tb += B[i][j] * x[j];
    }
    y[i] = alpha * ta + beta * tb;
  }
}

int main(void)
{
  static double A[N][N];
  static double B[N][N];
  static double x[N];
  static double y[N];
  double alpha, beta;

  init_array(N, &alpha, &beta, A, B, x);
  kernel_gesummv(N, alpha, beta, A, B, x, y);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    checksum += y[i];
  printf("gesummv checksum: %.6f\n", checksum);
  return 0;
}
