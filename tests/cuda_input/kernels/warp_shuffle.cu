// A warp-shuffle reduction (NVIDIA's "Faster parallel reductions on Kepler"): `__shfl_down_sync`
// is a call hexplore does not model, so the kernel is not checked (CudaKernelNotModeled).

__global__ void warp_reduce(const float *in, float *out, int n) { // expect: CudaKernelNotModeled
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? in[i] : 0.0f;
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffff, v, offset);
  if (threadIdx.x % 32 == 0) atomicAdd(out, v);
}

void run_warp_reduce(const float *in, float *out, int n) {
  warp_reduce<<<(n + 255) / 256, 256>>>(in, out, n);
}
