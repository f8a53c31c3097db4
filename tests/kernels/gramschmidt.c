/* gramschmidt.c -- QR decomposition of the m x n matrix A by modified
 * Gram-Schmidt: A = Q*R, Q is m x n with orthonormal columns, R is n x n
 * upper triangular.  A is overwritten.  A column whose norm vanishes
 * (rank-deficient input, e.g. m < n) is divided by 1 instead of 0.
 * Fixed-size array parameters, sqrt, local scalars, a ternary. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#ifndef M
#define M 60
#endif
#ifndef N
#define N 48
#endif

#define EPS 1.0e-10

static void init_array(int m, int n, double A[M][N], double R[N][N], double Q[M][N])
{
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((double)((i * j) % m) / m) * 100.0 + 10.0;
      if (i == j)
        A[i][j] += 50.0;
      Q[i][j] = 0.0;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      R[i][j] = 0.0;
}

void kernel_gramschmidt(int m, int n, double A[M][N], double R[N][N], double Q[M][N])
{
  for (int k = 0; k < n; k++) {
    double nrm = 0.0;
    for (int i = 0; i < m; i++)
      nrm += A[i][k] * A[i][k];
    R[k][k] = sqrt(nrm);
    double rkk = R[k][k] > EPS ? R[k][k] : 1.0;
    for (int i = 0; i < m; i++)
      Q[i][k] = A[i][k] / rkk;
    for (int j = k + 1; j < n; j++) {
      R[k][j] = 0.0;
      for (int i = 0; i < m; i++)
        R[k][j] += Q[i][k] * A[i][j];
      for (int i = 0; i < m; i++)
        A[i][j] = A[i][j] - Q[i][k] * R[k][j];
    }
  }
}

int main(void)
{
  static double A[M][N];
  static double R[N][N];
  static double Q[M][N];

  init_array(M, N, A, R, Q);
  kernel_gramschmidt(M, N, A, R, Q);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      checksum += R[i][j];
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++)
      checksum += Q[i][j];
  printf("gramschmidt checksum: %.6f\n", checksum);
  return 0;
}
