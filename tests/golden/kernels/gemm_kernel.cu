#include "gemm_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void __launch_bounds__(512) kernel0(double *__restrict__ A, double *__restrict__ B, double *__restrict__ C, int ni, int nj, int nk, double alpha, double beta, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  __shared__ double shared_A[32][32];
  __shared__ double shared_B[32][32];
  double private_C[2][1];
  if (b0 >= 0 && ni >= 32 * b0 + 1 && b1 >= 0 && nj >= 32 * b1 + 1) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      int T2 = (0);
      if (ni >= T0 + t0 + 1 && nj >= T1 + t1 + 1) {
        private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] = C[((T0 + t0)) * (50) + (T1 + t1)];
        if (ni >= T0 + t0 + 17) {
          private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] = C[((T0 + t0 + 16)) * (50) + (T1 + t1)];
        }
      }
    }
    if (nk >= 1) {
      {
        int T0 = (32 * b0);
        int T1 = (32 * b1);
        int T2 = (0);
        if (nk >= T2 + t1 + 1) {
          for (int c0 = T0 + t0; c0 <= hx_min(T0 + 31, ni - 1); c0 += 16) {
            shared_A[(c0) - ((T0))][(T2 + t1) - ((T2))] = A[((c0)) * (30) + (T2 + t1)];
          }
        }
      }
      {
        int T0 = (32 * b0);
        int T1 = (32 * b1);
        int T2 = (0);
        if (nj >= T1 + t1 + 1) {
          for (int c0 = T2 + t0; c0 <= hx_min(T2 + 31, nk - 1); c0 += 16) {
            shared_B[(c0) - ((T2))][(T1 + t1) - ((T1))] = B[((c0)) * (50) + (T1 + t1)];
          }
        }
      }
    }
    __syncthreads();
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      int T2 = (0);
      if (ni >= T0 + t0 + 1 && nj >= T1 + t1 + 1) {
        for (int c0 = T2; c0 <= hx_min(T2 + 31, nk - 1); c0++) {
          if (T2 % 32 == 0) {
            if (T2 == 0 && c0 == 0) {
              private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
            }
            private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] += ((alpha * shared_A[(T0 + t0) - ((T0))][(c0) - ((T2))]) * shared_B[(c0) - ((T2))][(T1 + t1) - ((T1))]);
            if (ni >= T0 + t0 + 17) {
              if (T2 == 0 && c0 == 0) {
                private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
              }
              private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] += ((alpha * shared_A[(T0 + t0 + 16) - ((T0))][(c0) - ((T2))]) * shared_B[(c0) - ((T2))][(T1 + t1) - ((T1))]);
            }
          }
        }
        if (T2 == 0 && nk <= 0) {
          private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
          if (ni >= T0 + t0 + 17) {
            private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
          }
        }
      }
    }
    __syncthreads();
    for (int c3 = 32; c3 < nk; c3 += 32) {
      {
        int T0 = (32 * b0);
        int T1 = (32 * b1);
        int T2 = (c3);
        if (nk >= T2 + t1 + 1) {
          for (int c0 = T0 + t0; c0 <= hx_min(T0 + 31, ni - 1); c0 += 16) {
            shared_A[(c0) - ((T0))][(T2 + t1) - ((T2))] = A[((c0)) * (30) + (T2 + t1)];
          }
        }
      }
      {
        int T0 = (32 * b0);
        int T1 = (32 * b1);
        int T2 = (c3);
        if (nj >= T1 + t1 + 1) {
          for (int c0 = T2 + t0; c0 <= hx_min(T2 + 31, nk - 1); c0 += 16) {
            shared_B[(c0) - ((T2))][(T1 + t1) - ((T1))] = B[((c0)) * (50) + (T1 + t1)];
          }
        }
      }
      __syncthreads();
      {
        int T0 = (32 * b0);
        int T1 = (32 * b1);
        int T2 = (c3);
        if (ni >= T0 + t0 + 1 && nj >= T1 + t1 + 1) {
          for (int c0 = T2; c0 <= hx_min(T2 + 31, nk - 1); c0++) {
            if (T2 % 32 == 0) {
              if (T2 == 0 && c0 == 0) {
                private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
              }
              private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] += ((alpha * shared_A[(T0 + t0) - ((T0))][(c0) - ((T2))]) * shared_B[(c0) - ((T2))][(T1 + t1) - ((T1))]);
              if (ni >= T0 + t0 + 17) {
                if (T2 == 0 && c0 == 0) {
                  private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
                }
                private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] += ((alpha * shared_A[(T0 + t0 + 16) - ((T0))][(c0) - ((T2))]) * shared_B[(c0) - ((T2))][(T1 + t1) - ((T1))]);
              }
            }
          }
          if (T2 == 0 && nk <= 0) {
            private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
            if (ni >= T0 + t0 + 17) {
              private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32] *= beta;
            }
          }
        }
      }
      __syncthreads();
    }
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      int T2 = (0);
      if (ni >= T0 + t0 + 1 && nj >= T1 + t1 + 1) {
        C[((T0 + t0)) * (50) + (T1 + t1)] = private_C[(((T0 + t0)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32];
        if (ni >= T0 + t0 + 17) {
          C[((T0 + t0 + 16)) * (50) + (T1 + t1)] = private_C[(((T0 + t0 + 16)) - ((T0)) - t0) / 16][(((T1 + t1)) - ((T1)) - t1) / 32];
        }
      }
    }
  }
}
