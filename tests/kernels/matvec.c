/* matvec.c -- affine matrix-vector product y = A*x + b, with the dot
 * product of each row accumulated in a local scalar.  C99 VLA parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 96
#endif
#ifndef M
#define M 80
#endif

static void init_array(int n, int m, double A[n][m], double x[m], double b[n])
{
  for (int j = 0; j < m; j++)
    x[j] = (double)((j * 7 + 3) % m) / m;
  for (int i = 0; i < n; i++) {
    b[i] = (double)(i % 5) - 2.0;
    for (int j = 0; j < m; j++)
      A[i][j] = (double)((i + 2 * j + 1) % n) / n - 0.5;
  }
}

void kernel_matvec(int n, int m, double A[n][m], double x[m], double b[n], double y[n])
{
  for (int i = 0; i < n; i++) {
    double sum = 0.0;
    for (int j = 0; j < m; j++)
      sum += A[i][j] * x[j];
    y[i] = sum + b[i];
  }
}

int main(void)
{
  double (*A)[M] = (double (*)[M])malloc(sizeof(double[N][M]));
  double *x = malloc(sizeof(double[M]));
  double *b = malloc(sizeof(double[N]));
  double *y = malloc(sizeof(double[N]));

  init_array(N, M, A, x, b);
  kernel_matvec(N, M, A, x, b, y);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    checksum += y[i];
  printf("matvec checksum: %.6f\n", checksum);

  free(A);
  free(x);
  free(b);
  free(y);
  return 0;
}
