/* local_arrays.c -- local arrays (issue 26): one of variable length before the loops, one
 * declared in the loop body (each iteration its own); the reverse sweep needs their values. */
#include <math.h>

void local_arrays(int n, double x[n], double y[n])
{
  double t[n];
  for (int i = 0; i < n; i++)
    t[i] = sin(x[i]);
  for (int i = 0; i < n; i++) {
    double u[2];
    u[0] = t[i] * x[i];
    u[1] = t[i] + u[0] * u[0];
    y[i] = u[0] * u[1];
  }
}
