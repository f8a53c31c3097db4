#include <math.h>
#include <stdlib.h>

void kernel_gemm_grad(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta, DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ], DATA_TYPE d_C[restrict NI][NJ], DATA_TYPE d_A[restrict NI][NK], DATA_TYPE d_B[restrict NK][NJ])
{
  /* forward sweep: the primal */
  for (int i = 0; i < ni; i++) {
    for (int j = 0; j < nj; j++)
      C[i][j] *= beta;
    for (int k = 0; k < nk; k++) {
      for (int j = 0; j < nj; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
    }
  }
  /* reverse sweep: adjoints in reverse order */
  for (int i = 0; i < ni; i++) {
    for (int k = nk - 1; k >= 0; k--) {
      for (int j = 0; j < nj; j++) {
        d_A[i][k] += d_C[i][j] * B[k][j] * alpha;
        d_B[k][j] += d_C[i][j] * alpha * A[i][k];
      }
    }
    for (int j = 0; j < nj; j++)
      d_C[i][j] *= beta;
  }
}
