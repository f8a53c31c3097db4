/* mathmix.c -- pow, sin, cos, exp, division and unary minus. */
#include <math.h>

void mathmix(int n, double x[n], double w[n], double y[n])
{
  for (int i = 0; i < n; i++)
    y[i] = pow(x[i], 2.5) + sin(x[i]) * cos(w[i]) - exp(-x[i]) / w[i];
}
