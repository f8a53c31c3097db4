#include "seidel_2d_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void kernel0(double *__restrict__ A, int n, int tsteps, int h0, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  if (n >= 32 * b1 + t1 + 2 && 32 * b1 + t1 >= 1) {
    for (int c0 = hx_max(hx_max(t0, 32 * b0 + t0), -16 * b1 + t0 + 16 * floord(-n + h0 - 4 * t0 - 2 * t1 + 1, 64) + 16); c0 <= hx_min(hx_min(tsteps - 1, 32 * b0 + 31), -16 * b1 - t1 + floord(h0 + 2 * t1 - 1, 4)); c0 += 16) {
      A[((32 * b1 + t1)) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0)] = (((((((((A[((32 * b1 + t1) - 1) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0) - 1] + A[((32 * b1 + t1) - 1) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0)]) + A[((32 * b1 + t1) - 1) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0) + 1]) + A[((32 * b1 + t1)) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0) - 1]) + A[((32 * b1 + t1)) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0)]) + A[((32 * b1 + t1)) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0) + 1]) + A[((32 * b1 + t1) + 1) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0) - 1]) + A[((32 * b1 + t1) + 1) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0)]) + A[((32 * b1 + t1) + 1) * (64) + (h0 - 64 * b1 - 2 * t1 - 4 * c0) + 1]) / 9.0);
    }
  }
}
