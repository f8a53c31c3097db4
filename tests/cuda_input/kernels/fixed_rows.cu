// A flat matrix with a compile-time row length, as the CUDA samples write it: read as rows of W
// (DelinearizedRows), so the guard `col < m` does not make rows overlap in the model.
#define W 64

__global__ void scale_rows(float *A, const float *s, int n, int m) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < m)
    A[row * W + col] = s[row] * A[row * W + col];
}

void host_fixed_rows(float *A, const float *s, int n, int m) {
  dim3 block(32, 8);
  dim3 grid((m + 31) / 32, (n + 7) / 8);
  scale_rows<<<grid, block>>>(A, s, n, m);
}

// Launched from another file: checked for the block size of its `__launch_bounds__`
// (AssumedBlockSize says so).
__global__ void __launch_bounds__(128) add_one(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += 1.0f;
}
