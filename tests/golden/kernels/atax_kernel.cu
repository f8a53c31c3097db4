#include "atax_kernel.hu"
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

#ifdef __CUDACC__
#include <cuda_pipeline.h>
#endif
#ifndef HX_ASYNC_COPY
#if (defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800) || defined(HX_EMULATE_ASYNC)
#define HX_ASYNC_COPY(dst, src) __pipeline_memcpy_async(&(dst), &(src), sizeof(dst))
#define HX_ASYNC_WAIT() (__pipeline_commit(), __pipeline_wait_prior(0))
#else
#define HX_ASYNC_COPY(dst, src) ((dst) = (src))
#define HX_ASYNC_WAIT()
#endif
#endif

__global__ void __launch_bounds__(32) kernel0(double *__restrict__ A, double *__restrict__ t, double *__restrict__ x, double *__restrict__ y, int m, int n, int o0)
{
  int b0 = blockIdx.x + o0;
  int t0 = threadIdx.x;
  double private_t[1];
  __shared__ double shared_x[2][32];
  if (n >= 1 && b0 >= 0 && m >= 32 * b0 + 1) {
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 32 && T1 >= 0) {
        private_t[(((T0 + t0)) - ((T0)) - t0) / 32] = t[((T0 + t0) - (0))];
      } else {
        if (m >= T0 + t0 + 1) {
          private_t[(((T0 + t0)) - ((T0)) - t0) / 32] = t[((T0 + t0) - (0))];
        }
      }
    }
  }
  if (b0 >= 0 && m >= 32 * b0 + 1) {
    if (n >= 1) {
      {
        int T0 = (32 * b0);
        int T1 = (-32);
        if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 64 && T1 >= -32) {
          HX_ASYNC_COPY(shared_x[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], x[(T1 + t0 + 32)]);
        } else {
          if (n >= T1 + t0 + 33) {
            HX_ASYNC_COPY(shared_x[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], x[(T1 + t0 + 32)]);
          }
        }
      }
    }
    HX_ASYNC_WAIT();
    __syncthreads();
    if (n >= 33) {
      {
        int T0 = (32 * b0);
        int T1 = (0);
        if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 64 && T1 >= -32) {
          HX_ASYNC_COPY(shared_x[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], x[(T1 + t0 + 32)]);
        } else {
          if (n >= T1 + t0 + 33) {
            HX_ASYNC_COPY(shared_x[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], x[(T1 + t0 + 32)]);
          }
        }
      }
    }
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 32 && T1 >= 0) {
        if (T1 == 0) {
          private_t[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
        }
        for (int c0 = T1; c0 <= T1 + 31; c0++) {
          private_t[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((T0 + t0)) * (n) + (c0)] * shared_x[(((T1)) / 32) & 1][(c0) - ((T1))]);
        }
      } else {
        if (T1 == 0 && m >= T0 + t0 + 1) {
          private_t[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
        }
        if (m >= T0 + t0 + 1 && T1 % 32 == 0) {
          for (int c0 = T1; c0 <= hx_min(T1 + 31, n - 1); c0++) {
            private_t[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((T0 + t0)) * (n) + (c0)] * shared_x[(((T1)) / 32) & 1][(c0) - ((T1))]);
          }
        }
      }
    }
    HX_ASYNC_WAIT();
    __syncthreads();
    for (int c2 = 32; c2 < n; c2 += 32) {
      if (n >= c2 + 33) {
        {
          int T0 = (32 * b0);
          int T1 = (c2);
          if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 64 && T1 >= -32) {
            HX_ASYNC_COPY(shared_x[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], x[(T1 + t0 + 32)]);
          } else {
            if (n >= T1 + t0 + 33) {
              HX_ASYNC_COPY(shared_x[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], x[(T1 + t0 + 32)]);
            }
          }
        }
      }
      {
        int T0 = (32 * b0);
        int T1 = (c2);
        if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 32 && T1 >= 0) {
          if (T1 == 0) {
            private_t[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
          }
          for (int c0 = T1; c0 <= T1 + 31; c0++) {
            private_t[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((T0 + t0)) * (n) + (c0)] * shared_x[(((T1)) / 32) & 1][(c0) - ((T1))]);
          }
        } else {
          if (T1 == 0 && m >= T0 + t0 + 1) {
            private_t[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
          }
          if (m >= T0 + t0 + 1 && T1 % 32 == 0) {
            for (int c0 = T1; c0 <= hx_min(T1 + 31, n - 1); c0++) {
              private_t[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((T0 + t0)) * (n) + (c0)] * shared_x[(((T1)) / 32) & 1][(c0) - ((T1))]);
            }
          }
        }
      }
      HX_ASYNC_WAIT();
      __syncthreads();
    }
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (m >= T0 + 32 && T0 >= 0 && n >= T1 + 32 && T1 >= 0) {
        t[((T0 + t0) - (0))] = private_t[(((T0 + t0)) - ((T0)) - t0) / 32];
      } else {
        if (m >= T0 + t0 + 1) {
          t[((T0 + t0) - (0))] = private_t[(((T0 + t0)) - ((T0)) - t0) / 32];
        }
      }
    }
  }
}

__global__ void __launch_bounds__(32) kernel1(double *__restrict__ A, double *__restrict__ t, double *__restrict__ x, double *__restrict__ y, int m, int n, int o0)
{
  int b0 = blockIdx.x + o0;
  int t0 = threadIdx.x;
  __shared__ double shared_t[2][32];
  double private_y[1];
  if (m >= 1 && b0 >= 0 && n >= 32 * b0 + 1) {
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 32 && T1 >= 0) {
        private_y[(((T0 + t0)) - ((T0)) - t0) / 32] = y[(T0 + t0)];
      } else {
        if (n >= T0 + t0 + 1) {
          private_y[(((T0 + t0)) - ((T0)) - t0) / 32] = y[(T0 + t0)];
        }
      }
    }
  }
  if (b0 >= 0 && n >= 32 * b0 + 1) {
    if (m >= 1) {
      {
        int T0 = (32 * b0);
        int T1 = (-32);
        if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 64 && T1 >= -32) {
          HX_ASYNC_COPY(shared_t[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], t[((T1 + t0 + 32) - (0))]);
        } else {
          if (m >= T1 + t0 + 33) {
            HX_ASYNC_COPY(shared_t[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], t[((T1 + t0 + 32) - (0))]);
          }
        }
      }
    }
    HX_ASYNC_WAIT();
    __syncthreads();
    if (m >= 33) {
      {
        int T0 = (32 * b0);
        int T1 = (0);
        if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 64 && T1 >= -32) {
          HX_ASYNC_COPY(shared_t[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], t[((T1 + t0 + 32) - (0))]);
        } else {
          if (m >= T1 + t0 + 33) {
            HX_ASYNC_COPY(shared_t[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], t[((T1 + t0 + 32) - (0))]);
          }
        }
      }
    }
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 32 && T1 >= 0) {
        if (T1 == 0) {
          private_y[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
        }
        for (int c0 = T1; c0 <= T1 + 31; c0++) {
          private_y[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((c0)) * (n) + (T0 + t0)] * shared_t[(((T1)) / 32) & 1][(c0) - ((T1))]);
        }
      } else {
        if (T1 == 0 && n >= T0 + t0 + 1) {
          private_y[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
        }
        if (n >= T0 + t0 + 1 && T1 % 32 == 0) {
          for (int c0 = T1; c0 <= hx_min(T1 + 31, m - 1); c0++) {
            private_y[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((c0)) * (n) + (T0 + t0)] * shared_t[(((T1)) / 32) & 1][(c0) - ((T1))]);
          }
        }
      }
    }
    HX_ASYNC_WAIT();
    __syncthreads();
    for (int c2 = 32; c2 < m; c2 += 32) {
      if (m >= c2 + 33) {
        {
          int T0 = (32 * b0);
          int T1 = (c2);
          if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 64 && T1 >= -32) {
            HX_ASYNC_COPY(shared_t[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], t[((T1 + t0 + 32) - (0))]);
          } else {
            if (m >= T1 + t0 + 33) {
              HX_ASYNC_COPY(shared_t[(((T1 + 32)) / 32) & 1][(T1 + t0 + 32) - ((T1 + 32))], t[((T1 + t0 + 32) - (0))]);
            }
          }
        }
      }
      {
        int T0 = (32 * b0);
        int T1 = (c2);
        if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 32 && T1 >= 0) {
          if (T1 == 0) {
            private_y[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
          }
          for (int c0 = T1; c0 <= T1 + 31; c0++) {
            private_y[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((c0)) * (n) + (T0 + t0)] * shared_t[(((T1)) / 32) & 1][(c0) - ((T1))]);
          }
        } else {
          if (T1 == 0 && n >= T0 + t0 + 1) {
            private_y[(((T0 + t0)) - ((T0)) - t0) / 32] = 0.0;
          }
          if (n >= T0 + t0 + 1 && T1 % 32 == 0) {
            for (int c0 = T1; c0 <= hx_min(T1 + 31, m - 1); c0++) {
              private_y[(((T0 + t0)) - ((T0)) - t0) / 32] += (A[((c0)) * (n) + (T0 + t0)] * shared_t[(((T1)) / 32) & 1][(c0) - ((T1))]);
            }
          }
        }
      }
      HX_ASYNC_WAIT();
      __syncthreads();
    }
    {
      int T0 = (32 * b0);
      int T1 = (0);
      if (n >= T0 + 32 && T0 >= 0 && m >= T1 + 32 && T1 >= 0) {
        y[(T0 + t0)] = private_y[(((T0 + t0)) - ((T0)) - t0) / 32];
      } else {
        if (n >= T0 + t0 + 1) {
          y[(T0 + t0)] = private_y[(((T0 + t0)) - ((T0)) - t0) / 32];
        }
      }
    }
  }
}
