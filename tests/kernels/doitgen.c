/* doitgen.c -- multiresolution analysis kernel: every (r,q) slice of the
 * 3-D tensor A is multiplied by the np x np matrix C4.
 * Fixed-size array parameters, a 1-D scratch array. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NR
#define NR 10
#endif
#ifndef NQ
#define NQ 12
#endif
#ifndef NP
#define NP 16
#endif

static void init_array(int nr, int nq, int np, double A[NR][NQ][NP], double C4[NP][NP])
{
  for (int r = 0; r < nr; r++)
    for (int q = 0; q < nq; q++)
      for (int p = 0; p < np; p++)
        A[r][q][p] = (double)((r * q + p) % np) / np;
  for (int s = 0; s < np; s++)
    for (int p = 0; p < np; p++)
      C4[s][p] = (double)(s * p % np) / np;
}

void kernel_doitgen(int nr, int nq, int np, double A[NR][NQ][NP],
                    double C4[NP][NP], double sum[NP])
{
  for (int r = 0; r < nr; r++)
    for (int q = 0; q < nq; q++) {
      for (int p = 0; p < np; p++) {
        sum[p] = 0.0;
        for (int s = 0; s < np; s++)
          sum[p] += A[r][q][s] * C4[s][p];
      }
      for (int p = 0; p < np; p++)
        A[r][q][p] = sum[p];
    }
}

int main(void)
{
  static double A[NR][NQ][NP];
  static double C4[NP][NP];
  static double sum[NP];

  init_array(NR, NQ, NP, A, C4);
  kernel_doitgen(NR, NQ, NP, A, C4, sum);

  double checksum = 0.0;
  for (int r = 0; r < NR; r++)
    for (int q = 0; q < NQ; q++)
      for (int p = 0; p < NP; p++)
        checksum += A[r][q][p];
  printf("doitgen checksum: %.6f\n", checksum);
  return 0;
}
