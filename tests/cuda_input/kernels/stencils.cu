// Stencils.
// - `jacobi2d` (PolyBench-GPU jacobi2d, 16 x 16 blocks): a 2-D 5-point stencil reading `in`,
//   writing `out` (the host swaps them between sweeps), the border masked. Race-free.
// - `stencil_1d` (NVIDIA's "CUDA C/C++ basics"): each block stages its 256 inputs and RADIUS more
//   on each side in `__shared__ temp`, the first RADIUS threads loading the halo; one
//   `__syncthreads()`; then each thread sums 2 * RADIUS + 1 neighbours. `in` points RADIUS
//   elements into its array (the host passes `in + RADIUS`). Race-free.
// - `smooth_in_place` (planted): a 1-D smoothing stencil written in place: thread i writes a[i]
//   while thread i + 1 reads it as its a[i - 1] and thread i - 1 as its a[i + 1] — within a
//   block, and between two blocks at every block edge (thread 255 of block b, thread 0 of b + 1).

#define RADIUS 3
#define BLOCK_SIZE 256

__global__ void jacobi2d(const float *in, float *out, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
    out[i * n + j] = 0.2f * (in[i * n + j] + in[(i - 1) * n + j] + in[(i + 1) * n + j] +
                             in[i * n + j - 1] + in[i * n + j + 1]);
}

__global__ void stencil_1d(const int *in, int *out) {
  __shared__ int temp[BLOCK_SIZE + 2 * RADIUS];
  int gindex = threadIdx.x + blockIdx.x * blockDim.x;
  int lindex = threadIdx.x + RADIUS;
  temp[lindex] = in[gindex];
  if (threadIdx.x < RADIUS) {
    temp[lindex - RADIUS] = in[gindex - RADIUS];
    temp[lindex + BLOCK_SIZE] = in[gindex + BLOCK_SIZE];
  }
  __syncthreads();
  int result = 0;
  for (int offset = -RADIUS; offset <= RADIUS; offset++)
    result += temp[lindex + offset];
  out[gindex] = result;
}

__global__ void smooth_in_place(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 1 && i < n - 1)
    a[i] = 0.5f * (a[i - 1] + a[i + 1]); // expect: DataRace
}

void run_stencils(float *a, float *b, const int *in, int *out, int n, int steps) {
  dim3 grid((n + 15) / 16, (n + 15) / 16);
  for (int t = 0; t < steps; ++t) {
    jacobi2d<<<grid, dim3(16, 16)>>>(a, b, n);
    jacobi2d<<<grid, dim3(16, 16)>>>(b, a, n);
  }
  stencil_1d<<<n / BLOCK_SIZE, BLOCK_SIZE>>>(in + RADIUS, out);
  smooth_in_place<<<(n + 255) / 256, 256>>>(a, n);
}
