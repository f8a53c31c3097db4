/* symm.c -- symmetric matrix multiply: C = alpha*A*B + beta*C, where the
 * m x m matrix A is symmetric and only its lower triangle is referenced.
 * C99 VLA array parameters; the row accumulation uses a local scalar. */
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 40
#endif
#ifndef N
#define N 50
#endif

static void init_array(int m, int n, double *alpha, double *beta,
                       double C[m][n], double A[m][m], double B[m][n])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = (double)((i + j) % 100) / m;
      B[i][j] = (double)((n + i - j) % 100) / m;
    }
  for (int i = 0; i < m; i++) {
    for (int j = 0; j <= i; j++)
      A[i][j] = (double)((i + j) % 100) / m;
    /* The upper triangle is never read by the kernel; fill it with a
       sentinel so that any accidental use shows up in the checksum. */
    for (int j = i + 1; j < m; j++)
      A[i][j] = -999.0;
  }
}

void kernel_symm(int m, int n, double alpha, double beta,
                 double C[m][n], double A[m][m], double B[m][n])
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double acc = 0.0;
      for (int k = 0; k < i; k++) {
        /* A[i][k] stands for both A(i,k) and A(k,i). */
        C[k][j] += alpha * B[i][j] * A[i][k];
        acc += B[k][j] * A[i][k];
      }
      C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * acc;
    }
}

int main(void)
{
  double alpha, beta;
  double (*C)[N] = (double (*)[N])malloc(sizeof(double[M][N]));
  double (*A)[M] = (double (*)[M])malloc(sizeof(double[M][M]));
  double (*B)[N] = (double (*)[N])malloc(sizeof(double[M][N]));

  init_array(M, N, &alpha, &beta, C, A, B);
  kernel_symm(M, N, alpha, beta, C, A, B);

  double checksum = 0.0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      checksum += C[i][j];
  printf("symm checksum: %.6f\n", checksum);

  free(C);
  free(A);
  free(B);
  return 0;
}
