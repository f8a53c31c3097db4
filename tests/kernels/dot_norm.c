/* dot_norm.c -- vector reductions: the dot product x.y and the Euclidean
 * norm of the difference d = x - y.  The element-wise difference loop is
 * parallel; the reductions accumulate in local scalars.  Fixed-size arrays. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#ifndef N
#define N 128
#endif

static void init_array(int n, double x[N], double y[N])
{
  for (int i = 0; i < n; i++) {
    x[i] = (double)((i * 3 + 1) % n) / n;
    y[i] = (double)((i * 5 + 2) % n) / (2 * n);
  }
}

void kernel_dot_norm(int n, double x[N], double y[N], double d[N], double res[2])
{
  for (int i = 0; i < n; i++)
    d[i] = x[i] - y[i];

  double dot = 0.0;
  double ss = 0.0;
  for (int i = 0; i < n; i++) {
    dot += x[i] * y[i];
    ss += d[i] * d[i];
  }
  res[0] = dot;
  res[1] = sqrt(ss);
}

int main(void)
{
  static double x[N];
  static double y[N];
  static double d[N];
  double res[2];

  init_array(N, x, y);
  kernel_dot_norm(N, x, y, d, res);

  printf("dot_norm checksum: %.6f %.6f\n", res[0], res[1]);
  return 0;
}
