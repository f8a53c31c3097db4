/* hexplore's stand-in for the CUDA runtime headers, so that .cu files parse without a CUDA
   install (clang -x cuda --cuda-host-only -nocudainc). Only declarations: nothing here runs. */
#pragma once
/* nvcc declares the math functions in every .cu file (declared here, not by <math.h>: it
   takes clang ~0.4 s to parse), callable from host and device code as nvcc's are */
#pragma clang force_cuda_host_device begin
extern "C" {
double sqrt(double); float sqrtf(float);
double cbrt(double); float cbrtf(float);
double exp(double); float expf(float);
double exp2(double); float exp2f(float);
double expm1(double); float expm1f(float);
double log(double); float logf(float);
double log2(double); float log2f(float);
double log10(double); float log10f(float);
double log1p(double); float log1pf(float);
double sin(double); float sinf(float);
double cos(double); float cosf(float);
double tan(double); float tanf(float);
double asin(double); float asinf(float);
double acos(double); float acosf(float);
double atan(double); float atanf(float);
double sinh(double); float sinhf(float);
double cosh(double); float coshf(float);
double tanh(double); float tanhf(float);
double erf(double); float erff(float);
double erfc(double); float erfcf(float);
double fabs(double); float fabsf(float);
double floor(double); float floorf(float);
double ceil(double); float ceilf(float);
double round(double); float roundf(float);
double trunc(double); float truncf(float);
double rint(double); float rintf(float);
double pow(double, double); float powf(float, float);
double fmax(double, double); float fmaxf(float, float);
double fmin(double, double); float fminf(float, float);
double fmod(double, double); float fmodf(float, float);
double atan2(double, double); float atan2f(float, float);
double hypot(double, double); float hypotf(float, float);
double copysign(double, double); float copysignf(float, float);
double fma(double, double, double); float fmaf(float, float, float);
}
#pragma clang force_cuda_host_device end
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
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
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

/* warp-level primitives and device intrinsics (declarations only; a kernel calling them is not
   modeled, but the file parses) */
__device__ void __syncwarp(unsigned mask = 0xffffffff);
__device__ unsigned __activemask(void);
__device__ unsigned __ballot_sync(unsigned mask, int predicate);
__device__ int __any_sync(unsigned mask, int predicate);
__device__ int __all_sync(unsigned mask, int predicate);
template <class T> __device__ T __shfl_sync(unsigned mask, T var, int src, int width = 32);
template <class T> __device__ T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32);
template <class T> __device__ T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32);
template <class T> __device__ T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32);
template <class T> __device__ T __ldg(const T *p);
__device__ int __popc(unsigned x);
__device__ int __clz(int x);
__device__ int __ffs(int x);
__device__ float __fdividef(float x, float y);
__device__ float __expf(float x);
__device__ float __logf(float x);
__device__ float __sinf(float x);
__device__ float __cosf(float x);
__device__ float __saturatef(float x);
__device__ float rsqrtf(float x);
__device__ double rsqrt(double x);
__device__ void __threadfence_block(void);
