/* nussinov.c -- Nussinov RNA folding: maximum number of complementary base
 * pairs of the sub-sequence seq[i..j], stored in table[i][j] (upper
 * triangle).  Cells are filled by anti-diagonals d = j - i; all cells of one
 * diagonal are independent, so the i loop is parallel.
 * C99 VLA int array parameters, MAX / PAIR macros (ternaries), ifs. */
#include <stdio.h>
#include <stdlib.h>

#ifndef N
#define N 80
#endif

#define MAX(a, b) ((a) >= (b) ? (a) : (b))
/* Bases are encoded 0..3 (A, C, G, U); A-U and C-G are complementary. */
#define PAIR(b1, b2) (((b1) + (b2)) == 3 ? 1 : 0)

static void init_array(int n, int seq[n], int table[n][n])
{
  for (int i = 0; i < n; i++)
    seq[i] = (i + 1) % 4;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      table[i][j] = 0;
}

void kernel_nussinov(int n, int seq[n], int table[n][n])
{
  for (int d = 1; d < n; d++)
    for (int i = 0; i < n - d; i++) {
      /* j = i + d */
      table[i][i + d] = MAX(table[i][i + d], table[i][i + d - 1]);
      table[i][i + d] = MAX(table[i][i + d], table[i + 1][i + d]);
      if (d > 1)
        table[i][i + d] = MAX(table[i][i + d],
                              table[i + 1][i + d - 1] + PAIR(seq[i], seq[i + d]));
      else
        table[i][i + d] = MAX(table[i][i + d], table[i + 1][i + d - 1]);
      for (int k = i + 1; k < i + d; k++)
        table[i][i + d] = MAX(table[i][i + d], table[i][k] + table[k + 1][i + d]);
    }
}

int main(void)
{
  int *seq = malloc(sizeof(int[N]));
  int (*table)[N] = (int (*)[N])malloc(sizeof(int[N][N]));

  init_array(N, seq, table);
  kernel_nussinov(N, seq, table);

  long checksum = 0;
  for (int i = 0; i < N; i++)
    for (int j = i; j < N; j++)
      checksum += table[i][j];
  printf("nussinov checksum: %ld (best %d)\n", checksum, N > 0 ? table[0][N - 1] : 0);

  free(seq);
  free(table);
  return 0;
}
