/* hexplore's stand-in for the CUDA runtime headers, so that .cu files parse without a CUDA
   install (clang -x cuda --cuda-host-only -nocudainc). Only declarations: nothing here runs. */
#pragma once
#if __has_include(<math.h>)
#include <math.h> /* nvcc declares the math functions in every .cu file */
#endif
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __restrict__ __restrict
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))

typedef __SIZE_TYPE__ size_t;
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  __host__ __device__ dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
};
typedef struct uint3 uint3;
typedef struct dim3 dim3;
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

typedef int cudaError_t;
typedef struct CUstream_st *cudaStream_t;
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                      cudaMemcpyDeviceToDevice, cudaMemcpyDefault };
extern "C" {
cudaError_t cudaMalloc(void **ptr, size_t size);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaGetLastError(void);
const char *cudaGetErrorString(cudaError_t error);
int cudaConfigureCall(dim3 grid, dim3 block, size_t shared = 0, cudaStream_t stream = 0);
unsigned __cudaPushCallConfiguration(dim3 grid, dim3 block, size_t shared = 0, void *stream = 0);
}
template <typename T> cudaError_t cudaMalloc(T **ptr, size_t size) { return cudaMalloc((void **)ptr, size); }

__device__ void __syncthreads(void);
__device__ void __threadfence(void);
__device__ int atomicAdd(int *address, int val);
__device__ unsigned int atomicAdd(unsigned int *address, unsigned int val);
__device__ float atomicAdd(float *address, float val);
__device__ double atomicAdd(double *address, double val);
__device__ int atomicMax(int *address, int val);
__device__ int atomicMin(int *address, int val);
