/* cholesky.c -- in-place Cholesky factorisation A = L*L' of a symmetric
 * positive-definite matrix (right-looking variant: the column scaling and
 * the trailing update are parallel).  Only the lower triangle is read and
 * written.  C99 VLA array parameters, sqrt. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#ifndef N
#define N 64
#endif

/* Symmetric and strictly diagonally dominant with a positive diagonal,
 * hence positive definite (and so is every leading principal block). */
static void init_array(int n, double A[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = 1.0 / (i + j + 1);
      if (i == j)
        A[i][j] += n;
    }
}

void kernel_cholesky(int n, double A[n][n])
{
  for (int k = 0; k < n; k++) {
    A[k][k] = sqrt(A[k][k]);
    for (int i = k + 1; i < n; i++)
      A[i][k] = A[i][k] / A[k][k];
    for (int i = k + 1; i < n; i++)
      for (int j = k + 1; j <= i; j++)
        A[i][j] -= A[i][k] * A[j][k];
  }
}

int main(void)
{
  double (*A)[N] = (double (*)[N])malloc(sizeof(double[N][N]));

  init_array(N, A);
  kernel_cholesky(N, A);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j <= i; j++)
      checksum += A[i][j];
  printf("cholesky checksum: %.6f\n", checksum);

  free(A);
  return 0;
}
