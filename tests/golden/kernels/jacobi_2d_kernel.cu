#include "jacobi_2d_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void __launch_bounds__(512) kernel0(double *__restrict__ A, double *__restrict__ B, int n, int tsteps, int h0, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  __shared__ double shared_A[34][34];
  if (h0 >= 0 && n >= 3 && tsteps >= h0 + 1 && b0 >= 0 && n >= 32 * b0 + 2 && b1 >= 0 && n >= 32 * b1 + 2) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (T0 == 0 && t0 == 0 && n >= T1 + t1 + 2 && T1 + t1 >= 1) {
        shared_A[(0) - ((0) == 0 ? 0 : (0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((0)) * (n) + (T1 + t1)];
      } else {
        if (T0 >= 32 && t0 == 15 && n >= T1 + t1 + 2 && T1 + t1 >= 1) {
          shared_A[(T0 - 1) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((T0 - 1)) * (n) + (T1 + t1)];
        }
      }
      for (int c0 = hx_max(T0 + t0, ((t0 + 15) % 16) + 1); c0 <= hx_min(T0 + 32, n - 1); c0 += 16) {
        if (n >= c0 + 2 && T0 + 31 >= c0) {
          for (int c1 = hx_max(t1, -((T1 - t1 + 62) % 32) + T1 + 30); c1 <= hx_min(T1 + 31, n - 2); c1 += 32) {
            shared_A[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(c1) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((c0)) * (n) + (c1)];
          }
          if (n >= T1 + 34 && t1 == 0) {
            shared_A[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + 32) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((c0)) * (n) + (T1 + 32)];
          } else {
            if (T1 + 33 >= n && (n - t1 - 1) % 32 == 0) {
              shared_A[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(n - 1) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((c0)) * (n) + (n - 1)];
            }
          }
        } else {
          if (n >= T1 + t1 + 2 && T1 + t1 >= 1 && c0 + 1 == n) {
            shared_A[(n - 1) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((n - 1)) * (n) + (T1 + t1)];
          } else {
            if (n >= T0 + 34 && t0 == 0 && n >= T1 + t1 + 2 && T1 + t1 >= 1 && c0 == T0 + 32) {
              shared_A[(T0 + 32) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = A[((T0 + 32)) * (n) + (T1 + t1)];
            }
          }
        }
      }
    }
    __syncthreads();
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (n >= T1 + t1 + 2 && T1 + t1 >= 1) {
        for (int c0 = hx_max(T0 + t0, ((t0 + 15) % 16) + 1); c0 <= hx_min(T0 + 31, n - 2); c0 += 16) {
          B[((c0)) * (n) + (T1 + t1)] = (0.2 * ((((shared_A[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] + shared_A[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - 1 - ((T1) == 0 ? 0 : (T1) - 1)]) + shared_A[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) + 1 - ((T1) == 0 ? 0 : (T1) - 1)]) + shared_A[(c0) + 1 - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)]) + shared_A[(c0) - 1 - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)]));
        }
      }
    }
    __syncthreads();
  }
}

__global__ void __launch_bounds__(512) kernel1(double *__restrict__ A, double *__restrict__ B, int n, int tsteps, int h0, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  __shared__ double shared_B[34][34];
  if (h0 >= 0 && n >= 3 && tsteps >= h0 + 1 && b0 >= 0 && n >= 32 * b0 + 2 && b1 >= 0 && n >= 32 * b1 + 2) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (T0 == 0 && t0 == 0 && n >= T1 + t1 + 2 && T1 + t1 >= 1) {
        shared_B[(0) - ((0) == 0 ? 0 : (0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((0)) * (n) + (T1 + t1)];
      } else {
        if (T0 >= 32 && t0 == 15 && n >= T1 + t1 + 2 && T1 + t1 >= 1) {
          shared_B[(T0 - 1) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((T0 - 1)) * (n) + (T1 + t1)];
        }
      }
      for (int c0 = hx_max(T0 + t0, ((t0 + 15) % 16) + 1); c0 <= hx_min(T0 + 32, n - 1); c0 += 16) {
        if (n >= c0 + 2 && T0 + 31 >= c0) {
          for (int c1 = hx_max(t1, -((T1 - t1 + 62) % 32) + T1 + 30); c1 <= hx_min(T1 + 31, n - 2); c1 += 32) {
            shared_B[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(c1) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((c0)) * (n) + (c1)];
          }
          if (n >= T1 + 34 && t1 == 0) {
            shared_B[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + 32) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((c0)) * (n) + (T1 + 32)];
          } else {
            if (T1 + 33 >= n && (n - t1 - 1) % 32 == 0) {
              shared_B[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(n - 1) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((c0)) * (n) + (n - 1)];
            }
          }
        } else {
          if (n >= T1 + t1 + 2 && T1 + t1 >= 1 && c0 + 1 == n) {
            shared_B[(n - 1) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((n - 1)) * (n) + (T1 + t1)];
          } else {
            if (n >= T0 + 34 && t0 == 0 && n >= T1 + t1 + 2 && T1 + t1 >= 1 && c0 == T0 + 32) {
              shared_B[(T0 + 32) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] = B[((T0 + 32)) * (n) + (T1 + t1)];
            }
          }
        }
      }
    }
    __syncthreads();
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (n >= T1 + t1 + 2 && T1 + t1 >= 1) {
        for (int c0 = hx_max(T0 + t0, ((t0 + 15) % 16) + 1); c0 <= hx_min(T0 + 31, n - 2); c0 += 16) {
          A[((c0)) * (n) + (T1 + t1)] = (0.2 * ((((shared_B[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)] + shared_B[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - 1 - ((T1) == 0 ? 0 : (T1) - 1)]) + shared_B[(c0) - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) + 1 - ((T1) == 0 ? 0 : (T1) - 1)]) + shared_B[(c0) + 1 - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)]) + shared_B[(c0) - 1 - ((T0) == 0 ? 0 : (T0) - 1)][(T1 + t1) - ((T1) == 0 ? 0 : (T1) - 1)]));
        }
      }
    }
    __syncthreads();
  }
}
