/* piecewise.c -- fmax, fmin, fabs and a ternary (differentiable almost everywhere). */
#include <math.h>

void piecewise(int n, double x[n], double w[n], double y[n])
{
  for (int i = 0; i < n; i++) {
    y[i] = fmax(x[i] - 1.0, 0.0) + 0.5 * fabs(x[i] - w[i]);
    y[i] = x[i] > w[i] ? y[i] * x[i] : fmin(y[i], w[i]) - x[i];
  }
}
