// Grid-stride loops over a grid known only at run time (NVIDIA's "CUDA Pro Tip: grid-stride
// loops"; bart's kernels are written so): each thread handles i, i + blockDim.x * gridDim.x, ...,
// so that any grid covers any n. The launches below take their grid from a size (`g % 2 + 1`
// blocks: 1 or 2, fewer threads than elements, so each thread runs several iterations), which no
// constant fixes.
// - `scale_stride`: the loop's index and stride set in declarations first;
// - `axpy_stride`: the loop written in one line, `n > i` the other way round;
// - `shift_stride`: a race planted: thread i reads x[i + 1], which thread i + 1 writes.

__global__ void scale_stride(float *y, const float *x, float a, int n) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = blockDim.x * gridDim.x;
  for (int i = index; i < n; i += stride)
    y[i] = a * x[i];
}

__global__ void axpy_stride(int n, float a, const float *x, float *y) {
  for (int i = threadIdx.x + blockDim.x * blockIdx.x; n > i; i += gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
}

__global__ void shift_stride(float *x, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n - 1; i += blockDim.x * gridDim.x)
    x[i] = x[i + 1]; // expect: DataRace
}

void run_grid_stride(float *y, const float *x, float *z, int n, int g) {
  scale_stride<<<g % 2 + 1, 8>>>(y, x, 2.0f, n);
  axpy_stride<<<g % 2 + 1, 8>>>(n, 3.0f, x, y);
  shift_stride<<<g % 2 + 1, 8>>>(z, n);
}
