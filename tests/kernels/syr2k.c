/* syr2k.c -- symmetric rank-2k update: C = alpha*A*B' + alpha*B*A' + beta*C,
 * lower triangle only.  C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 48
#endif
#ifndef M
#define M 36
#endif

static void init_array(int n, int m, double *alpha, double *beta,
                       double C[n][n], double A[n][m], double B[n][m])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++)
    for (int k = 0; k < m; k++) {
      A[i][k] = (double)((i * k + 1) % n) / n;
      B[i][k] = (double)((i * k + 2) % m) / m;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      C[i][j] = (double)((i * j + 3) % n) / n;
}

void kernel_syr2k(int n, int m, double alpha, double beta,
                  double C[n][n], double A[n][m], double B[n][m])
{
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++)
      C[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k];
  }
}

int main(void)
{
  double alpha, beta;
  double (*C)[N] = (double (*)[N])malloc(sizeof(double[N][N]));
  double (*A)[M] = (double (*)[M])malloc(sizeof(double[N][M]));
  double (*B)[M] = (double (*)[M])malloc(sizeof(double[N][M]));

  init_array(N, M, &alpha, &beta, C, A, B);
  kernel_syr2k(N, M, alpha, beta, C, A, B);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++)
      checksum += C[i][j];
  printf("syr2k checksum: %.6f\n", checksum);

  free(C);
  free(A);
  free(B);
  return 0;
}
