// Tree reduction in shared memory (Harris, "Optimizing Parallel Reduction in CUDA", kernel 2
// with sequential addressing; the CUDA samples' reduction): each block sums its 256 inputs in
// `buf`, halving the active threads each step with a barrier after every step; thread 0 then
// adds the block's sum to the result atomically (`reduce_sum`) or stores it as the block's
// partial sum (`reduce_partial`, the CUDA samples' form). Both race-free.
// Planted: the same two kernels with the barrier moved inside `if (tid < s)` (a classic
// mistake): at every step only the active threads reach the `__syncthreads()`, the others skip
// it — undefined behaviour, a hang on older GPUs: BarrierDivergence at that barrier.

#define BLOCK 256

__global__ void reduce_sum(const float *in, float *out, int n) {
  __shared__ float buf[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    buf[tid] = in[i];
  else
    buf[tid] = 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(out, buf[0]);
}

__global__ void reduce_partial(const float *in, float *partial, int n) {
  __shared__ float buf[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s)
      buf[tid] += buf[tid + s];
    __syncthreads();
  }
  if (tid == 0)
    partial[blockIdx.x] = buf[0];
}

__global__ void reduce_sum_divergent(const float *in, float *out, int n) {
  __shared__ float buf[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    buf[tid] = in[i];
  else
    buf[tid] = 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      buf[tid] += buf[tid + s];
      __syncthreads(); // expect: BarrierDivergence
    }
  }
  if (tid == 0)
    atomicAdd(out, buf[0]);
}

__global__ void reduce_partial_divergent(const float *in, float *partial, int n) {
  __shared__ float buf[BLOCK];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      buf[tid] += buf[tid + s];
      __syncthreads(); // expect: BarrierDivergence
    }
  }
  if (tid == 0)
    partial[blockIdx.x] = buf[0];
}

void run_reductions(const float *in, float *out, float *partial, int n) {
  reduce_sum<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, out, n);
  reduce_partial<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, partial, n);
  reduce_sum_divergent<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, out, n);
  reduce_partial_divergent<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, partial, n);
}
