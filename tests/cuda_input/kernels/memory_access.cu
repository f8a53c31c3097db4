// Global-memory access patterns of reductions along rows and columns (PolyBench-GPU's atax, bicg
// and mvt kernels), one thread per output element, all race-free:
// - `column_sum_row_major`, `A[i * n + j]`: adjacent threads read adjacent elements — coalesced;
// - `column_sum_col_major` (cuBLAS's column-major storage), `A[j * m + i]`: adjacent threads
//   read elements m apart, one 32-byte segment per thread — uncoalesced (planted);
// - `matvec_rows`, the naive y = A x with a thread per row walking its row: `A[row * n + k]` is
//   uncoalesced (planted), `x[k]` is a broadcast (one segment for the warp);
// - `row_norms_one_block`, one block of 256 threads over a 256 x n matrix,
//   `A[threadIdx.x * n + k]`: uncoalesced (planted).

__global__ void column_sum_row_major(const float *A, float *sums, int m, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float s = 0.0f;
    for (int i = 0; i < m; ++i)
      s += A[i * n + j];
    sums[j] = s;
  }
}

__global__ void column_sum_col_major(const float *A, float *sums, int m, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < n) {
    float s = 0.0f;
    for (int i = 0; i < m; ++i)
      s += A[j * m + i]; // expect: UncoalescedAccess
    sums[j] = s;
  }
}

__global__ void matvec_rows(const float *A, const float *x, float *y, int n) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < n) {
    float s = 0.0f;
    for (int k = 0; k < n; ++k)
      s += A[row * n + k] * x[k]; // expect: UncoalescedAccess
    y[row] = s;
  }
}

__global__ void row_norms_one_block(const float *A, float *norms, int n) {
  float s = 0.0f;
  for (int k = 0; k < n; ++k) {
    float v = A[threadIdx.x * n + k]; // expect: UncoalescedAccess
    s += v * v;
  }
  norms[threadIdx.x] = s;
}

void run_memory_access(const float *A, const float *At, const float *x, float *y, int m, int n) {
  column_sum_row_major<<<(n + 255) / 256, 256>>>(A, y, m, n);
  column_sum_col_major<<<(n + 255) / 256, 256>>>(At, y, m, n);
  matvec_rows<<<(n + 255) / 256, 256>>>(A, x, y, n);
  row_norms_one_block<<<1, 256>>>(A, y, n);
}
