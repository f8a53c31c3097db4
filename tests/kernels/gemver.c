/* gemver.c -- rank-2 update followed by two matrix-vector products:
 *   A = A + u1*v1' + u2*v2';  x = x + beta*A'*y + z;  w = w + alpha*A*x.
 * C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 64
#endif

static void init_array(int n, double *alpha, double *beta, double A[n][n],
                       double u1[n], double v1[n], double u2[n], double v2[n],
                       double w[n], double x[n], double y[n], double z[n])
{
  double fn = (double)n;
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < n; i++) {
    u1[i] = i;
    u2[i] = ((i + 1) / fn) / 2.0;
    v1[i] = ((i + 1) / fn) / 4.0;
    v2[i] = ((i + 1) / fn) / 6.0;
    y[i] = ((i + 1) / fn) / 8.0;
    z[i] = ((i + 1) / fn) / 9.0;
    x[i] = 0.0;
    w[i] = 0.0;
    for (int j = 0; j < n; j++)
      A[i][j] = (double)(i * j % n) / n;
  }
}

void kernel_gemver(int n, double alpha, double beta, double A[n][n],
                   double u1[n], double v1[n], double u2[n], double v2[n],
                   double w[n], double x[n], double y[n], double z[n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = A[i][j] + u1[i] * v1[j] + u2[i] * v2[j];

  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      x[i] = x[i] + beta * A[j][i] * y[j];

  for (int i = 0; i < n; i++)
    x[i] = x[i] + z[i];

  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      w[i] = w[i] + alpha * A[i][j] * x[j];
}

int main(void)
{
  double alpha, beta;
  double (*A)[N] = (double (*)[N])malloc(sizeof(double[N][N]));
  double *u1 = malloc(sizeof(double[N]));
  double *v1 = malloc(sizeof(double[N]));
  double *u2 = malloc(sizeof(double[N]));
  double *v2 = malloc(sizeof(double[N]));
  double *w = malloc(sizeof(double[N]));
  double *x = malloc(sizeof(double[N]));
  double *y = malloc(sizeof(double[N]));
  double *z = malloc(sizeof(double[N]));

  init_array(N, &alpha, &beta, A, u1, v1, u2, v2, w, x, y, z);
  kernel_gemver(N, alpha, beta, A, u1, v1, u2, v2, w, x, y, z);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    checksum += w[i];
  printf("gemver checksum: %.6f\n", checksum);

  free(A);
  free(u1);
  free(v1);
  free(u2);
  free(v2);
  free(w);
  free(x);
  free(y);
  free(z);
  return 0;
}
