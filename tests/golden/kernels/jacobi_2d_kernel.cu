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
  if (n >= 3 && b0 >= 0 && n >= 32 * b0 + 2 && b1 >= 0 && n >= 32 * b1 + 2 && tsteps >= h0 + 1 && h0 >= 0) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (tsteps >= h0 + 1 && h0 >= 0 && n >= T0 + 33 && T0 >= 1 && n >= T1 + 33 && T1 >= 1) {
        for (int c0 = T0 + t0; c0 <= T0 + 31; c0 += 16) {
          B[((c0)) * (n) + (T1 + t1)] = (0.2 * ((((A[((c0)) * (n) + (T1 + t1)] + A[((c0)) * (n) + (T1 + t1) - 1]) + A[((c0)) * (n) + (T1 + t1) + 1]) + A[((c0) + 1) * (n) + (T1 + t1)]) + A[((c0) - 1) * (n) + (T1 + t1)]));
        }
      } else {
        if (n >= T1 + t1 + 2 && T1 + t1 >= 1) {
          for (int c0 = hx_max(T0 + t0, ((t0 + 15) % 16) + 1); c0 <= hx_min(T0 + 31, n - 2); c0 += 16) {
            B[((c0)) * (n) + (T1 + t1)] = (0.2 * ((((A[((c0)) * (n) + (T1 + t1)] + A[((c0)) * (n) + (T1 + t1) - 1]) + A[((c0)) * (n) + (T1 + t1) + 1]) + A[((c0) + 1) * (n) + (T1 + t1)]) + A[((c0) - 1) * (n) + (T1 + t1)]));
          }
        }
      }
    }
  }
}

__global__ void __launch_bounds__(512) kernel1(double *__restrict__ A, double *__restrict__ B, int n, int tsteps, int h0, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  if (n >= 3 && b0 >= 0 && n >= 32 * b0 + 2 && b1 >= 0 && n >= 32 * b1 + 2 && tsteps >= h0 + 1 && h0 >= 0) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (tsteps >= h0 + 1 && h0 >= 0 && n >= T0 + 33 && T0 >= 1 && n >= T1 + 33 && T1 >= 1) {
        for (int c0 = T0 + t0; c0 <= T0 + 31; c0 += 16) {
          A[((c0)) * (n) + (T1 + t1)] = (0.2 * ((((B[((c0)) * (n) + (T1 + t1)] + B[((c0)) * (n) + (T1 + t1) - 1]) + B[((c0)) * (n) + (T1 + t1) + 1]) + B[((c0) + 1) * (n) + (T1 + t1)]) + B[((c0) - 1) * (n) + (T1 + t1)]));
        }
      } else {
        if (n >= T1 + t1 + 2 && T1 + t1 >= 1) {
          for (int c0 = hx_max(T0 + t0, ((t0 + 15) % 16) + 1); c0 <= hx_min(T0 + 31, n - 2); c0 += 16) {
            A[((c0)) * (n) + (T1 + t1)] = (0.2 * ((((B[((c0)) * (n) + (T1 + t1)] + B[((c0)) * (n) + (T1 + t1) - 1]) + B[((c0)) * (n) + (T1 + t1) + 1]) + B[((c0) + 1) * (n) + (T1 + t1)]) + B[((c0) - 1) * (n) + (T1 + t1)]));
          }
        }
      }
    }
  }
}
