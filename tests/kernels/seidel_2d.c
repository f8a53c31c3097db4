/* seidel_2d.c -- 9-point Gauss-Seidel sweeps, updated in place.  Every loop
 * of the original nest carries a dependence (no loop is parallel as
 * written); parallelism only appears after skewing into wavefronts.
 * Fixed-size array parameters, inclusive (<=) loop bounds. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 64
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif

static void init_array(int n, double A[N][N])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = ((double)i * (j + 2) + 2) / n;
}

void kernel_seidel_2d(int tsteps, int n, double A[N][N])
{
  for (int t = 0; t <= tsteps - 1; t++)
    for (int i = 1; i <= n - 2; i++)
      for (int j = 1; j <= n - 2; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
                   + A[i][j - 1] + A[i][j] + A[i][j + 1]
                   + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9.0;
}

int main(void)
{
  double (*A)[N] = malloc(sizeof(double[N][N]));

  init_array(N, A);
  kernel_seidel_2d(TSTEPS, N, A);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      checksum += A[i][j];
  printf("seidel_2d checksum: %.6f\n", checksum);

  free(A);
  return 0;
}
