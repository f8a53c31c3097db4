/* trmm.c -- triangular matrix multiply: B = alpha * A' * B, where the m x m
 * matrix A is unit lower triangular (diagonal implied, upper part unused).
 * Fixed-size array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 48
#endif

static void init_array(int m, int n, double *alpha, double A[M][M], double B[M][N])
{
  *alpha = 1.5;
  for (int i = 0; i < m; i++) {
    for (int j = 0; j < i; j++)
      A[i][j] = (double)((i + j) % m) / m;
    A[i][i] = 1.0;
    for (int j = i + 1; j < m; j++)
      A[i][j] = 0.0;
    for (int j = 0; j < n; j++)
      B[i][j] = (double)((n + (i - j)) % n) / n;
  }
}

void kernel_trmm(int m, int n, double alpha, double A[M][M], double B[M][N])
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      for (int k = i + 1; k < m; k++)
        B[i][j] += A[k][i] * B[k][j];
      B[i][j] = alpha * B[i][j];
    }
}

int main(void)
{
  static double A[M][M];
  static double B[M][N];
  double alpha;

  init_array(M, N, &alpha, A, B);
  kernel_trmm(M, N, alpha, A, B);

  double checksum = 0.0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      checksum += B[i][j];
  printf("trmm checksum: %.6f\n", checksum);
  return 0;
}
