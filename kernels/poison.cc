// FillWithPoison: all-ones bytes (NaN for floats, -1 for integers), true for bool.
#include "kernels/poison.h"

#include <cstring>

namespace tsr {

void FillWithPoison(Tensor& tensor) {
  const size_t bytes = static_cast<size_t>(tensor.num_elements()) * DTypeSize(tensor.dtype());
  if (bytes == 0) return;
  // A bool must hold 0 or 1: any other byte is undefined behaviour to read.
  std::memset(tensor.raw_data(), tensor.dtype() == DType::kBool ? 1 : 0xFF, bytes);
}

}  // namespace tsr
