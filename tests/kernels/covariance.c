/* covariance.c -- sample covariance matrix of m variables observed n times
 * (data is n x m), using the unbiased 1/(n-1) normalisation (1/1 when
 * n <= 1).  Each entry is accumulated in a local scalar.
 * C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 32
#endif
#ifndef N
#define N 40
#endif

static void init_array(int m, int n, double data[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] = ((double)i * j) / m;
}

void kernel_covariance(int m, int n, double data[n][m], double cov[m][m], double mean[m])
{
  double float_n = n > 0 ? (double)n : 1.0;
  double denom = n > 1 ? (double)(n - 1) : 1.0;

  for (int j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] -= mean[j];

  for (int i = 0; i < m; i++)
    for (int j = i; j < m; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++)
        s += data[k][i] * data[k][j];
      s /= denom;
      cov[i][j] = s;
      cov[j][i] = s;
    }
}

int main(void)
{
  double (*data)[M] = (double (*)[M])malloc(sizeof(double[N][M]));
  double (*cov)[M] = (double (*)[M])malloc(sizeof(double[M][M]));
  double *mean = malloc(sizeof(double[M]));

  init_array(M, N, data);
  kernel_covariance(M, N, data, cov, mean);

  double checksum = 0.0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      checksum += cov[i][j];
  printf("covariance checksum: %.6f\n", checksum);

  free(data);
  free(cov);
  free(mean);
  return 0;
}
