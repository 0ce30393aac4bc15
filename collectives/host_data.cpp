// SPDX-License-Identifier: Apache-2.0
#include "collectives/host_data.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "collectives/pattern.hpp"
#include "common/error.hpp"

namespace fabricbench::collectives {
bool allows_negative(DataType dtype) { return !is_integer(dtype) || is_signed_integer(dtype); }

double tolerance(DataType dtype, ReduceOp op, int ranks, double exact_magnitude) {
  if (is_integer(dtype)) return 0;
  const double u = unit_roundoff(dtype);
  // Rounding of the result into the type, plus recursive-summation error (n-1)·u·Σ|x|, bounded
  // with Σ|x| <= n·max|x|; min/max/prod of our codes are exact.
  const double n = ranks;
  const double accumulation =
      (op == ReduceOp::kSum || op == ReduceOp::kAvg) ? (n + 1) * n * max_input_magnitude(op) : 0;
  return u * (exact_magnitude + accumulation);
}

void fill_input_host(const DataLayout& l, void* out, std::uint64_t first, std::uint64_t elements) {
  with_host_type(l.dtype, [&](auto zero) {
    using T = decltype(zero);
    T* data = static_cast<T*>(out);
    const bool negative = allows_negative(l.dtype);
    for (std::uint64_t i = 0; i < elements; ++i)
      data[i] = static_cast<T>(input_code(l.op, negative, l.rank, first + i));
  });
}

std::uint64_t count_wrong_host(const DataLayout& l, const void* output, std::uint64_t elements) {
  return with_host_type(l.dtype, [&](auto zero) -> std::uint64_t {
    using T = decltype(zero);
    const T* data = static_cast<const T*>(output);
    const bool negative = allows_negative(l.dtype);
    std::uint64_t wrong = 0;
    for (std::uint64_t i = 0; i < elements; ++i) {
      const Source s = source_of(l.source, i, l.rank, l.ranks, l.root, l.count);
      const std::int64_t code =
          s.reduced() ? reduced_code(l.op, negative, l.ranks, s.index) : input_code(l.op, negative, s.rank, s.index);
      if constexpr (std::is_integral_v<T>) {
        wrong += data[i] != static_cast<T>(code);  // modular, like the wrapped integer reduction
      } else {
        double exact = static_cast<double>(code);
        if (l.op == ReduceOp::kAvg && s.reduced()) exact /= l.ranks;
        const double error = std::fabs(static_cast<double>(data[i]) - exact);
        wrong += !(error <= tolerance(l.dtype, l.op, l.ranks, std::fabs(exact)));
      }
    }
    return wrong;
  });
}

void corrupt_first_host(DataType dtype, void* output) {
  with_host_type(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* data = static_cast<T*>(output);
    data[0] = static_cast<T>(data[0] + T{37});
  });
}

}  // namespace fabricbench::collectives
