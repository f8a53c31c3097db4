/* atax.c -- y = A' * (A * x).  The intermediate (A*x)[i] is kept in a local
 * scalar that feeds the second inner loop.  C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 76
#endif
#ifndef N
#define N 84
#endif

static void init_array(int m, int n, double A[m][n], double x[n])
{
  double fn = (double)n;
  for (int j = 0; j < n; j++)
    x[j] = 1.0 + j / fn;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = (double)((i + j) % n) / (5 * m);
}

void kernel_atax(int m, int n, double A[m][n], double x[n], double y[n])
{
  for (int j = 0; j < n; j++)
    y[j] = 0.0;
  for (int i = 0; i < m; i++) {
    double t = 0.0;
    for (int j = 0; j < n; j++)
      t += A[i][j] * x[j];
    for (int j = 0; j < n; j++)
      y[j] += A[i][j] * t;
  }
}

int main(void)
{
  double (*A)[N] = (double (*)[N])malloc(sizeof(double[M][N]));
  double *x = malloc(sizeof(double[N]));
  double *y = malloc(sizeof(double[N]));

  init_array(M, N, A, x);
  kernel_atax(M, N, A, x, y);

  double checksum = 0.0;
  for (int j = 0; j < N; j++)
    checksum += y[j];
  printf("atax checksum: %.6f\n", checksum);

  free(A);
  free(x);
  free(y);
  return 0;
}
