// A 2-D heat stencil in ping-pong over time steps (Rodinia's hotspot, simplified): race-free.
// Its host loop launches two kernels per step with the arrays swapped, so that split over several
// devices each launch after the first needs only its neighbours' boundary rows.

__global__ void heat_step(const float *in, float *out, int n) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= 1 && i < n - 1 && j >= 1 && j < n - 1)
    out[i * n + j] = in[i * n + j] + 0.1f * (in[(i - 1) * n + j] + in[(i + 1) * n + j] + in[i * n + j - 1] +
                                             in[i * n + j + 1] - 4.0f * in[i * n + j]);
}

void run_heat(float *a, float *b, int n, int steps) {
  dim3 block(16, 8);
  dim3 grid((n + 15) / 16, (n + 7) / 8);
  for (int t = 0; t < steps; t++) {
    heat_step<<<grid, block>>>(a, b, n);
    heat_step<<<grid, block>>>(b, a, n);
  }
}
