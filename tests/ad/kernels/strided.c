/* strided.c -- loops the reverse sweep must run backwards (issue 26): a step-2 recurrence, and a
 * band `j < n && j < i + 3` (its last iteration is the smaller bound). */
#include <math.h>

void strided(int n, double x[n], double A[n][n], double y[n])
{
  for (int i = 2; i < n; i += 2)
    x[i] = sin(x[i - 2]) + x[i] * x[i - 1];
  for (int i = 0; i < n; i++)
    for (int j = i; j < n && j < i + 3; j++)
      y[i] = y[i] * 0.5 + A[i][j] * x[j];
}
