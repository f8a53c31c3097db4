/* jacobi_2d.c -- 5-point Jacobi relaxation in 2-D with two arrays; the two
 * spatial loops are parallel within each half time step.
 * C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 64
#endif
#ifndef TSTEPS
#define TSTEPS 16
#endif

static void init_array(int n, double A[n][n], double B[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((double)i * (j + 2) + 2) / n;
      B[i][j] = ((double)i * (j + 3) + 3) / n;
    }
}

void kernel_jacobi_2d(int tsteps, int n, double A[n][n], double B[n][n])
{
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}

int main(void)
{
  double (*A)[N] = (double (*)[N])malloc(sizeof(double[N][N]));
  double (*B)[N] = (double (*)[N])malloc(sizeof(double[N][N]));

  init_array(N, A, B);
  kernel_jacobi_2d(TSTEPS, N, A, B);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      checksum += A[i][j];
  printf("jacobi_2d checksum: %.6f\n", checksum);

  free(A);
  free(B);
  return 0;
}
