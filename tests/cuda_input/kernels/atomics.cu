// Atomics.
// - `histogram256` (the CUDA samples' histogram256 in its simplest form; Parboil histo): a
//   256-bin histogram with global atomics. The bin is the data, `hist[data[i]]`, a subscript the
//   polyhedral model cannot follow: the atomics make it race-free, but hexplore cannot model
//   the kernel (CudaKernelNotModeled).
// - `reset_then_count` (planted): thread 0 zeroes the counter while the other threads add to it
//   atomically — an atomic update does not order a plain store (Parboil's histo clears its bins
//   in a kernel of its own for this reason).

__global__ void histogram256(const unsigned char *data, unsigned int *hist, int n) { // expect: CudaKernelNotModeled
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    atomicAdd(&hist[data[i]], 1);
}

__global__ void reset_then_count(int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0)
    count[0] = 0; // expect: DataRace
  if (i < n)
    atomicAdd(&count[0], 1);
}

void run_atomics(const unsigned char *data, unsigned int *hist, int *count, int n) {
  histogram256<<<(n + 255) / 256, 256>>>(data, hist, n);
  reset_then_count<<<(n + 255) / 256, 256>>>(count, n);
}
