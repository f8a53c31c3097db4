#include <math.h>
#include <stdlib.h>

void kernel_gemm_jvp(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ], double d_alpha, DATA_TYPE d_C[restrict NI][NJ], DATA_TYPE d_A[restrict NI][NK], DATA_TYPE d_B[restrict NK][NJ])
{
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++) {
      d_C[i][j] = beta * d_C[i][j];
      C[i][j] *= beta;
    }
    for (int k = 0; k < nk; k++) {
      for (int j = 0; j < nj; j++) {
        d_C[i][j] += B[k][j] * A[i][k] * d_alpha + B[k][j] * alpha * d_A[i][k] + alpha * A[i][k] * d_B[k][j];
        C[i][j] += alpha * A[i][k] * B[k][j];
      }
    }
  }
}
