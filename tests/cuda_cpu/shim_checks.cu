/* What the CUDA CPU shim must catch or do, one scenario per run: `shim_checks SCENARIO`.
 * Written as CUDA (launches with <<< >>>), so the harness's launch rewrite is tested too.
 * Exit status 0 and "ok" on stdout where the scenario behaves as a GPU would; the bugs end in
 * AddressSanitizer's report or in the CUDA error a GPU gives. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

__global__ void block_sum(const double *__restrict__ in, double *__restrict__ out) {
  __shared__ double part[256];
  int t = threadIdx.x;
  part[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (t < half) part[t] += part[t + half];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = part[0];
}

__global__ void fill(double *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) a[i] = 1.0;  // one past the end: the bug
}

__global__ void count(int *c) { atomicAdd(c, 1); }

__global__ void __launch_bounds__(64) bounded(double *a) { a[threadIdx.x] = 2.0; }

__global__ void copy(const double *in, double *out) { out[threadIdx.x] = in[threadIdx.x]; }

static int barrier() {
  double host[4 * 256], sums[4];
  for (int i = 0; i < 4 * 256; i++) host[i] = i % 7;
  double *in, *out;
  cudaMalloc((void **)&in, sizeof host);
  cudaMalloc((void **)&out, sizeof sums);
  cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
  block_sum<<<dim3(4), dim3(256)>>>(in, out);
  if (cudaGetLastError() != cudaSuccess) return 1;
  cudaMemcpy(sums, out, sizeof sums, cudaMemcpyDeviceToHost);
  for (int b = 0; b < 4; b++) {
    double expect = 0;
    for (int t = 0; t < 256; t++) expect += host[b * 256 + t];
    if (sums[b] != expect) return fprintf(stderr, "block %d: %g, expected %g\n", b, sums[b], expect), 1;
  }
  cudaFree(in);
  cudaFree(out);
  return 0;
}

static int atomics() {
  int *c, h = 0;
  cudaMalloc((void **)&c, sizeof(int));
  cudaMemcpy(c, &h, sizeof h, cudaMemcpyHostToDevice);
  count<<<dim3(3, 2), dim3(32, 4)>>>(c);
  cudaMemcpy(&h, c, sizeof h, cudaMemcpyDeviceToHost);
  cudaFree(c);
  return h == 3 * 2 * 32 * 4 ? 0 : (fprintf(stderr, "count %d\n", h), 1);
}

/* One tile copied with cp.async, as hexplore's double-buffered kernels do: `early` reads the
 * buffer before waiting (stale on a GPU: the copy may not have landed), `forgot` never waits. */
__global__ void async_copy(const double *in, double *out, int early, int forgot) {
  __shared__ double tile[64];
  int t = threadIdx.x;
  tile[t] = -1.0;
  __syncthreads();
  __pipeline_memcpy_async(&tile[t], &in[t], sizeof(double));
  if (early) out[t] = tile[t];
  if (!forgot) {
    __pipeline_commit();
    __pipeline_wait_prior(0);
  }
  __syncthreads();
  if (!early) out[t] = tile[63 - t];
}

static int async_copy_run(int early, int forgot, double *result) {
  double host[64];
  for (int i = 0; i < 64; i++) host[i] = i;
  double *in, *out;
  cudaMalloc((void **)&in, sizeof host);
  cudaMalloc((void **)&out, sizeof host);
  cudaMemcpy(in, host, sizeof host, cudaMemcpyHostToDevice);
  async_copy<<<1, 64>>>(in, out, early, forgot);
  cudaMemcpy(result, out, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(in);
  cudaFree(out);
  return 0;
}

static int async_copies() {
  double got[64];
  async_copy_run(0, 0, got);
  for (int t = 0; t < 64; t++)
    if (got[t] != 63 - t) return fprintf(stderr, "thread %d read %g, expected %d\n", t, got[t], 63 - t), 1;
  async_copy_run(1, 0, got);  // read before the wait: the copy has not landed
  for (int t = 0; t < 64; t++)
    if (got[t] != -1.0) return fprintf(stderr, "thread %d read %g before its copy landed\n", t, got[t]), 1;
  return 0;
}

static int async_never_waited() {
  double got[64];
  return async_copy_run(0, 1, got);
}

static int out_of_bounds() {
  double *a;
  cudaMalloc((void **)&a, 64 * sizeof(double));
  fill<<<dim3(2), dim3(64)>>>(a, 64);
  cudaFree(a);
  return 0;
}

static int host_pointer() {
  double host[32], *out;
  cudaMalloc((void **)&out, sizeof host);
  copy<<<1, 32>>>(host, out);
  cudaError_t e = cudaGetLastError();
  cudaFree(out);
  return e == cudaErrorIllegalAddress ? 0 : 1;
}

static int bad_launch() {
  double *a;
  cudaMalloc((void **)&a, sizeof(double));
  fill<<<dim3(1), dim3(2048)>>>(a, 0);
  cudaError_t too_many = cudaGetLastError();
  fill<<<dim3(0), dim3(32)>>>(a, 0);
  cudaError_t empty = cudaGetLastError();
  cudaFree(a);
  return too_many == cudaErrorInvalidConfiguration && empty == cudaErrorInvalidConfiguration ? 0 : 1;
}

static int launch_bounds() {
  double *a;
  cudaMalloc((void **)&a, 128 * sizeof(double));
  bounded<<<1, 64>>>(a);
  cudaError_t within = cudaGetLastError();
  bounded<<<1, 128>>>(a);  // more threads than the kernel was compiled for
  cudaError_t beyond = cudaGetLastError();
  cudaFree(a);
  return within == cudaSuccess && beyond == cudaErrorLaunchOutOfResources ? 0 : 1;
}

static int memcpy_overrun() {
  double host[16] = {0}, *a;
  cudaMalloc((void **)&a, 8 * sizeof(double));
  cudaError_t e = cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice);
  cudaFree(a);
  return e == cudaErrorInvalidValue ? 0 : 1;
}

static int uninitialized() {
  double *a, h = 0;
  cudaMalloc((void **)&a, sizeof(double));
  cudaMemcpy(&h, a, sizeof h, cudaMemcpyDeviceToHost);  // never written: NaN, not a plausible 0
  cudaFree(a);
  return h != h ? 0 : 1;
}

static int leak() {
  double *a;
  cudaMalloc((void **)&a, 8 * sizeof(double));  // never freed
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  struct { const char *name; int (*run)(); } scenarios[] = {
      {"barrier", barrier},           {"atomics", atomics},       {"out-of-bounds", out_of_bounds},
      {"host-pointer", host_pointer}, {"bad-launch", bad_launch}, {"launch-bounds", launch_bounds},
      {"memcpy-overrun", memcpy_overrun},
      {"uninitialized", uninitialized}, {"leak", leak},
      {"async-copies", async_copies},   {"async-never-waited", async_never_waited},
  };
  for (auto &s : scenarios)
    if (strcmp(argv[1], s.name) == 0) {
      int rc = s.run();
      if (rc == 0) printf("ok\n");
      return rc;
    }
  return 2;
}
