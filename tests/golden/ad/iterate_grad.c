#include <math.h>
#include <stdlib.h>

static size_t hx_tape_extent(long n)
{
  return n > 0 ? (size_t)n : 1;
}

void iterate_grad_core(int tsteps, int n, double x[n], double c[n], double d_x[restrict n], double tape_S0_x[tsteps][n])
{
  /* forward sweep: the primal, keeping overwritten values */
  for (int t = 0; t < tsteps; t++) {
    for (int i = 0; i < n; i++) {
      tape_S0_x[t][i] = x[i];
      x[i] = 0.5 * x[i] * x[i] + 0.3 * sin(x[i]) * c[i];
    }
  }
  /* reverse sweep: adjoints in reverse order */
  for (int t = tsteps - 1; t >= 0; t--) {
    for (int i = 0; i < n; i++)
      d_x[i] *= tape_S0_x[t][i] * 0.5 + 0.5 * tape_S0_x[t][i] + c[i] * 0.3 * cos(tape_S0_x[t][i]);
  }
}

void iterate_grad(int tsteps, int n, double x[n], double c[n], double d_x[restrict n])
{
  void *tape_S0_x = malloc(sizeof(double) * hx_tape_extent(tsteps) * hx_tape_extent(n));
  iterate_grad_core(tsteps, n, x, c, d_x, tape_S0_x);
  free(tape_S0_x);
}
