/* tanh_layer.c -- one dense layer y = tanh(W x + b). */
#include <math.h>

void tanh_layer(int n, int m, double W[n][m], double x[m], double b[n], double y[n])
{
  for (int i = 0; i < n; i++) {
    double a = -b[i];
    for (int j = 0; j < m; j++)
      a += (W[i][j] - 1.0) * x[j];
    y[i] = tanh(a);
  }
}
