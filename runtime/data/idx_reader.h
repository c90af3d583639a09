// The IDX format of MNIST and its relatives (Fashion-MNIST, KMNIST, EMNIST), plain or
// gzip-compressed, and a loader for an MNIST-style folder.
//
// An IDX file is: two zero bytes, an element-type byte (0x08 u8, 0x09 i8, 0x0B i16,
// 0x0C i32, 0x0D f32, 0x0E f64), a rank byte, `rank` big-endian u32 dimensions, then
// the elements in C order, big-endian. Tessera has no 16-bit integer type, so i16 data
// is widened to i32; the rest keep their type (u8, i8, i32, f32, f64).
//
// Input is hostile: a wrong magic, an unknown type, rank 0 or above kMaxRank, a
// dimension product that overflows or exceeds kMaxElements, and data shorter or longer
// than the dimensions need are errors; nothing is allocated for the tensor before the
// data length has been checked against the dimensions.
#ifndef TESSERA_RUNTIME_DATA_IDX_READER_H_
#define TESSERA_RUNTIME_DATA_IDX_READER_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "graph/tensor.h"
#include "runtime/data/data_file.h"
#include "runtime/data/dataset.h"

namespace tsr {

// Parses the (decompressed) bytes of one IDX file. Errors do not name a file.
absl::StatusOr<Tensor> ParseIdx(absl::string_view bytes);

// Reads `path` (gzip or plain, detected by content) and parses it; errors start with
// the path. `max_bytes` bounds the file after decompression.
absl::StatusOr<Tensor> ReadIdx(const std::string& path, int64_t max_bytes = kDefaultMaxDataBytes);

enum class MnistSplit { kTrain, kTest };

struct MnistOptions {
  // Images as [n, h*w] instead of [n, 1, h, w].
  bool flatten = false;
  int64_t max_bytes = kDefaultMaxDataBytes;
};

// Loads `dir`/{train,t10k}-{images-idx3,labels-idx1}-ubyte, each with or without a
// ".gz" suffix (the ".idx3-ubyte" spelling some mirrors use is accepted too), into a
// Dataset with "image" f32 [n, 1, h, w] (or [n, h*w]) scaled to [0, 1] and "labels"
// i64 [n]. The images must be u8 [n, h, w] and the labels u8 [n] with the same n.
absl::StatusOr<Dataset> LoadMnist(const std::string& dir, MnistSplit split, const MnistOptions& options = {});

}  // namespace tsr

#endif  // TESSERA_RUNTIME_DATA_IDX_READER_H_
