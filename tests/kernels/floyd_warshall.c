/* floyd_warshall.c -- all-pairs shortest paths on an integer weight matrix.
 * Row k and column k are copied into scratch vectors before the k-th
 * relaxation (they do not change during it, since path[k][k] == 0), which
 * makes both the i and the j loop parallel.  Unreachable pairs hold INF.
 * Fixed-size int array parameters, a MIN macro (ternary). */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 60
#endif

#define INF (1 << 20)
#define MIN(a, b) ((a) < (b) ? (a) : (b))

static void init_array(int n, int path[N][N])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j)
        path[i][j] = 0;
      else if ((i + j) % 5 == 0)
        path[i][j] = INF;
      else
        path[i][j] = (i * 7 + j * 3) % 23 + 1;
    }
}

void kernel_floyd_warshall(int n, int path[N][N], int rowk[N], int colk[N])
{
  for (int k = 0; k < n; k++) {
    for (int j = 0; j < n; j++)
      rowk[j] = path[k][j];
    for (int i = 0; i < n; i++)
      colk[i] = path[i][k];
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++)
        path[i][j] = MIN(path[i][j], colk[i] + rowk[j]);
  }
}

int main(void)
{
  static int path[N][N];
  static int rowk[N];
  static int colk[N];

  init_array(N, path);
  kernel_floyd_warshall(N, path, rowk, colk);

  long checksum = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      checksum += path[i][j];
  printf("floyd_warshall checksum: %ld\n", checksum);
  return 0;
}
