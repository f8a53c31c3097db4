/* sgemv.c -- single-precision matrix-vector product y = alpha*A*x + beta*y
 * with float arrays, float literals and a float local accumulator.
 * Fixed-size array parameters, DATA_TYPE macro set to float. */
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 72
#endif
#ifndef N
#define N 64
#endif

#define DATA_TYPE float

static void init_array(int m, int n, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE A[M][N], DATA_TYPE x[N], DATA_TYPE y[M])
{
  *alpha = 0.5f;
  *beta = 2.0f;
  for (int j = 0; j < n; j++)
    x[j] = (DATA_TYPE)(j % 9) * 0.125f;
  for (int i = 0; i < m; i++) {
    y[i] = (DATA_TYPE)(i % 4) - 1.5f;
    for (int j = 0; j < n; j++)
      A[i][j] = (DATA_TYPE)((i * j + 1) % n) / (DATA_TYPE)n;
  }
}

void kernel_sgemv(int m, int n, DATA_TYPE alpha, DATA_TYPE beta,
                  DATA_TYPE A[M][N], DATA_TYPE x[N], DATA_TYPE y[M])
{
  for (int i = 0; i < m; i++) {
    DATA_TYPE acc = 0.0f;
    for (int j = 0; j < n; j++)
      acc += A[i][j] * x[j];
    y[i] = alpha * acc + beta * y[i];
  }
}

int main(void)
{
  static DATA_TYPE A[M][N];
  static DATA_TYPE x[N];
  static DATA_TYPE y[M];
  DATA_TYPE alpha, beta;

  init_array(M, N, &alpha, &beta, A, x, y);
  kernel_sgemv(M, N, alpha, beta, A, x, y);

  double checksum = 0.0;
  for (int i = 0; i < M; i++)
    checksum += (double)y[i];
  printf("sgemv checksum: %.4f\n", checksum);
  return 0;
}
