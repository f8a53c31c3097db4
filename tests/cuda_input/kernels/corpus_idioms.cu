// Idioms of CUDA code nobody here wrote (Debian's bart and StarPU, the corpus of issue 28's
// `benchmarks/cuda_corpus.py`), written anew in their style. The launches below take their grid
// from a size (`g % 2 + 1` blocks), so no constant fixes it:
// - `fill_stride` (bart's gpukrnls.cu): start and stride set in declarations, a `long` counter;
// - `interior_stride` (StarPU's stencil, life_cuda.cu): a loop over planes whose step is set to 1
//   in a declaration, around grid-stride loops over y and x that start one past the thread's
//   index (the interior of each plane);
// - `repeat_stride`: a grid-stride loop inside a sequential loop;
// - `shift_back_race`: a race planted: thread i reads x[i - 1], which the thread before writes;
// - `sum_then_store` (bart's kern_reduce_zsum): each thread sums its elements, then stores at its
//   own index: it reads the thread's index outside the loop, so on a run-time grid it is not
//   modeled, and the remark says why;
// - `incrementer` (StarPU's incrementer_kernels.cu): one thread, a `return;` ending the body;
// - `nothing` (StarPU's variable_kernels.cu): `return;` and nothing else;
// - `abs_tail` (StarPU's csr_cuda.cu): `if (i >= n) return;` guards the rest;
// - `exit_then_sync`: an early exit for the tail threads before a `__syncthreads()`: the threads
//   past n never reach it, while the others of their block wait there;
// - `uniform_exit_then_sync`: `if (n <= 0) return;` before a barrier: every thread of a block
//   leaves, or none does;
// - `count_hits` (StarPU's pi example, monte_carlo): a grid-stride loop into a `__shared__`
//   counter per thread, then a tree reduction with barriers; launched on `nblocks` blocks, a local
//   set to 4 and changed nowhere, so the grid is that constant and the stride 4 x 64.

#define PLANE 64

__global__ void fill_stride(int N, float val, float *dst) {
  int start = threadIdx.x + blockDim.x * blockIdx.x;
  int stride = blockDim.x * gridDim.x;
  for (long i = start; i < N; i += stride)
    dst[i] = val;
}

__global__ void interior_stride(const float *old, float *out, int nx, int ny, int nz) {
  unsigned idx = threadIdx.x + blockIdx.x * blockDim.x;
  unsigned idy = threadIdx.y + blockIdx.y * blockDim.y;
  unsigned stepx = blockDim.x * gridDim.x;
  unsigned stepy = blockDim.y * gridDim.y;
  unsigned stepz = 1;
  unsigned x, y, z;
  for (z = 0; z < nz; z += stepz)
    for (y = 1 + idy; y < ny - 1; y += stepy)
      for (x = 1 + idx; x < nx - 1; x += stepx)
        out[(z * PLANE + y) * PLANE + x] = old[(z * PLANE + y) * PLANE + x - 1] + old[(z * PLANE + y - 1) * PLANE + x];
}

__global__ void repeat_stride(float *y, int n, int reps) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;
  for (int r = 0; r < reps; r++)
    for (int i = index; i < n; i += stride)
      y[i] = 0.5f * y[i] + 1.0f;
}

__global__ void shift_back_race(float *x, int n) {
  for (int i = 1 + blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    x[i] = x[i - 1]; // expect: DataRace
}

__global__ void sum_then_store(long N, float *dst) { // expect: CudaKernelNotModeled
  int start = threadIdx.x + blockDim.x * blockIdx.x;
  int stride = blockDim.x * gridDim.x;
  float sum = 0.0f;
  for (long i = start; i < N; i += stride)
    sum += dst[i];
  if (start < N)
    dst[start] = sum;
}

__global__ void incrementer(float *tab) {
  tab[0] = tab[0] + 1.0f;
  tab[2] = tab[2] + 1.0f;
  return;
}

__global__ void nothing(float *tab) { // expect: CudaKernelNotModeled
  return;
}

__global__ void abs_tail(int *val, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  if (val[i] < 0)
    val[i] = -val[i];
}

__global__ void exit_then_sync(const float *in, float *out, int n) {
  __shared__ float tile[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  tile[threadIdx.x] = in[i];
  __syncthreads(); // expect: BarrierDivergence
  out[i] = tile[threadIdx.x] + tile[63 - threadIdx.x];
}

__global__ void uniform_exit_then_sync(const float *in, float *out, int n) {
  __shared__ float tile[64];
  if (n <= 0)
    return;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[63 - threadIdx.x];
}

void run_corpus_idioms(float *a, float *b, float *c, int *v, int n, int g) {
  dim3 block(32, 4);
  dim3 grid(g % 2 + 1, g % 3 + 1);
  fill_stride<<<g % 2 + 1, 64>>>(n, 3.0f, a);
  interior_stride<<<grid, block>>>(a, b, n, n, 2);
  repeat_stride<<<g % 2 + 1, 64>>>(c, n, 3);
  incrementer<<<1, 1>>>(c);
  abs_tail<<<(n + 63) / 64, 64>>>(v, n);
  uniform_exit_then_sync<<<1, 64>>>(a, c, n);
}

void run_exit_then_sync(const float *a, float *b, int n) {
  exit_then_sync<<<(n + 63) / 64, 64>>>(a, b, n);
}

#define HIT_THREADS 64

__global__ void count_hits(const float *x, unsigned n, unsigned *per_block) {
  __shared__ unsigned hits[HIT_THREADS];
  const int tid = threadIdx.x + blockIdx.x * blockDim.x;
  const int nthreads = gridDim.x * blockDim.x;
  hits[threadIdx.x] = 0;
  int ind;
  for (ind = tid; ind < n; ind += nthreads)
    hits[threadIdx.x] += x[ind] <= 0.5f ? 1 : 0;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s != 0; s >>= 1) {
    if (threadIdx.x < s)
      hits[threadIdx.x] += hits[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    per_block[blockIdx.x] = hits[0];
}

void run_count_hits(const float *x, unsigned *per_block, unsigned n) {
  unsigned nblocks = 4;
  unsigned nthreads = HIT_THREADS;
  count_hits<<<nblocks, nthreads>>>(x, n, per_block);
}
