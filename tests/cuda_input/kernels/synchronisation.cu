// Planted synchronisation bugs, each in a kernel of its own:
// - `pair_sum` meant `out[i / 2] += in[i]` between pairs, but threads 2k and 2k + 1 both store
//   into out[k] (write/write);
// - `last_writer`: every thread of every block stores into out[0] (write/write);
// - `per_block_copy` indexes the output by the thread only: thread t of every block stores into
//   out[t], a race between blocks only (no barrier could order it);
// - `two_steps`: a barrier that orders nothing — each thread reads back only the element of `y`
//   it wrote itself, so the `__syncthreads()` costs time and prevents no race (RedundantBarrier);
// - `neighbour_diff`: an early exit before a barrier — in the last block the threads past n
//   return and never reach the `__syncthreads()` that the others wait at (BarrierDivergence
//   whenever n is not a multiple of the block size).

__global__ void pair_sum(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i / 2] = in[i]; // expect: DataRace
}

__global__ void last_writer(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[0] = in[i]; // expect: DataRace
}

__global__ void per_block_copy(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[threadIdx.x] = in[i]; // expect: DataRace
}

__global__ void two_steps(const float *x, float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = 2.0f * x[i];
  __syncthreads(); // expect: RedundantBarrier
  if (i < n)
    z[i] = y[i] + 1.0f;
}

__global__ void neighbour_diff(const float *x, float *d, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  s[threadIdx.x] = x[i];
  __syncthreads(); // expect: BarrierDivergence
  if (threadIdx.x > 0)
    d[i] = s[threadIdx.x] - s[threadIdx.x - 1];
}

void run_synchronisation(const float *in, float *out, float *y, float *z, int n) {
  pair_sum<<<(n + 255) / 256, 256>>>(in, out, n);
  last_writer<<<(n + 255) / 256, 256>>>(in, out, n);
  per_block_copy<<<(n + 255) / 256, 256>>>(in, out, n);
  two_steps<<<(n + 255) / 256, 256>>>(in, y, z, n);
  neighbour_diff<<<(n + 255) / 256, 256>>>(in, out, n);
}
