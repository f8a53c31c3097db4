/* jacobi_1d.c -- 3-point Jacobi relaxation in 1-D, ping-ponging between two
 * arrays; the spatial loops are parallel within a time step.
 * Fixed-size array parameters, inclusive (<=) loop bounds. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 120
#endif
#ifndef TSTEPS
#define TSTEPS 20
#endif

static void init_array(int n, double A[N], double B[N])
{
  for (int i = 0; i < n; i++) {
    A[i] = ((double)i + 2.0) / n;
    B[i] = ((double)i + 3.0) / n;
  }
}

void kernel_jacobi_1d(int tsteps, int n, double A[N], double B[N])
{
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i <= n - 2; i++)
      B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i <= n - 2; i++)
      A[i] = 0.33333 * (B[i - 1] + B[i] + B[i + 1]);
  }
}

int main(void)
{
  static double A[N];
  static double B[N];

  init_array(N, A, B);
  kernel_jacobi_1d(TSTEPS, N, A, B);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    checksum += A[i];
  printf("jacobi_1d checksum: %.6f\n", checksum);
  return 0;
}
