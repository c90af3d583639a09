// Reading the external data of ONNX tensors (bytes stored in a file beside the model)
// without ever reading outside the model's folder.
//
// A location is accepted only when it is a relative path without "." or ".." segments,
// backslashes or NUL bytes, and the file it names — after every symlink is resolved,
// checked again on the opened descriptor so that a swapped symlink cannot slip through —
// is a regular file inside the model's folder. Offset and length are checked against
// the file's size before anything is read, and the length against the caller's limit.
#ifndef TESSERA_GRAPH_ONNX_ONNX_EXTERNAL_DATA_H_
#define TESSERA_GRAPH_ONNX_ONNX_EXTERNAL_DATA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tsr {

struct ExternalDataRef {
  std::string location;           // relative to the model's folder
  int64_t offset = 0;             // bytes into the file
  std::optional<int64_t> length;  // absent: to the end of the file
};

// Reads the bytes `ref` names from a file inside `model_dir`. `expected_bytes` is the
// size the tensor's dims and type require: a length (given or implied) that differs is
// an error, found before reading; so is `expected_bytes` above `max_bytes`. Errors name
// `tensor_name` and the location.
absl::StatusOr<std::string> ReadExternalData(absl::string_view model_dir, const ExternalDataRef& ref,
                                             int64_t expected_bytes, int64_t max_bytes, absl::string_view tensor_name);

}  // namespace tsr

#endif  // TESSERA_GRAPH_ONNX_ONNX_EXTERNAL_DATA_H_
