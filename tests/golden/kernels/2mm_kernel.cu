#include "2mm_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void kernel0(double *__restrict__ A, double *__restrict__ B, double *__restrict__ C, double *__restrict__ D, double *__restrict__ tmp, int ni, int nj, int nk, int nl, double alpha, double beta, int o0)
{
  int b0 = blockIdx.x + o0;
  int t0 = threadIdx.x;
  __shared__ double shared_tmp[32][32];
  if (nj + nl >= 1 && b0 >= 0 && ni >= 32 * b0 + 1) {
    if (nj >= 1 && nk + nl >= 1) {
      {
        int T0 = (32 * b0);
        int T1 = (0);
        if (nj >= T1 + t0 + 1) {
          for (int c0 = T0; c0 <= hx_min(T0 + 31, ni - 1); c0++) {
            shared_tmp[(c0) - ((T0))][(T1 + t0) - ((T1))] = tmp[((c0)) * (nj) + (T1 + t0)];
          }
        }
      }
    }
    __syncthreads();
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (T1 == 0 && nl >= 1 && ni >= T0 + t0 + 1) {
        if (nj >= 1) {
          shared_tmp[(T0 + t0) - ((T0))][(0) - ((0))] = 0.0;
          for (int c3 = 0; c3 < nk; c3++) {
            shared_tmp[(T0 + t0) - ((T0))][(0) - ((0))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (0)]);
          }
        }
        for (int c3 = 0; c3 < nl; c3++) {
          D[((T0 + t0)) * (nl) + (c3)] *= beta;
          if (nj >= 1) {
            D[((T0 + t0)) * (nl) + (c3)] += (shared_tmp[(T0 + t0) - ((T0))][(0) - ((0))] * C[((0)) * (nl) + (c3)]);
          }
        }
        for (int c1 = 1; c1 <= hx_min(31, nj - 1); c1++) {
          shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] = 0.0;
          for (int c3 = 0; c3 < nk; c3++) {
            shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (c1)]);
          }
          for (int c3 = 0; c3 < nl; c3++) {
            D[((T0 + t0)) * (nl) + (c3)] += (shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] * C[((c1)) * (nl) + (c3)]);
          }
        }
      } else {
        if (T1 >= 32 && ni >= T0 + t0 + 1 && T1 % 32 == 0) {
          for (int c1 = T1; c1 <= hx_min(T1 + 31, nj - 1); c1++) {
            shared_tmp[(T0 + t0) - ((T0))][(c1) - ((T1))] = 0.0;
            for (int c3 = 0; c3 < nk; c3++) {
              shared_tmp[(T0 + t0) - ((T0))][(c1) - ((T1))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (c1)]);
            }
            for (int c3 = 0; c3 < nl; c3++) {
              D[((T0 + t0)) * (nl) + (c3)] += (shared_tmp[(T0 + t0) - ((T0))][(c1) - ((T1))] * C[((c1)) * (nl) + (c3)]);
            }
          }
        } else {
          if (T1 == 0 && nl == 0 && ni >= T0 + t0 + 1) {
            for (int c1 = 0; c1 <= hx_min(31, nj - 1); c1++) {
              shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] = 0.0;
              for (int c3 = 0; c3 < nk; c3++) {
                shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (c1)]);
              }
            }
          }
        }
      }
    }
    __syncthreads();
    if (nj >= 1) {
      {
        int T0 = (32 * b0);
        int T1 = (0);
        if (nj >= T1 + t0 + 1) {
          for (int c0 = T0; c0 <= hx_min(T0 + 31, ni - 1); c0++) {
            tmp[((c0)) * (nj) + (T1 + t0)] = shared_tmp[(c0) - ((T0))][(T1 + t0) - ((T1))];
          }
        }
      }
    }
    __syncthreads();
    for (int c2 = 32; c2 < nj; c2 += 32) {
      if (nk + nl >= 1) {
        {
          int T0 = (32 * b0);
          int T1 = (c2);
          if (nj >= T1 + t0 + 1) {
            for (int c0 = T0; c0 <= hx_min(T0 + 31, ni - 1); c0++) {
              shared_tmp[(c0) - ((T0))][(T1 + t0) - ((T1))] = tmp[((c0)) * (nj) + (T1 + t0)];
            }
          }
        }
      }
      __syncthreads();
      {
        int T0 = (32 * b0);
        int T1 = (c2);
        if (T1 == 0 && nl >= 1 && ni >= T0 + t0 + 1) {
          if (nj >= 1) {
            shared_tmp[(T0 + t0) - ((T0))][(0) - ((0))] = 0.0;
            for (int c3 = 0; c3 < nk; c3++) {
              shared_tmp[(T0 + t0) - ((T0))][(0) - ((0))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (0)]);
            }
          }
          for (int c3 = 0; c3 < nl; c3++) {
            D[((T0 + t0)) * (nl) + (c3)] *= beta;
            if (nj >= 1) {
              D[((T0 + t0)) * (nl) + (c3)] += (shared_tmp[(T0 + t0) - ((T0))][(0) - ((0))] * C[((0)) * (nl) + (c3)]);
            }
          }
          for (int c1 = 1; c1 <= hx_min(31, nj - 1); c1++) {
            shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] = 0.0;
            for (int c3 = 0; c3 < nk; c3++) {
              shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (c1)]);
            }
            for (int c3 = 0; c3 < nl; c3++) {
              D[((T0 + t0)) * (nl) + (c3)] += (shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] * C[((c1)) * (nl) + (c3)]);
            }
          }
        } else {
          if (T1 >= 32 && ni >= T0 + t0 + 1 && T1 % 32 == 0) {
            for (int c1 = T1; c1 <= hx_min(T1 + 31, nj - 1); c1++) {
              shared_tmp[(T0 + t0) - ((T0))][(c1) - ((T1))] = 0.0;
              for (int c3 = 0; c3 < nk; c3++) {
                shared_tmp[(T0 + t0) - ((T0))][(c1) - ((T1))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (c1)]);
              }
              for (int c3 = 0; c3 < nl; c3++) {
                D[((T0 + t0)) * (nl) + (c3)] += (shared_tmp[(T0 + t0) - ((T0))][(c1) - ((T1))] * C[((c1)) * (nl) + (c3)]);
              }
            }
          } else {
            if (T1 == 0 && nl == 0 && ni >= T0 + t0 + 1) {
              for (int c1 = 0; c1 <= hx_min(31, nj - 1); c1++) {
                shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] = 0.0;
                for (int c3 = 0; c3 < nk; c3++) {
                  shared_tmp[(T0 + t0) - ((T0))][(c1) - ((0))] += ((alpha * A[((T0 + t0)) * (nk) + (c3)]) * B[((c3)) * (nj) + (c1)]);
                }
              }
            }
          }
        }
      }
      __syncthreads();
      {
        int T0 = (32 * b0);
        int T1 = (c2);
        if (nj >= T1 + t0 + 1) {
          for (int c0 = T0; c0 <= hx_min(T0 + 31, ni - 1); c0++) {
            tmp[((c0)) * (nj) + (T1 + t0)] = shared_tmp[(c0) - ((T0))][(T1 + t0) - ((T1))];
          }
        }
      }
      __syncthreads();
    }
  }
}
