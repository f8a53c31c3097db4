#include <math.h>
#include <stdlib.h>

static size_t hx_tape_extent(long n)
{
  return n > 0 ? (size_t)n : 1;
}

void kernel_trisolv_grad_core(int n, double L[n][n], double x[n], double b[n], double d_L[restrict n][n], double d_x[restrict n], double d_b[restrict n], double tape_S1_x[n])
{
  /* forward sweep: the primal, keeping overwritten values */
  for (int i = 0; i < n; i++)
    x[i] = b[i];
  for (int j = 0; j < n; j++) {
    tape_S1_x[j] = x[j];
    x[j] = x[j] / L[j][j];
    for (int i = j + 1; i < n; i++)
      x[i] -= L[i][j] * x[j];
  }
  /* reverse sweep: adjoints in reverse order */
  for (int j = n - 1; j >= 0; j--) {
    for (int i = j + 1; i < n; i++) {
      d_L[i][j] -= d_x[i] * x[j];
      d_x[j] -= d_x[i] * L[i][j];
    }
    d_L[j][j] -= d_x[j] * (tape_S1_x[j] / (L[j][j] * L[j][j]));
    d_x[j] *= 1.0 / L[j][j];
  }
  for (int i = 0; i < n; i++) {
    d_b[i] += d_x[i];
    d_x[i] = 0.0;
  }
}

void kernel_trisolv_grad(int n, double L[n][n], double x[n], double b[n], double d_L[restrict n][n], double d_x[restrict n], double d_b[restrict n])
{
  void *tape_S1_x = malloc(sizeof(double) * hx_tape_extent(n));
  kernel_trisolv_grad_core(n, L, x, b, d_L, d_x, d_b, tape_S1_x);
  free(tape_S1_x);
}
