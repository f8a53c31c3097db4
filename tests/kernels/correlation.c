/* correlation.c -- Pearson correlation matrix of m variables observed n
 * times (data is n x m).  Standard deviations close to zero are replaced by
 * 1.0 so constant columns (or n == 1) never divide by zero.
 * Fixed-size array parameters, DATA_TYPE macro, sqrt, ternaries. */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>

#ifndef M
#define M 32
#endif
#ifndef N
#define N 40
#endif

#define DATA_TYPE double

static void init_array(int m, int n, DATA_TYPE data[N][M])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      data[i][j] = (DATA_TYPE)(i * j) / m + i;
}

void kernel_correlation(int m, int n, DATA_TYPE data[N][M], DATA_TYPE corr[M][M],
                        DATA_TYPE mean[M], DATA_TYPE stddev[M])
{
  DATA_TYPE eps = 0.1;
  DATA_TYPE float_n = n > 0 ? (DATA_TYPE)n : 1.0;

  for (int j = 0; j < m; j++) {
    mean[j] = 0.0;
    for (int i = 0; i < n; i++)
      mean[j] += data[i][j];
    mean[j] /= float_n;
  }

  for (int j = 0; j < m; j++) {
    stddev[j] = 0.0;
    for (int i = 0; i < n; i++)
      stddev[j] += (data[i][j] - mean[j]) * (data[i][j] - mean[j]);
    stddev[j] /= float_n;
    stddev[j] = sqrt(stddev[j]);
    stddev[j] = stddev[j] <= eps ? 1.0 : stddev[j];
  }

  /* Centre and reduce the columns. */
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      data[i][j] -= mean[j];
      data[i][j] /= sqrt(float_n) * stddev[j];
    }

  for (int i = 0; i < m; i++)
    corr[i][i] = 1.0;
  for (int i = 0; i < m; i++)
    for (int j = i + 1; j < m; j++) {
      corr[i][j] = 0.0;
      for (int k = 0; k < n; k++)
        corr[i][j] += data[k][i] * data[k][j];
      corr[j][i] = corr[i][j];
    }
}

int main(void)
{
  static DATA_TYPE data[N][M];
  static DATA_TYPE corr[M][M];
  static DATA_TYPE mean[M];
  static DATA_TYPE stddev[M];

  init_array(M, N, data);
  kernel_correlation(M, N, data, corr, mean, stddev);

  double checksum = 0.0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < M; j++)
      checksum += corr[i][j];
  printf("correlation checksum: %.6f\n", checksum);
  return 0;
}
