// Element-wise kernels, one thread per element:
// - `vector_add` (CUDA samples' vectorAdd) and `saxpy`: the grid rounded up, the tail masked by
//   `if (i < n)`;
// - `scale_shift`: an early exit for the tail threads, `if (i >= n) return;`, with no barrier
//   after it, so nothing diverges;
// - `saxpy_grid_stride`: a grid-stride loop (NVIDIA's "CUDA Pro Tip: grid-stride loops"), each
//   thread handling i, i + blockDim.x * gridDim.x, ... so that any grid covers any n.
// All race-free and coalesced: no findings.

__global__ void vector_add(const float *a, const float *b, float *c, int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n)
    c[i] = a[i] + b[i];
}

__global__ void saxpy(int n, float alpha, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = alpha * x[i] + y[i];
}

__global__ void scale_shift(const float *x, float *y, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  float v = x[i];
  y[i] = a * v + b;
}

__global__ void saxpy_grid_stride(int n, float a, const float *x, float *y) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    y[i] = a * x[i] + y[i];
}

void run_elementwise(const float *a, const float *b, float *c, float *y, int n) {
  vector_add<<<(n + 255) / 256, 256>>>(a, b, c, n);
  saxpy<<<(n + 255) / 256, 256>>>(n, 2.0f, a, y);
  scale_shift<<<(n + 127) / 128, 128>>>(a, c, 3.0f, 1.0f, n);
  saxpy_grid_stride<<<128, 256>>>(n, 2.0f, a, y);
}
