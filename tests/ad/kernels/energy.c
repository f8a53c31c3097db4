/* energy.c -- a function that returns a value (issue 26): its final `return` is an output
 * (`hx_return[1]` in the derivative functions, `--of return`), beside the array it writes. */
#include <math.h>

double energy(int n, double x[n], double g[n])
{
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    g[i] = tanh(x[i]);
    e += g[i] * x[i];
  }
  return 0.5 * e;
}
