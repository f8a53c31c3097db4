/* heat_3d.c -- explicit 3-D heat equation, 7-point stencil, ping-ponging
 * between A and B.  The time loop starts at 1.  Fixed-size array
 * parameters, DATA_TYPE macro. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 20
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif

#define DATA_TYPE double

static void init_array(int n, DATA_TYPE A[N][N][N], DATA_TYPE B[N][N][N])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++) {
        A[i][j][k] = (DATA_TYPE)(i + j + (n - k)) * 10 / n;
        B[i][j][k] = A[i][j][k];
      }
}

void kernel_heat_3d(int tsteps, int n, DATA_TYPE A[N][N][N], DATA_TYPE B[N][N][N])
{
  for (int t = 1; t <= tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                     + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                     + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                     + A[i][j][k];
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        for (int k = 1; k < n - 1; k++)
          A[i][j][k] = 0.125 * (B[i + 1][j][k] - 2.0 * B[i][j][k] + B[i - 1][j][k])
                     + 0.125 * (B[i][j + 1][k] - 2.0 * B[i][j][k] + B[i][j - 1][k])
                     + 0.125 * (B[i][j][k + 1] - 2.0 * B[i][j][k] + B[i][j][k - 1])
                     + B[i][j][k];
  }
}

int main(void)
{
  static DATA_TYPE A[N][N][N];
  static DATA_TYPE B[N][N][N];

  init_array(N, A, B);
  kernel_heat_3d(TSTEPS, N, A, B);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++)
        checksum += A[i][j][k];
  printf("heat_3d checksum: %.6f\n", checksum);
  return 0;
}
