/* norm2.c -- Euclidean norm: a local accumulator, then sqrt. */
#include <math.h>

void norm2(int n, double x[n], double r[1])
{
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i];
  r[0] = sqrt(s);
}
