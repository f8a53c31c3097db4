/* lu.c -- in-place LU decomposition without pivoting (Doolittle, unit lower
 * L stored below the diagonal, U on and above it).  Right-looking form.
 * Fixed-size array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 64
#endif

/* Strictly diagonally dominant by rows, so no pivoting is needed. */
static void init_array(int n, double A[N][N])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = (double)((i + 2 * j) % n) / n;
      if (i == j)
        A[i][j] += n;
    }
}

void kernel_lu(int n, double A[N][N])
{
  for (int k = 0; k < n; k++) {
    for (int i = k + 1; i < n; i++)
      A[i][k] /= A[k][k];
    for (int i = k + 1; i < n; i++)
      for (int j = k + 1; j < n; j++)
        A[i][j] -= A[i][k] * A[k][j];
  }
}

int main(void)
{
  static double A[N][N];

  init_array(N, A);
  kernel_lu(N, A);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      checksum += A[i][j];
  printf("lu checksum: %.6f\n", checksum);
  return 0;
}
