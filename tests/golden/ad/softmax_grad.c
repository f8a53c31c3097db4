#include <math.h>
#include <stdlib.h>

static size_t hx_tape_extent(long n)
{
  return n > 0 ? (size_t)n : 1;
}

void kernel_softmax_grad_core(int n, int m, double X[n][m], double Y[n][m], double d_X[restrict n][m], double d_Y[restrict n][m], double tape_S1_mx[n][m], double tape_S3_mx[n][m], double tape_S5_s[n][m], double tape_S5_Y[n][m])
{
  /* forward sweep: the primal, keeping overwritten values */
  for (int i = 0; i < n; i++) {
    double mx = -1.7976931348623157e+308;
    for (int j = 0; j < m; j++) {
      tape_S1_mx[i][j] = mx;
      mx = fmax(mx, X[i][j]);
    }
    double s = 0.0;
    for (int j = 0; j < m; j++) {
      tape_S3_mx[i][j] = mx;
      Y[i][j] = exp(X[i][j] - mx);
      s += Y[i][j];
    }
    for (int j = 0; j < m; j++) {
      tape_S5_s[i][j] = s;
      tape_S5_Y[i][j] = Y[i][j];
      Y[i][j] = Y[i][j] / s;
    }
  }
  /* reverse sweep: adjoints in reverse order */
  for (int i = 0; i < n; i++) {
    double d_mx = 0.0;
    double d_s = 0.0;
    for (int j = 0; j < m; j++) {
      d_s -= d_Y[i][j] * (tape_S5_Y[i][j] / (tape_S5_s[i][j] * tape_S5_s[i][j]));
      d_Y[i][j] *= 1.0 / tape_S5_s[i][j];
    }
    for (int j = m - 1; j >= 0; j--) {
      d_Y[i][j] += d_s;
      d_X[i][j] += d_Y[i][j] * exp(X[i][j] - tape_S3_mx[i][j]);
      d_mx -= d_Y[i][j] * exp(X[i][j] - tape_S3_mx[i][j]);
      d_Y[i][j] = 0.0;
    }
    d_s = 0.0;
    for (int j = m - 1; j >= 0; j--) {
      d_X[i][j] += d_mx * (tape_S1_mx[i][j] >= X[i][j] ? 0.0 : 1.0);
      d_mx *= tape_S1_mx[i][j] >= X[i][j] ? 1.0 : 0.0;
    }
    d_mx = 0.0;
  }
}

void kernel_softmax_grad(int n, int m, double X[n][m], double Y[n][m], double d_X[restrict n][m], double d_Y[restrict n][m])
{
  void *tape_S1_mx = malloc(sizeof(double) * hx_tape_extent(n) * hx_tape_extent(m));
  void *tape_S3_mx = malloc(sizeof(double) * hx_tape_extent(n) * hx_tape_extent(m));
  void *tape_S5_s = malloc(sizeof(double) * hx_tape_extent(n) * hx_tape_extent(m));
  void *tape_S5_Y = malloc(sizeof(double) * hx_tape_extent(n) * hx_tape_extent(m));
  kernel_softmax_grad_core(n, m, X, Y, d_X, d_Y, tape_S1_mx, tape_S3_mx, tape_S5_s, tape_S5_Y);
  free(tape_S1_mx);
  free(tape_S3_mx);
  free(tape_S5_s);
  free(tape_S5_Y);
}
