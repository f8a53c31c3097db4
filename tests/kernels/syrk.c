/* syrk.c -- symmetric rank-k update: C = alpha*A*A' + beta*C, computing
 * only the lower triangle of C.  Fixed-size array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 48
#endif
#ifndef M
#define M 40
#endif

static void init_array(int n, int m, double *alpha, double *beta,
                       double C[N][N], double A[N][M])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++)
      A[i][k] = (double)((i * k + 1) % n) / n;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      C[i][j] = (double)((i * j + 2) % n) / n;
}

void kernel_syrk(int n, int m, double alpha, double beta,
                 double C[N][N], double A[N][M])
{
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += alpha * A[i][k] * A[j][k];
  }
}

int main(void)
{
  static double C[N][N];
  static double A[N][M];
  double alpha, beta;

  init_array(N, M, &alpha, &beta, C, A);
  kernel_syrk(N, M, alpha, beta, C, A);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++)
      checksum += C[i][j];
  printf("syrk checksum: %.6f\n", checksum);
  return 0;
}
