// Matrix transpose as in the CUDA samples' transpose (tiles of 32 x 32 elements, blocks of
// 32 x 8 threads, each thread moving four elements; width and height multiples of 32):
// - naive: the read of a row is coalesced, the write of a column is not (stride `height`);
// - through a `__shared__` tile padded to [32][33]: both global accesses coalesced, and reading
//   a column of the tile touches 32 different banks;
// - through an unpadded [32][32] tile: reading a column of the tile is a 32-way bank conflict.
// All three are race-free.

#define TILE_DIM 32
#define BLOCK_ROWS 8

__global__ void transpose_naive(float *odata, const float *idata, int width, int height) {
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
    float v = idata[(y + j) * width + x];
    odata[x * height + (y + j)] = v; // expect: UncoalescedAccess
  }
}

__global__ void transpose_padded(float *odata, const float *idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM + 1];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}

__global__ void transpose_bank_conflicts(float *odata, const float *idata, int width, int height) {
  __shared__ float tile[TILE_DIM][TILE_DIM];
  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    tile[threadIdx.y + j][threadIdx.x] = idata[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE_DIM + threadIdx.x;
  y = blockIdx.x * TILE_DIM + threadIdx.y;
  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
    odata[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j]; // expect: SharedBankConflict
}

void run_transpose(float *odata, const float *idata, int width, int height) {
  dim3 grid(width / TILE_DIM, height / TILE_DIM);
  dim3 threads(TILE_DIM, BLOCK_ROWS);
  transpose_naive<<<grid, threads>>>(odata, idata, width, height);
  transpose_padded<<<grid, threads>>>(odata, idata, width, height);
  transpose_bank_conflicts<<<grid, threads>>>(odata, idata, width, height);
}
