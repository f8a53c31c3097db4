// Matrix multiply, C = A B for n x n matrices, over 2-D grids of 16 x 16 blocks.
// - `matmul_naive` (CUDA programming guide, PolyBench-GPU gemm): one thread per element of C. A
//   warp is two rows of 16 threads: `A[row * n + k]` is the same element for the 16 threads of
//   a row (a broadcast: two 32-byte segments serve 32 threads), `B[k * n + col]` and
//   `C[row * n + col]` are two runs of 16 consecutive floats. Race-free, coalesced.
// - `matmul_tiled` (CUDA samples' matrixMul, with Rodinia-style guards so that n need not be a
//   multiple of the tile): each block loads a 16 x 16 tile of A and of B, `__syncthreads()`,
//   multiplies them, `__syncthreads()` before the next tiles overwrite them. Both barriers are
//   needed; race-free, coalesced, no bank conflicts.
// - planted: the unguarded CUDA-samples version (n a multiple of the tile) with one of its two
//   barriers left out. Without the first, a thread multiplies tile elements that the threads that
//   load them may not have stored yet; without the second, a fast thread stores the next tiles
//   over elements that a slower thread is still reading. Each race is reported at the stores
//   into the tiles; the barrier that is left is needed.

#define TILE 16

__global__ void matmul_naive(const float *A, const float *B, float *C, int n) {
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n && col < n) {
    float sum = 0.0f;
    for (int k = 0; k < n; ++k) {
      float a = A[row * n + k];
      float b = B[k * n + col];
      sum += a * b;
    }
    C[row * n + col] = sum;
  }
}

__global__ void matmul_tiled(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    if (row < n && t * TILE + tx < n)
      As[ty][tx] = A[row * n + t * TILE + tx];
    else
      As[ty][tx] = 0.0f;
    if (col < n && t * TILE + ty < n)
      Bs[ty][tx] = B[(t * TILE + ty) * n + col];
    else
      Bs[ty][tx] = 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      sum += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  if (row < n && col < n)
    C[row * n + col] = sum;
}

__global__ void matmul_tiled_no_first_sync(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    As[ty][tx] = A[row * n + t * TILE + tx]; // expect: DataRace
    Bs[ty][tx] = B[(t * TILE + ty) * n + col]; // expect: DataRace
    for (int k = 0; k < TILE; ++k)
      sum += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  C[row * n + col] = sum;
}

__global__ void matmul_tiled_no_second_sync(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * TILE + ty;
  int col = blockIdx.x * TILE + tx;
  float sum = 0.0f;
  for (int t = 0; t < n / TILE; ++t) {
    As[ty][tx] = A[row * n + t * TILE + tx]; // expect: DataRace
    Bs[ty][tx] = B[(t * TILE + ty) * n + col]; // expect: DataRace
    __syncthreads();
    for (int k = 0; k < TILE; ++k)
      sum += As[ty][k] * Bs[k][tx];
  }
  C[row * n + col] = sum;
}

void run_matmul(const float *A, const float *B, float *C, int n) {
  dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  matmul_naive<<<grid, dim3(16, 16)>>>(A, B, C, n);
  matmul_tiled<<<grid, dim3(TILE, TILE)>>>(A, B, C, n);
  dim3 threads(TILE, TILE);
  dim3 exact(n / TILE, n / TILE);
  matmul_tiled_no_first_sync<<<exact, threads>>>(A, B, C, n);
  matmul_tiled_no_second_sync<<<exact, threads>>>(A, B, C, n);
}
