/* conv2d.c -- 3x3 (9-point) 2-D convolution of an n x m image with a weight
 * mask; the border of the output keeps its initial value.  The weighted sum
 * is accumulated in a local scalar.  C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 96
#endif
#ifndef M
#define M 72
#endif

static void init_array(int n, int m, double A[n][m], double B[n][m], double W[3][3])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      A[i][j] = (double)((i * 13 + j * 7) % 17) / 17.0;
      B[i][j] = 0.0;
    }
  for (int di = 0; di < 3; di++)
    for (int dj = 0; dj < 3; dj++)
      W[di][dj] = (di == 1 && dj == 1) ? 0.5 : 0.0625;
}

void kernel_conv2d(int n, int m, double A[n][m], double B[n][m], double W[3][3])
{
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++) {
      double acc = 0.0;
      for (int di = 0; di < 3; di++)
        for (int dj = 0; dj < 3; dj++)
          acc += W[di][dj] * A[i + di - 1][j + dj - 1];
      B[i][j] = acc;
    }
}

int main(void)
{
  double (*A)[M] = (double (*)[M])malloc(sizeof(double[N][M]));
  double (*B)[M] = (double (*)[M])malloc(sizeof(double[N][M]));
  double W[3][3];

  init_array(N, M, A, B, W);
  kernel_conv2d(N, M, A, B, W);

  double checksum = 0.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      checksum += B[i][j];
  printf("conv2d checksum: %.6f\n", checksum);

  free(A);
  free(B);
  return 0;
}
