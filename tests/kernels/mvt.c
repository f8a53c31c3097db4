/* mvt.c -- matrix-vector product and transposed product:
 *   x1 = x1 + A * y1;   x2 = x2 + A' * y2.
 * C99 VLA array parameters, inclusive (<=) loop bounds. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 80
#endif

static void init_array(int n, double x1[n], double x2[n], double y1[n],
                       double y2[n], double A[n][n])
{
  for (int i = 0; i <= n - 1; i++) {
    x1[i] = (double)(i % n) / n;
    x2[i] = (double)((i + 1) % n) / n;
    y1[i] = (double)((i + 3) % n) / n;
    y2[i] = (double)((i + 4) % n) / n;
    for (int j = 0; j <= n - 1; j++)
      A[i][j] = (double)(i * j % n) / n;
  }
}

void kernel_mvt(int n, double x1[n], double x2[n], double y1[n], double y2[n],
                double A[n][n])
{
  for (int i = 0; i <= n - 1; i++)
    for (int j = 0; j <= n - 1; j++)
      x1[i] = x1[i] + A[i][j] * y1[j];
  for (int i = 0; i <= n - 1; i++)
    for (int j = 0; j <= n - 1; j++)
      x2[i] = x2[i] + A[j][i] * y2[j];
}

int main(void)
{
  double *x1 = malloc(sizeof(double[N]));
  double *x2 = malloc(sizeof(double[N]));
  double *y1 = malloc(sizeof(double[N]));
  double *y2 = malloc(sizeof(double[N]));
  double (*A)[N] = (double (*)[N])malloc(sizeof(double[N][N]));

  init_array(N, x1, x2, y1, y2, A);
  kernel_mvt(N, x1, x2, y1, y2, A);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    checksum += x1[i] + x2[i];
  printf("mvt checksum: %.6f\n", checksum);

  free(x1);
  free(x2);
  free(y1);
  free(y2);
  free(A);
  return 0;
}
