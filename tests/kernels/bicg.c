/* bicg.c -- the two matrix-vector products of a BiCG step:
 *   s = A' * r   and   q = A * p,   A is n x m.
 * Fixed-size array parameters, inclusive (<=) loop bounds. */
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 76
#endif
#ifndef N
#define N 84
#endif

static void init_array(int m, int n, double A[N][M], double r[N], double p[M])
{
  for (int j = 0; j <= m - 1; j++)
    p[j] = (double)(j % m) / m;
  for (int i = 0; i <= n - 1; i++) {
    r[i] = (double)(i % n) / n;
    for (int j = 0; j <= m - 1; j++)
      A[i][j] = (double)(i * (j + 1) % n) / n;
  }
}

void kernel_bicg(int m, int n, double A[N][M], double s[M], double q[N],
                 double p[M], double r[N])
{
  for (int j = 0; j <= m - 1; j++)
    s[j] = 0.0;
  for (int i = 0; i <= n - 1; i++) {
    q[i] = 0.0;
    for (int j = 0; j <= m - 1; j++) {
      s[j] = s[j] + r[i] * A[i][j];
      q[i] = q[i] + A[i][j] * p[j];
    }
  }
}

int main(void)
{
  double (*A)[M] = malloc(sizeof(double[N][M]));
  double *s = malloc(sizeof(double[M]));
  double *q = malloc(sizeof(double[N]));
  double *p = malloc(sizeof(double[M]));
  double *r = malloc(sizeof(double[N]));

  init_array(M, N, A, r, p);
  kernel_bicg(M, N, A, s, q, p, r);

  double checksum = 0.0;
  for (int j = 0; j < M; j++)
    checksum += s[j];
  for (int i = 0; i < N; i++)
    checksum += q[i];
  printf("bicg checksum: %.6f\n", checksum);

  free(A);
  free(s);
  free(q);
  free(p);
  free(r);
  return 0;
}
