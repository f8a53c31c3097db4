/* hexplore's bundled example: a matrix multiply, a stencil, and a loop nest that cannot be
   modeled. Try: hexplore analyze examples/demo.c */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 256
#endif

/* C = alpha * A * B: i and j are parallel, k is a reduction. */
void matmul(int n, double alpha, double C[n][n], double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = 0.0;
      for (int k = 0; k < n; k++)
        C[i][j] += alpha * A[i][k] * B[k][j];
    }
}

/* A 2-D Jacobi stencil: the time loop t carries a dependence, i and j are parallel. */
void jacobi_2d(int tsteps, int n, double A[n][n], double B[n][n]) {
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}

/* A gather through an index array: which element is written depends on data. */
void scatter_add(int n, const int *idx, const double *x, double *y) {
  for (int i = 0; i < n; i++)
    y[idx[i]] += sqrt(fabs(x[i]));
}

int main(void) {
  double (*A)[N] = malloc(sizeof(double[N][N]));
  double (*B)[N] = malloc(sizeof(double[N][N]));
  double (*C)[N] = malloc(sizeof(double[N][N]));
  int *idx = malloc(N * sizeof(int));
  for (int i = 0; i < N; i++) {
    idx[i] = (i * 7) % N;
    for (int j = 0; j < N; j++) {
      A[i][j] = (double)(i + j) / N;
      B[i][j] = (double)(i - j) / N;
    }
  }
  matmul(N, 1.5, C, A, B);
  jacobi_2d(10, N, A, B);
  scatter_add(N, idx, A[0], C[0]);
  printf("%f %f\n", C[1][2], A[3][4]);
  free(A);
  free(B);
  free(C);
  free(idx);
  return 0;
}
