// Inclusive prefix sum of each block's 256 elements, Hillis & Steele (GPU Gems 3, ch. 39, the
// naive scan, in place): at each step a thread reads the element `offset` to its left, a barrier,
// then adds it to its own, a barrier.
// - `scan_block` is race-free;
// - `scan_block_one_barrier` (planted) reads and adds in one step: thread t adds temp[t - offset]
//   while thread t - offset is updating that element.

#define BLOCK 256

__global__ void scan_block(const float *in, float *out, int n) {
  __shared__ float temp[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * BLOCK + tid;
  temp[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int offset = 1; offset < BLOCK; offset *= 2) {
    float t = 0.0f;
    if (tid >= offset)
      t = temp[tid - offset];
    __syncthreads();
    if (tid >= offset)
      temp[tid] += t;
    __syncthreads();
  }
  if (i < n)
    out[i] = temp[tid];
}

__global__ void scan_block_one_barrier(const float *in, float *out, int n) {
  __shared__ float temp[BLOCK];
  int tid = threadIdx.x;
  int i = blockIdx.x * BLOCK + tid;
  temp[tid] = (i < n) ? in[i] : 0.0f;
  __syncthreads();
  for (int offset = 1; offset < BLOCK; offset *= 2) {
    if (tid >= offset)
      temp[tid] += temp[tid - offset]; // expect: DataRace
    __syncthreads();
  }
  if (i < n)
    out[i] = temp[tid];
}

void run_scan(const float *in, float *out, int n) {
  scan_block<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, out, n);
  scan_block_one_barrier<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(in, out, n);
}
