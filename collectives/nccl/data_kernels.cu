// SPDX-License-Identifier: Apache-2.0
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <string>

#include "collectives/nccl/data_kernels.hpp"
#include "collectives/pattern.hpp"
#include "gpu/cuda_check.hpp"

namespace fabricbench::collectives {
namespace {

template <class T>
__device__ T from_code(double value) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half(static_cast<float>(value));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16(static_cast<float>(value));
  else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>)
    return T(static_cast<float>(value));
  else
    return static_cast<T>(value);
}

template <class T>
__device__ double to_double(T value) {
  if constexpr (std::is_same_v<T, __half>)
    return __half2float(value);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(value);
  else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>)
    return static_cast<float>(value);
  else
    return static_cast<double>(value);
}

template <class T>
__global__ void fill_kernel(DataLayout l, bool negative, T* out, std::uint64_t first, std::uint64_t elements) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < elements;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::int64_t code = input_code(l.op, negative, l.rank, first + i);
    if constexpr (std::is_integral_v<T>)
      out[i] = static_cast<T>(code);
    else
      out[i] = from_code<T>(static_cast<double>(code));
  }
}

template <class T>
__global__ void check_kernel(DataLayout l, bool negative, const T* out, std::uint64_t elements, double roundoff,
                             double absolute_tolerance, unsigned long long* wrong) {
  unsigned long long local = 0;
  for (std::uint64_t i = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; i < elements;
       i += std::uint64_t(gridDim.x) * blockDim.x) {
    const Source s = source_of(l.source, i, l.rank, l.ranks, l.root, l.count);
    const std::int64_t code =
        s.reduced() ? reduced_code(l.op, negative, l.ranks, s.index) : input_code(l.op, negative, s.rank, s.index);
    const bool average = l.op == ReduceOp::kAvg && s.reduced();
    if constexpr (std::is_integral_v<T>) {
      // NCCL averages integers by dividing the (wrapped) sum by the rank count.
      T expected = static_cast<T>(code);
      if (average) expected = static_cast<T>(expected / static_cast<T>(l.ranks));
      local += out[i] != expected;
    } else {
      double exact = static_cast<double>(code);
      if (average) exact /= l.ranks;
      const double error = fabs(to_double(out[i]) - exact);
      local += !(error <= roundoff * fabs(exact) + absolute_tolerance);
    }
  }
  if (local) atomicAdd(wrong, local);
}

template <class T>
__global__ void corrupt_kernel(T* out) {
  out[0] = from_code<T>(to_double(out[0]) + 37.0);
}

template <class F>
void with_device_type(DataType dtype, F&& f) {
  switch (dtype) {
    case DataType::kInt8: return f(std::int8_t{});
    case DataType::kUint8: return f(std::uint8_t{});
    case DataType::kInt32: return f(std::int32_t{});
    case DataType::kUint32: return f(std::uint32_t{});
    case DataType::kInt64: return f(std::int64_t{});
    case DataType::kUint64: return f(std::uint64_t{});
    case DataType::kFloat16: return f(__half{});
    case DataType::kBfloat16: return f(__nv_bfloat16{});
    case DataType::kFloat32: return f(float{});
    case DataType::kFloat64: return f(double{});
    case DataType::kFloat8e4m3: return f(__nv_fp8_e4m3{});
    case DataType::kFloat8e5m2: return f(__nv_fp8_e5m2{});
  }
}

// The GPU's global timer (ns), which the hold spins on.
__device__ unsigned long long global_nanoseconds() {
  unsigned long long now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  return now;
}

__global__ void hold_kernel(unsigned long long nanoseconds) {
  const unsigned long long start = global_nanoseconds();
  while (global_nanoseconds() - start < nanoseconds) {
  }
}

// Enough blocks to fill the GPU; the grid-stride loops cover any size.
constexpr unsigned kThreads = 256;
unsigned blocks_for(std::uint64_t elements) {
  const std::uint64_t wanted = (elements + kThreads - 1) / kThreads;
  return static_cast<unsigned>(wanted < 4096 ? (wanted ? wanted : 1) : 4096);
}

}  // namespace

void fill_input_device(const DataLayout& l, void* out, std::uint64_t first, std::uint64_t elements,
                       cudaStream_t stream) {
  if (elements == 0) return;
  with_device_type(l.dtype, [&](auto zero) {
    using T = decltype(zero);
    fill_kernel<T><<<blocks_for(elements), kThreads, 0, stream>>>(l, allows_negative(l.dtype), static_cast<T*>(out),
                                                                  first, elements);
  });
  FB_CUDA_CHECK(cudaGetLastError());
}

void count_wrong_device(const DataLayout& l, const void* output, std::uint64_t elements,
                        unsigned long long* wrong_counter, cudaStream_t stream) {
  if (elements == 0) return;
  const double absolute = tolerance(l.dtype, l.op, l.ranks, 0);
  const double roundoff = tolerance(l.dtype, l.op, l.ranks, 1) - absolute;
  with_device_type(l.dtype, [&](auto zero) {
    using T = decltype(zero);
    check_kernel<T><<<blocks_for(elements), kThreads, 0, stream>>>(
        l, allows_negative(l.dtype), static_cast<const T*>(output), elements, roundoff, absolute, wrong_counter);
  });
  FB_CUDA_CHECK(cudaGetLastError());
}

void corrupt_first_device(DataType dtype, void* output, cudaStream_t stream) {
  with_device_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    corrupt_kernel<T><<<1, 1, 0, stream>>>(static_cast<T*>(output));
  });
  FB_CUDA_CHECK(cudaGetLastError());
}

void hold_stream_device(double seconds, cudaStream_t stream) {
  if (!(seconds > 0)) return;
  hold_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
  FB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace fabricbench::collectives
