#include "seidel_2d_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void __launch_bounds__(512) kernel0(double *__restrict__ A, int n, int tsteps, int h0, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  if (n >= 3 && b0 >= 0 && tsteps >= 32 * b0 + 1 && b1 >= 0 && n >= 32 * b1 + 2 && 3 * n + 4 * tsteps >= h0 + 10 && h0 >= 128 * b0 + 3 && h0 >= 128 * b0 + 64 * b1 + 1 && n + 4 * tsteps + 64 * b1 + 56 >= h0 && 3 * n + 128 * b0 + 118 >= h0 && n + 128 * b0 + 64 * b1 + 184 >= h0) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (n >= T1 + t1 + 2 && T1 + t1 >= 1) {
        for (int c0 = hx_max(T0 + t0, t0 + 16 * floord(-2 * T1 - n - 4 * t0 - 2 * t1 + h0 + 1, 64) + 16); c0 <= hx_min(hx_min(T0 + 31, tsteps - 1), -T1 - t1 + (2 * T1 + 2 * t1 + h0 - 1) / 4); c0 += 16) {
          A[((T1 + t1)) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)] = (((((((((A[((T1 + t1) - 1) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1] + A[((T1 + t1) - 1) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1) - 1) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) + A[((T1 + t1)) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1]) + A[((T1 + t1)) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1)) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) + A[((T1 + t1) + 1) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1]) + A[((T1 + t1) + 1) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1) + 1) * (64) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) / 9.0);
        }
      }
    }
  }
}
