/* CUDA C on the CPU, for tests: enough of the CUDA runtime and language for the host and kernel
 * files hexplore generates (`core_compiler/codegen/cuda.py`) to build with a plain C++20
 * compiler (g++ -std=c++20 -x c++, no nvcc headers) and run, so that a host-code bug (a wrong
 * size, a wrong argument, a launch the GPU would refuse) fails a test instead of failing on a GPU.
 * `tests/cuda_cpu/harness.py` builds and runs it. C headers only, one OS thread.
 *
 * - Device memory is host memory: cudaMalloc is malloc of exactly the bytes asked for, filled
 *   with 0xff bytes (NaN as double or float, -1 as an integer): under -fsanitize=address an
 *   access past an allocation, by a kernel or a cudaMemcpy, is an error with a stack, a read of
 *   device memory nothing wrote shows, and device memory never freed is a leak. cudaMemcpy
 *   checks each pointer against the allocations (a device pointer must lie in one, with the
 *   whole range); a launch refuses a pointer argument that is not device memory (a host array
 *   passed to a kernel: the GPU's illegal address).
 * - A launch `kernel<<<grid, block>>>(args)` is rewritten by the harness into
 *   `hx_cpu::launcher<barriers, bound>(kernel, grid, block)(args)`. Blocks run one after another, so
 *   `__shared__` (here `static`) gives each block its shared arrays. The threads of a block run
 *   as a loop when the kernel has no __syncthreads() (`barriers` false), else as fibers
 *   (ucontext, one stack each) that __syncthreads() switches between: every thread of the block
 *   reaches a barrier before any passes it, as on the GPU. A block some of whose threads wait
 *   at a barrier that others have returned without reaching is reported (barrier divergence).
 *   A configuration the GPU refuses (an empty grid, more threads in a block than 1024 or the
 *   kernel's __launch_bounds__, grid.y or grid.z over 65535) runs nothing and sets the error
 *   that cudaGetLastError returns.
 * - blockIdx, threadIdx, blockDim, gridDim are globals, set before each thread runs; atomics
 *   are real atomics. (Threads as OS threads cost gramschmidt at n = 37 155,000 thread starts,
 *   45 s of system time; as fibers, a fraction of a second.)
 */
#pragma once

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

#include <type_traits>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__ static
#define __launch_bounds__(...)  // the harness passes the bound to the launch (`launcher`)

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
using uint3 = dim3;

inline dim3 blockIdx{0, 0, 0};
inline dim3 threadIdx{0, 0, 0};
inline dim3 blockDim;
inline dim3 gridDim;

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorIllegalAddress = 700,
  cudaErrorLaunchOutOfResources = 701,
};
using cudaError = cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

namespace hx_cpu {

/* A device allocation, its address disguised: LeakSanitizer takes any word that points into a
 * block for a reference to it, and device memory the host code never frees must show as a leak. */
struct Allocation {
  uintptr_t disguised;
  size_t bytes;
  const char *start() const { return reinterpret_cast<const char *>(disguised ^ kDisguise); }
  static constexpr uintptr_t kDisguise = 0x5a5a5a5a5a5a5a5aull;
};

struct State {
  Allocation *allocations = nullptr;  // the live device allocations, unordered
  size_t count = 0, capacity = 0;
  cudaError_t last_error = cudaSuccess;
  unsigned long launches = 0, blocks = 0;
};

inline State &state() {
  static State s;
  return s;
}

inline cudaError_t fail(cudaError_t e) {
  state().last_error = e;
  return e;
}

/* Whether [p, p + bytes) lies in one live device allocation. */
inline bool is_device(const void *p, size_t bytes) {
  State &s = state();
  const char *c = static_cast<const char *>(p);
  bool found = false;
  for (size_t k = 0; k < s.count && !found; k++) {
    const char *start = s.allocations[k].start();
    size_t size = s.allocations[k].bytes;
    found = c >= start && c < start + (size ? size : 1) && bytes <= (size_t)(start + size - c);
  }
  return found;
}

}  // namespace hx_cpu

inline const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorLaunchOutOfResources: return "too many resources requested for launch";
  }
  return "unknown error";
}

inline cudaError_t cudaGetLastError() {
  cudaError_t e = hx_cpu::state().last_error;
  hx_cpu::state().last_error = cudaSuccess;
  return e;
}

inline cudaError_t cudaPeekAtLastError() { return hx_cpu::state().last_error; }

inline cudaError_t cudaMalloc(void **p, size_t bytes) {
  hx_cpu::State &s = hx_cpu::state();
  char *m = static_cast<char *>(malloc(bytes ? bytes : 1));
  if (m == nullptr) return hx_cpu::fail(cudaErrorMemoryAllocation);
  memset(m, 0xff, bytes);
  if (s.count == s.capacity) {
    s.capacity = s.capacity ? 2 * s.capacity : 16;
    s.allocations = static_cast<hx_cpu::Allocation *>(realloc(s.allocations, s.capacity * sizeof *s.allocations));
  }
  s.allocations[s.count++] = {reinterpret_cast<uintptr_t>(m) ^ hx_cpu::Allocation::kDisguise, bytes};
  *p = m;
  return cudaSuccess;
}

inline cudaError_t cudaFree(void *p) {
  if (p == nullptr) return cudaSuccess;
  hx_cpu::State &s = hx_cpu::state();
  size_t k = 0;
  while (k < s.count && s.allocations[k].start() != p) k++;
  bool found = k < s.count;
  if (found) s.allocations[k] = s.allocations[--s.count];
  if (!found) return hx_cpu::fail(cudaErrorInvalidDevicePointer);
  free(p);
  return cudaSuccess;
}

inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind) {
  bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  bool dst_ok = kind == cudaMemcpyDefault || dst_device == hx_cpu::is_device(dst, bytes);
  bool src_ok = kind == cudaMemcpyDefault || src_device == hx_cpu::is_device(src, bytes);
  if (!dst_ok || !src_ok) {
    fprintf(stderr, "cuda_cpu: cudaMemcpy(%p, %p, %zu bytes, kind %d): the %s is not %s memory (or the bytes leave "
            "its allocation)\n", dst, src, bytes, (int)kind, dst_ok ? "source" : "destination",
            (dst_ok ? src_device : dst_device) ? "device" : "host");
    return hx_cpu::fail(cudaErrorInvalidValue);
  }
  memcpy(dst, src, bytes);
  return cudaSuccess;
}

inline cudaError_t cudaMemset(void *dst, int value, size_t bytes) {
  if (!hx_cpu::is_device(dst, bytes)) return hx_cpu::fail(cudaErrorInvalidValue);
  memset(dst, value, bytes);
  return cudaSuccess;
}

inline cudaError_t cudaDeviceSynchronize() { return hx_cpu::state().last_error; }
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }

namespace hx_cpu {

/* `cp.async` (<cuda_pipeline.h>) as hexplore's double-buffered kernels use it (`HX_ASYNC_COPY`,
 * core_compiler/codegen/kernel_body.py): a copy reads its source when it is issued and lands in
 * shared memory only at the thread's next `__pipeline_wait_prior(0)`, as late as a GPU may land
 * it, so that a kernel reading the buffer before it waits reads stale data here too. */
struct AsyncCopy {
  void *dst;
  unsigned char bytes[16];
  size_t size;
};

struct AsyncQueue {
  AsyncCopy *copies;
  size_t n, cap;
};

inline AsyncQueue async_queues[1024];  // per thread of the running block

inline AsyncQueue &async_queue() {
  return async_queues[threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)];
}

inline size_t async_pending() {
  size_t n = 0;
  for (const AsyncQueue &q : async_queues) n += q.n;
  return n;
}

/* The threads of a block with barriers, as fibers: `scheduler` resumes each in turn; a thread
 * runs until __syncthreads() or its end, then switches back. */
struct Fiber {
  ucontext_t context;
  void *stack;
  dim3 id;
  bool done, at_barrier;
#if defined(__SANITIZE_ADDRESS__)
  void *fake_stack;
#endif
};

struct Block {
  ucontext_t scheduler;
  Fiber *fibers;
  unsigned current;
  void (*run)(void *call);
  void *call;
#if defined(__SANITIZE_ADDRESS__)
  const void *scheduler_bottom;
  size_t scheduler_size;
#endif
};

inline Block *block_now = nullptr;  // the block whose fibers are running
constexpr size_t kFiberStack = 256 * 1024;

/* Stack `k`, kept for later blocks (mmap: untouched pages cost nothing, and it is no heap
 * block for AddressSanitizer). */
inline void *fiber_stack(unsigned k) {
  static void *stacks[1024];
  if (stacks[k] == nullptr) {
    stacks[k] = mmap(nullptr, kFiberStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks[k] == MAP_FAILED) {
      fprintf(stderr, "cuda_cpu: no memory for a thread's stack\n");
      abort();
    }
  }
  return stacks[k];
}

/* Into the scheduler from the running fiber (`dying`: it returned and is not resumed again). */
inline void to_scheduler(Fiber &f, bool dying) {
  Block *b = block_now;
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_start_switch_fiber(dying ? nullptr : &f.fake_stack, b->scheduler_bottom, b->scheduler_size);
#endif
  if (!dying) {
    swapcontext(&f.context, &b->scheduler);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(f.fake_stack, &b->scheduler_bottom, &b->scheduler_size);
#endif
  }
}

inline void fiber_entry(int k) {
  Block *b = block_now;
  Fiber &f = b->fibers[k];
#if defined(__SANITIZE_ADDRESS__)
  __sanitizer_finish_switch_fiber(nullptr, &b->scheduler_bottom, &b->scheduler_size);
#endif
  b->run(b->call);
  f.done = true;
  to_scheduler(f, true);  // then uc_link resumes the scheduler
}

/* One round: every thread still running runs to its next barrier or its end. */
inline void resume_all(Block &b, unsigned n) {
  for (unsigned k = 0; k < n; k++) {
    Fiber &f = b.fibers[k];
    if (f.done) continue;
    f.at_barrier = false;
    b.current = k;
    threadIdx = f.id;
#if defined(__SANITIZE_ADDRESS__)
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f.stack, kFiberStack);
#endif
    swapcontext(&b.scheduler, &f.context);
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  }
}

template <class C>
inline void run_fibers(dim3 block, C &call) {
  unsigned n = block.x * block.y * block.z;
  Block b{};
  b.fibers = static_cast<Fiber *>(calloc(n, sizeof(Fiber)));
  b.run = [](void *c) { (*static_cast<C *>(c))(); };
  b.call = &call;
  unsigned k = 0;
  for (unsigned tz = 0; tz < block.z; tz++)
    for (unsigned ty = 0; ty < block.y; ty++)
      for (unsigned tx = 0; tx < block.x; tx++, k++) {
        Fiber &f = b.fibers[k];
        f.id = dim3(tx, ty, tz);
        f.stack = fiber_stack(k);
        getcontext(&f.context);
        f.context.uc_stack.ss_sp = f.stack;
        f.context.uc_stack.ss_size = kFiberStack;
        f.context.uc_link = &b.scheduler;
        makecontext(&f.context, reinterpret_cast<void (*)()>(fiber_entry), 1, static_cast<int>(k));
      }
  Block *outer = block_now;
  block_now = &b;
  for (;;) {
    resume_all(b, n);
    unsigned waiting = 0, done = 0;
    for (k = 0; k < n; k++) {
      waiting += b.fibers[k].at_barrier;
      done += b.fibers[k].done;
    }
    if (waiting == 0) break;
    if (done > 0) {
      fprintf(stderr, "cuda_cpu: barrier divergence in block (%u, %u, %u): %u threads wait at __syncthreads() that %u "
              "threads returned without reaching\n", blockIdx.x, blockIdx.y, blockIdx.z, waiting, done);
      abort();
    }
  }
  block_now = outer;
  free(b.fibers);
  if (size_t n = async_pending()) {
    fprintf(stderr, "cuda_cpu: %zu asynchronous copies in block (%u, %u, %u) were never waited for\n", n, blockIdx.x,
            blockIdx.y, blockIdx.z);
    abort();
  }
}

}  // namespace hx_cpu

#define HX_EMULATE_ASYNC 1

inline void __pipeline_memcpy_async(void *dst, const void *src, size_t size) {
  if (size != 4 && size != 8 && size != 16) {
    fprintf(stderr, "cuda_cpu: __pipeline_memcpy_async of %zu bytes (cp.async copies 4, 8 or 16)\n", size);
    abort();
  }
  hx_cpu::AsyncQueue &q = hx_cpu::async_queue();
  if (q.n == q.cap) {
    q.cap = q.cap ? 2 * q.cap : 64;
    q.copies = static_cast<hx_cpu::AsyncCopy *>(realloc(q.copies, q.cap * sizeof(hx_cpu::AsyncCopy)));
  }
  hx_cpu::AsyncCopy &c = q.copies[q.n++];
  c.dst = dst;
  c.size = size;
  memcpy(c.bytes, src, size);
}

inline void __pipeline_commit() {}

inline void __pipeline_wait_prior(size_t prior) {
  if (prior != 0) {
    fprintf(stderr, "cuda_cpu: __pipeline_wait_prior(%zu): only 0 (wait for all) is emulated\n", prior);
    abort();
  }
  hx_cpu::AsyncQueue &q = hx_cpu::async_queue();
  for (size_t k = 0; k < q.n; k++) memcpy(q.copies[k].dst, q.copies[k].bytes, q.copies[k].size);
  q.n = 0;
}

inline void __syncthreads() {
  hx_cpu::Block *b = hx_cpu::block_now;
  if (b == nullptr) {
    fprintf(stderr, "cuda_cpu: __syncthreads() in a kernel launched as a loop (the harness saw no barrier)\n");
    abort();
  }
  hx_cpu::Fiber &f = b->fibers[b->current];
  f.at_barrier = true;
  hx_cpu::to_scheduler(f, false);
}

inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }

/* Compare-and-swap loops on the element (the generic __atomic builtins take double and float). */
template <class T, class F>
inline T hx_atomic_update(T *p, F f) {
  static_assert(std::is_arithmetic_v<T>, "atomics on an arithmetic type");
  T old, next;
  __atomic_load(p, &old, __ATOMIC_RELAXED);
  do {
    next = f(old);
  } while (!__atomic_compare_exchange(p, &old, &next, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return old;
}

template <class T>
inline T atomicAdd(T *p, T v) { return hx_atomic_update(p, [v](T old) { return static_cast<T>(old + v); }); }
template <class T>
inline T atomicSub(T *p, T v) { return hx_atomic_update(p, [v](T old) { return static_cast<T>(old - v); }); }
template <class T>
inline T atomicMax(T *p, T v) { return hx_atomic_update(p, [v](T old) { return old < v ? v : old; }); }
template <class T>
inline T atomicMin(T *p, T v) { return hx_atomic_update(p, [v](T old) { return v < old ? v : old; }); }
template <class T>
inline T atomicExch(T *p, T v) { return hx_atomic_update(p, [v](T) { return v; }); }

template <class T>
inline T __ldg(const T *p) { return *p; }

namespace hx_cpu {

inline bool valid_launch(dim3 g, dim3 b) {
  unsigned long threads = (unsigned long)b.x * b.y * b.z;
  return g.x >= 1 && g.y >= 1 && g.z >= 1 && g.y <= 65535 && g.z <= 65535 && threads >= 1 && threads <= 1024 &&
         b.x <= 1024 && b.y <= 1024 && b.z <= 64;
}

template <class A>
inline bool device_argument(const A &a) {
  if constexpr (std::is_pointer_v<A>) {
    return a == nullptr || is_device(a, 1);
  } else {
    return true;
  }
}

template <bool Barriers, unsigned MaxThreads, class... P>
struct Launch {
  void (*kernel)(P...);
  dim3 grid, block;

  template <class... A>
  void operator()(A... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "a launch passes every kernel parameter");
    state().launches++;
    if (!valid_launch(grid, block)) {
      fprintf(stderr, "cuda_cpu: launch of grid (%u, %u, %u) x block (%u, %u, %u) refused\n", grid.x, grid.y, grid.z,
              block.x, block.y, block.z);
      fail(cudaErrorInvalidConfiguration);
      return;
    }
    if ((unsigned long)block.x * block.y * block.z > MaxThreads) {
      fprintf(stderr, "cuda_cpu: a block of %u x %u x %u threads for a kernel of __launch_bounds__(%u)\n", block.x,
              block.y, block.z, MaxThreads);
      fail(cudaErrorLaunchOutOfResources);
      return;
    }
    if (!(device_argument(args) && ...)) {
      fprintf(stderr, "cuda_cpu: a kernel argument points to host memory (the GPU's illegal address)\n");
      fail(cudaErrorIllegalAddress);
      return;
    }
    auto call = [&]() { kernel(static_cast<P>(args)...); };
    for (unsigned bz = 0; bz < grid.z; bz++)
      for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) run_block(dim3(bx, by, bz), call);
  }

  template <class C>
  void run_block(dim3 id, C &call) const {
    state().blocks++;
    gridDim = grid;
    blockDim = block;
    blockIdx = id;
    if constexpr (Barriers) {
      run_fibers(block, call);
    } else {
      for (unsigned tz = 0; tz < block.z; tz++)
        for (unsigned ty = 0; ty < block.y; ty++)
          for (unsigned tx = 0; tx < block.x; tx++) {
            threadIdx = dim3(tx, ty, tz);
            call();
          }
    }
  }
};

/* `MaxThreads`: the kernel's __launch_bounds__; a larger block fails to launch, as on the GPU. */
template <bool Barriers, unsigned MaxThreads = 1024, class... P>
inline Launch<Barriers, MaxThreads, P...> launcher(void (*kernel)(P...), dim3 grid, dim3 block,
                                                   size_t shared_bytes = 0, void *stream = nullptr) {
  (void)shared_bytes;
  (void)stream;
  return Launch<Barriers, MaxThreads, P...>{kernel, grid, block};
}

}  // namespace hx_cpu
