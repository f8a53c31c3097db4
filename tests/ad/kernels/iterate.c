/* iterate.c -- a nonlinear in-place map applied tsteps times: every step overwrites the
 * values the previous step's derivative needs, so reverse mode keeps them in a tape. */
#include <math.h>

void iterate(int tsteps, int n, double x[n], double c[n])
{
  for (int t = 0; t < tsteps; t++)
    for (int i = 0; i < n; i++)
      x[i] = 0.5 * x[i] * x[i] + 0.3 * sin(x[i]) * c[i];
}
