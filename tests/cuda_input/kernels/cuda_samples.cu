// Kernels as NVIDIA's CUDA samples write them (matrixMul's MatrixMulCUDA, reduction's reduce0 and
// reduce3, a warp-shuffle reduction), transcribed with their idioms: a template block size,
// `extern __shared__` arrays sized at launch, `#pragma unroll`, unsigned indices, shuffles.
// - MatrixMulCUDA: its loop steps two counters (`a += aStep, b += bStep`): not modeled.
// - reduce0 (interleaved addressing, `tid % (2 * s)`), reduce3 (sequential addressing, first add
//   during the load): race-free, barriers outside the thread-dependent branches.
// (A warp-shuffle reduction is in warp_shuffle.cu.)
template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB) { // expect: CudaKernelNotModeled
  int bx = blockIdx.x;
  int by = blockIdx.y;
  int tx = threadIdx.x;
  int ty = threadIdx.y;
  int aBegin = wA * BLOCK_SIZE * by;
  int aEnd   = aBegin + wA - 1;
  int aStep  = BLOCK_SIZE;
  int bBegin = BLOCK_SIZE * bx;
  int bStep  = BLOCK_SIZE * wB;
  float Csub = 0;
  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
    As[ty][tx] = A[a + wA * ty + tx];
    Bs[ty][tx] = B[b + wB * ty + tx];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BLOCK_SIZE; ++k) {
      Csub += As[ty][k] * Bs[k][tx];
    }
    __syncthreads();
  }
  int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
  C[c + wB * ty + tx] = Csub;
}

__global__ void reduce0(int *g_idata, int *g_odata, unsigned int n) {
  extern __shared__ int sdata[];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
  sdata[tid] = (i < n) ? g_idata[i] : 0;
  __syncthreads();
  for (unsigned int s = 1; s < blockDim.x; s *= 2) {
    if ((tid % (2 * s)) == 0) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

__global__ void reduce3(int *g_idata, int *g_odata, unsigned int n) {
  extern __shared__ int sdata[];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
  int mySum = (i < n) ? g_idata[i] : 0;
  if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];
  sdata[tid] = mySum;
  __syncthreads();
  for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) {
      sdata[tid] = mySum = mySum + sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) g_odata[blockIdx.x] = mySum;
}

void host(float *C, float *A, float *B, int *gi, int *go, unsigned int n) {
  dim3 threads(32, 32);
  dim3 grid(n / 32, n / 32);
  MatrixMulCUDA<32><<<grid, threads>>>(C, A, B, n, n);
  reduce0<<<n / 256, 256, 256 * sizeof(int)>>>(gi, go, n);
  reduce3<<<n / 512, 256, 256 * sizeof(int)>>>(gi, go, n);
}
