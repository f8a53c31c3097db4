/* integral_image.c -- integer summed-area table: every input pixel is first
 * transformed with integer arithmetic (multiply, modulo, division), then
 * prefix sums run along rows (rows in parallel) and along columns (columns
 * in parallel).  C99 VLA int array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 64
#endif
#ifndef M
#define M 48
#endif

static void init_array(int n, int m, int A[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      A[i][j] = (i * 31 + j * 17 + 5) % 256;
}

void kernel_integral_image(int n, int m, int A[n][m], int S[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      S[i][j] = (3 * A[i][j] + A[i][j] % 5) / 2;
  for (int i = 0; i < n; i++)
    for (int j = 1; j < m; j++)
      S[i][j] += S[i][j - 1];
  for (int i = 1; i < n; i++)
    for (int j = 0; j < m; j++)
      S[i][j] += S[i - 1][j];
}

int main(void)
{
  int (*A)[M] = (int (*)[M])malloc(sizeof(int[N][M]));
  int (*S)[M] = (int (*)[M])malloc(sizeof(int[N][M]));

  init_array(N, M, A);
  kernel_integral_image(N, M, A, S);

  long checksum = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      checksum += S[i][j] % 1000;
  printf("integral_image checksum: %ld (total %d)\n", checksum,
         N > 0 && M > 0 ? S[N - 1][M - 1] : 0);

  free(A);
  free(S);
  return 0;
}
