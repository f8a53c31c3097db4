#include "dot_norm_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void __launch_bounds__(1) kernel0(double *__restrict__ d, double *__restrict__ dot, double *__restrict__ res, double *__restrict__ ss, double *__restrict__ x, double *__restrict__ y, int n)
{
  dot[0] = 0.0;
}

__global__ void __launch_bounds__(32) kernel1(double *__restrict__ d, double *__restrict__ dot, double *__restrict__ res, double *__restrict__ ss, double *__restrict__ x, double *__restrict__ y, int n, int o0)
{
  int b0 = blockIdx.x + o0;
  int t0 = threadIdx.x;
  if (b0 >= 0 && n >= 32 * b0 + 1) {
    {
      int T0 = (32 * b0);
      if (n >= T0 + 32 && T0 >= 0) {
        atomicAdd(&dot[0], (x[(T0 + t0)] * y[(T0 + t0)]));
      } else {
        if (n >= T0 + t0 + 1) {
          atomicAdd(&dot[0], (x[(T0 + t0)] * y[(T0 + t0)]));
        }
      }
    }
  }
}

__global__ void __launch_bounds__(1) kernel2(double *__restrict__ d, double *__restrict__ dot, double *__restrict__ res, double *__restrict__ ss, double *__restrict__ x, double *__restrict__ y, int n)
{
  res[0] = dot[0];
}

__global__ void __launch_bounds__(1) kernel3(double *__restrict__ d, double *__restrict__ dot, double *__restrict__ res, double *__restrict__ ss, double *__restrict__ x, double *__restrict__ y, int n)
{
  ss[0] = 0.0;
}

__global__ void __launch_bounds__(32) kernel4(double *__restrict__ d, double *__restrict__ dot, double *__restrict__ res, double *__restrict__ ss, double *__restrict__ x, double *__restrict__ y, int n, int o0)
{
  int b0 = blockIdx.x + o0;
  int t0 = threadIdx.x;
  double private_d[1];
  if (b0 >= 0 && n >= 32 * b0 + 1) {
    {
      int T0 = (32 * b0);
      if (n >= T0 + 32 && T0 >= 0) {
        private_d[(((T0 + t0)) - ((T0)) - t0) / 32] = d[(T0 + t0)];
      } else {
        if (n >= T0 + t0 + 1) {
          private_d[(((T0 + t0)) - ((T0)) - t0) / 32] = d[(T0 + t0)];
        }
      }
    }
    {
      int T0 = (32 * b0);
      if (n >= T0 + 32 && T0 >= 0) {
        private_d[(((T0 + t0)) - ((T0)) - t0) / 32] = (x[(T0 + t0)] - y[(T0 + t0)]);
        atomicAdd(&ss[0], (private_d[(((T0 + t0)) - ((T0)) - t0) / 32] * private_d[(((T0 + t0)) - ((T0)) - t0) / 32]));
      } else {
        if (n >= T0 + t0 + 1) {
          private_d[(((T0 + t0)) - ((T0)) - t0) / 32] = (x[(T0 + t0)] - y[(T0 + t0)]);
          atomicAdd(&ss[0], (private_d[(((T0 + t0)) - ((T0)) - t0) / 32] * private_d[(((T0 + t0)) - ((T0)) - t0) / 32]));
        }
      }
    }
    {
      int T0 = (32 * b0);
      if (n >= T0 + 32 && T0 >= 0) {
        d[(T0 + t0)] = private_d[(((T0 + t0)) - ((T0)) - t0) / 32];
      } else {
        if (n >= T0 + t0 + 1) {
          d[(T0 + t0)] = private_d[(((T0 + t0)) - ((T0)) - t0) / 32];
        }
      }
    }
  }
}

__global__ void __launch_bounds__(1) kernel5(double *__restrict__ d, double *__restrict__ dot, double *__restrict__ res, double *__restrict__ ss, double *__restrict__ x, double *__restrict__ y, int n)
{
  res[1] = sqrt(ss[0]);
}
