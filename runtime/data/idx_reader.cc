// IDX parsing (header, big-endian decoding) and the MNIST folder loader.
#include "runtime/data/idx_reader.h"

#include <sys/stat.h>

#include <bit>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"

namespace tsr {

static_assert(std::endian::native == std::endian::little, "idx_reader.cc assumes a little-endian host");

namespace {

absl::Status Malformed(absl::string_view what) { return absl::InvalidArgumentError(absl::StrCat("idx: ", what)); }

struct IdxType {
  absl::string_view name;
  int file_bytes;  // bytes per element in the file
  DType dtype;     // the tensor's type
};

const IdxType* FindIdxType(uint8_t code) {
  static constexpr IdxType kU8{"u8", 1, DType::kU8}, kI8{"i8", 1, DType::kI8}, kI16{"i16", 2, DType::kI32},
      kI32{"i32", 4, DType::kI32}, kF32{"f32", 4, DType::kF32}, kF64{"f64", 8, DType::kF64};
  switch (code) {
    case 0x08:
      return &kU8;
    case 0x09:
      return &kI8;
    case 0x0B:
      return &kI16;
    case 0x0C:
      return &kI32;
    case 0x0D:
      return &kF32;
    case 0x0E:
      return &kF64;
    default:
      return nullptr;
  }
}

uint32_t BigEndian32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}

// Copies `n` big-endian elements of `width` bytes from `src` into `dst` in host order.
template <typename T>
void CopySwapped(const char* src, int64_t n, T* dst) {
  using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  static_assert(sizeof(T) == sizeof(U));
  for (int64_t i = 0; i < n; ++i) {
    U u;
    std::memcpy(&u, src + i * sizeof(U), sizeof(U));
    if constexpr (sizeof(U) == 4) {
      u = __builtin_bswap32(u);
    } else {
      u = __builtin_bswap64(u);
    }
    std::memcpy(dst + i, &u, sizeof(U));
  }
}

absl::Status PrefixPath(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// The first of the usual spellings of an MNIST file that exists in `dir`.
absl::StatusOr<std::string> FindMnistFile(const std::string& dir, absl::string_view split, absl::string_view kind,
                                          absl::string_view idx) {
  std::vector<std::string> tried;
  for (absl::string_view sep : {"-", "."}) {
    for (absl::string_view suffix : {"", ".gz"}) {
      std::string path = absl::StrCat(dir, "/", split, "-", kind, sep, idx, "-ubyte", suffix);
      if (Exists(path)) return path;
      tried.push_back(std::move(path));
    }
  }
  return absl::NotFoundError(absl::StrCat(dir, ": no MNIST ", kind, " file; tried ", absl::StrJoin(tried, ", ")));
}

}  // namespace

absl::StatusOr<Tensor> ParseIdx(absl::string_view bytes) {
  if (bytes.size() < 4) return Malformed(absl::StrCat("truncated: ", bytes.size(), " bytes, shorter than the magic"));
  if (bytes[0] != 0 || bytes[1] != 0) {
    return Malformed(absl::StrCat("not an IDX file: the magic must start with two zero bytes (got 0x",
                                  absl::Hex(static_cast<uint8_t>(bytes[0]), absl::kZeroPad2),
                                  absl::Hex(static_cast<uint8_t>(bytes[1]), absl::kZeroPad2), ")"));
  }
  const IdxType* type = FindIdxType(static_cast<uint8_t>(bytes[2]));
  if (type == nullptr) {
    return Malformed(absl::StrCat("unknown element type 0x", absl::Hex(static_cast<uint8_t>(bytes[2]), absl::kZeroPad2),
                                  " (supported: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64)"));
  }
  const int rank = static_cast<uint8_t>(bytes[3]);
  if (rank == 0) return Malformed("rank 0: a dataset file needs at least the example dimension");
  if (rank > kMaxRank) return Malformed(absl::StrCat("rank ", rank, " exceeds the limit of ", kMaxRank));
  const size_t header = 4 + 4 * static_cast<size_t>(rank);
  if (bytes.size() < header) {
    return Malformed(
        absl::StrCat("truncated header: rank ", rank, " needs ", header, " bytes but the file has ", bytes.size()));
  }
  std::vector<int64_t> dims(rank);
  int64_t n = 1;
  for (int i = 0; i < rank; ++i) {
    dims[i] = BigEndian32(bytes.data() + 4 + 4 * i);
    // Each dim is < 2^32 and n <= kMaxElements = 2^40 here, so n * dim cannot overflow
    // before the comparison (2^72 would): compare by division instead.
    if (dims[i] != 0 && n > kMaxElements / dims[i]) {
      return Malformed(
          absl::StrCat("dimensions ", Shape(dims).ToString(), " exceed the limit of ", kMaxElements, " elements"));
    }
    n *= dims[i];
  }
  const Shape shape(dims);
  const uint64_t expected = static_cast<uint64_t>(n) * static_cast<uint64_t>(type->file_bytes);
  const uint64_t actual = bytes.size() - header;
  if (actual != expected) {
    return Malformed(absl::StrCat(actual < expected ? "truncated data: " : "trailing bytes: ", "a ", type->name,
                                  " array of shape ", shape.ToString(), " needs ", expected, " bytes of data but ",
                                  actual, " follow the header"));
  }
  TSR_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Create(type->dtype, shape));
  const char* src = bytes.data() + header;
  switch (static_cast<uint8_t>(bytes[2])) {
    case 0x08:
    case 0x09:
      std::memcpy(tensor.raw_data(), src, static_cast<size_t>(n));
      break;
    case 0x0B: {
      int32_t* dst = tensor.data<int32_t>();
      for (int64_t i = 0; i < n; ++i) {
        const uint16_t u =
            static_cast<uint16_t>((static_cast<uint8_t>(src[2 * i]) << 8) | static_cast<uint8_t>(src[2 * i + 1]));
        dst[i] = static_cast<int16_t>(u);
      }
      break;
    }
    case 0x0C:
      CopySwapped(src, n, tensor.data<int32_t>());
      break;
    case 0x0D:
      CopySwapped(src, n, tensor.data<float>());
      break;
    case 0x0E:
      CopySwapped(src, n, tensor.data<double>());
      break;
  }
  return tensor;
}

absl::StatusOr<Tensor> ReadIdx(const std::string& path, int64_t max_bytes) {
  TSR_ASSIGN_OR_RETURN(std::string bytes, ReadDataFile(path, max_bytes));
  absl::StatusOr<Tensor> tensor = ParseIdx(bytes);
  if (!tensor.ok()) return PrefixPath(path, tensor.status());
  return tensor;
}

absl::StatusOr<Dataset> LoadMnist(const std::string& dir, MnistSplit split, const MnistOptions& options) {
  const absl::string_view prefix = split == MnistSplit::kTrain ? "train" : "t10k";
  TSR_ASSIGN_OR_RETURN(std::string images_path, FindMnistFile(dir, prefix, "images", "idx3"));
  TSR_ASSIGN_OR_RETURN(std::string labels_path, FindMnistFile(dir, prefix, "labels", "idx1"));
  TSR_ASSIGN_OR_RETURN(Tensor images, ReadIdx(images_path, options.max_bytes));
  TSR_ASSIGN_OR_RETURN(Tensor labels, ReadIdx(labels_path, options.max_bytes));
  if (images.dtype() != DType::kU8 || images.shape().rank() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(images_path, ": MNIST images must be u8 [n, height, width], got ", images.type().ToString()));
  }
  if (labels.dtype() != DType::kU8 || labels.shape().rank() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(labels_path, ": MNIST labels must be u8 [n], got ", labels.type().ToString()));
  }
  const int64_t n = images.shape().dim(0), h = images.shape().dim(1), w = images.shape().dim(2);
  if (labels.shape().dim(0) != n) {
    return absl::InvalidArgumentError(absl::StrCat(images_path, " holds ", n, " images but ", labels_path, " holds ",
                                                   labels.shape().dim(0), " labels"));
  }
  const Shape image_shape = options.flatten ? Shape({n, h * w}) : Shape({n, 1, h, w});
  TSR_ASSIGN_OR_RETURN(Tensor image_f32, Tensor::Create(DType::kF32, image_shape));
  const uint8_t* pixels = images.data<uint8_t>();
  float* out = image_f32.data<float>();
  for (int64_t i = 0; i < images.num_elements(); ++i) out[i] = static_cast<float>(pixels[i]) / 255.0f;
  Tensor labels_i64(DType::kI64, Shape({n}));
  const uint8_t* label_bytes = labels.data<uint8_t>();
  int64_t* label_out = labels_i64.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) label_out[i] = label_bytes[i];
  Batch features;
  features.emplace_back(std::string(kImageFeature), std::move(image_f32));
  features.emplace_back(std::string(kLabelsFeature), std::move(labels_i64));
  return Dataset::Create(std::move(features), dir);
}

}  // namespace tsr
