/* gemm.c -- general matrix multiply: C = alpha*A*B + beta*C.
 * Fixed-size (macro) array parameters, DATA_TYPE macro. */
#include <stdio.h>
#include <stdlib.h>

#ifndef NI
#define NI 40
#endif
#ifndef NJ
#define NJ 50
#endif
#ifndef NK
#define NK 30
#endif

#define DATA_TYPE double

static void init_array(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                       DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
  *alpha = 1.5;
  *beta = 1.2;
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++)
      C[i][j] = (DATA_TYPE)((i * j + 1) % ni) / ni;
  for (int i = 0; i < ni; i++)
    for (int k = 0; k < nk; k++)
      A[i][k] = (DATA_TYPE)(i * (k + 1) % nk) / nk;
  for (int k = 0; k < nk; k++)
    for (int j = 0; j < nj; j++)
      B[k][j] = (DATA_TYPE)(k * (j + 2) % nj) / nj;
}

void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                 DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (int k = 0; k < nk; k++)
      for (int j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
  }
}

int main(void)
{
  static DATA_TYPE C[NI][NJ];
  static DATA_TYPE A[NI][NK];
  static DATA_TYPE B[NK][NJ];
  DATA_TYPE alpha, beta;

  init_array(NI, NJ, NK, &alpha, &beta, C, A, B);
  kernel_gemm(NI, NJ, NK, alpha, beta, C, A, B);

  double checksum = 0.0;
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      checksum += C[i][j];
  printf("gemm checksum: %.6f\n", checksum);
  return 0;
}
