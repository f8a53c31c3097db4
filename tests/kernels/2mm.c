/* 2mm.c -- two chained matrix products: D = alpha*A*B*C + beta*D.
 * C99 VLA array parameters. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 32
#endif
#ifndef NJ
#define NJ 36
#endif
#ifndef NK
#define NK 40
#endif
#ifndef NL
#define NL 44
#endif

static void init_array(int ni, int nj, int nk, int nl, double *alpha, double *beta,
                       double A[ni][nk], double B[nk][nj], double C[nj][nl], double D[ni][nl])
{
  *alpha = 1.25;
  *beta = 0.75;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (double)((i * k + 1) % ni) / ni;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (double)(k * (j + 1) % nj) / nj;
  for (int j = 0; j < nj; j++)
    for (int l = 0; l < nl; l++)
      C[j][l] = (double)((j * (l + 3) + 1) % nl) / nl;
  for (int i = 0; i < ni; i++)
    for (int l = 0; l < nl; l++)
      D[i][l] = (double)(i * (l + 2) % nl) / nl;
}

void kernel_2mm(int ni, int nj, int nk, int nl, double alpha, double beta,
                double tmp[ni][nj], double A[ni][nk], double B[nk][nj],
                double C[nj][nl], double D[ni][nl])
{
  /* tmp = alpha * A * B */
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      tmp[i][j] = 0.0;
      for (int k = 0; k < nk; k++)
        tmp[i][j] += alpha * A[i][k] * B[k][j];
    }
  /* D = beta * D + tmp * C */
  for (int i = 0; i < ni; i++)
    for (int l = 0; l < nl; l++) {
      D[i][l] *= beta;
      for (int j = 0; j < nj; j++)
        D[i][l] += tmp[i][j] * C[j][l];
    }
}

int main(void)
{
  double alpha, beta;
  double (*tmp)[NJ] = (double (*)[NJ])malloc(sizeof(double[NI][NJ]));
  double (*A)[NK] = (double (*)[NK])malloc(sizeof(double[NI][NK]));
  double (*B)[NJ] = (double (*)[NJ])malloc(sizeof(double[NK][NJ]));
  double (*C)[NL] = (double (*)[NL])malloc(sizeof(double[NJ][NL]));
  double (*D)[NL] = (double (*)[NL])malloc(sizeof(double[NI][NL]));

  init_array(NI, NJ, NK, NL, &alpha, &beta, A, B, C, D);
  kernel_2mm(NI, NJ, NK, NL, alpha, beta, tmp, A, B, C, D);

  double checksum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int l = 0; l < NL; l++)
      checksum += D[i][l];
  printf("2mm checksum: %.6f\n", checksum);

  free(tmp);
  free(A);
  free(B);
  free(C);
  free(D);
  return 0;
}
