// Reading and writing NumPy .npy files (the format of numpy.save / numpy.load).
//
// Reading accepts format versions 1.0, 2.0 and 3.0 and the dtypes Tessera has:
// '<f4' f32, '<f8' f64, '<f2' f16, '|i1' i8, '|u1' u8, '<i4' i32, '<i8' i64, '|b1' bool
// (any byte-order character: big-endian data is byte-swapped to host order). Fortran-
// ordered arrays are transposed to C order. Everything else is refused with a message
// that names the dtype: object arrays, strings, complex, unsigned 16/32/64-bit, void
// (which is what numpy records for ml_dtypes' bfloat16), structured dtypes.
//
// Writing produces exactly the bytes numpy >= 1.24 writes for a C-ordered little-endian
// array: version 1.0 (2.0 when the header does not fit in 65535 bytes), the header dict
// with sorted keys, padded with spaces to a 64-byte boundary and ending in '\n'.
// bf16 tensors are refused: plain numpy has no bfloat16 dtype and ml_dtypes records it
// as the anonymous '<V2', which no reader can tell from other 2-byte records; cast to
// f32 first.
//
// Input is treated as hostile: a bad magic, an unknown version, a header length beyond
// the file, a malformed header dict (parsed strictly as the Python literal numpy writes,
// with exactly the keys 'descr', 'fortran_order' and 'shape'), negative or oversized
// dimensions, and data shorter or longer than the shape needs all give an error, and
// nothing is allocated before the data length has been checked against the shape.
#ifndef TESSERA_RUNTIME_NPY_H_
#define TESSERA_RUNTIME_NPY_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"

namespace tsr {

// Parses the bytes of a whole .npy file (one array; trailing bytes are an error).
absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes);

// Reads and parses the file; errors are prefixed with the path. A file larger than
// `max_bytes` is refused before it is read (a pipe, once that much has arrived).
inline constexpr int64_t kDefaultMaxNpyBytes = int64_t{16} << 30;
absl::StatusOr<Tensor> ReadNpy(const std::string& path, int64_t max_bytes = kDefaultMaxNpyBytes);

// The .npy bytes of `tensor`; an error for bf16 and invalid tensors.
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);

// Writes atomically (temp file in the same folder + fsync + rename): a failure leaves
// any existing file intact. Errors are prefixed with the path.
absl::Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace tsr

#endif  // TESSERA_RUNTIME_NPY_H_
