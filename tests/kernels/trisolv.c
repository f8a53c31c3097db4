/* trisolv.c -- forward substitution L*x = b for a lower-triangular L,
 * column-oriented: once x[j] is known its contribution is subtracted from
 * all later rows in a parallel loop.  C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 100
#endif

static void init_array(int n, double L[n][n], double b[n])
{
  for (int i = 0; i < n; i++) {
    b[i] = (double)(i % 7) - 3.0;
    for (int j = 0; j <= i; j++)
      L[i][j] = (double)(i + n - j + 1) * 2.0 / n;
    for (int j = i + 1; j < n; j++)
      L[i][j] = 0.0;
  }
}

void kernel_trisolv(int n, double L[n][n], double x[n], double b[n])
{
  for (int i = 0; i < n; i++)
    x[i] = b[i];
  for (int j = 0; j < n; j++) {
    x[j] = x[j] / L[j][j];
    for (int i = j + 1; i < n; i++)
      x[i] -= L[i][j] * x[j];
  }
}

int main(void)
{
  double (*L)[N] = (double (*)[N])malloc(sizeof(double[N][N]));
  double *x = malloc(sizeof(double[N]));
  double *b = malloc(sizeof(double[N]));

  init_array(N, L, b);
  kernel_trisolv(N, L, x, b);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    checksum += x[i];
  printf("trisolv checksum: %.6f\n", checksum);

  free(L);
  free(x);
  free(b);
  return 0;
}
