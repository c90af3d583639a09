// NumPy .npy reading and writing: the header dict parser, dtype mapping, Fortran-order
// and byte-order conversion, and atomic file writing.
#include "runtime/npy.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "graph/status_macros.h"
#include "platform/file.h"

namespace tsr {

static_assert(std::endian::native == std::endian::little, "npy.cc assumes a little-endian host");

namespace {

constexpr absl::string_view kMagic("\x93NUMPY", 6);
constexpr size_t kAlign = 64;
// numpy >= 1.24 leaves room for the growing axis to reach this many digits in place.
constexpr size_t kGrowthAxisMaxDigits = 21;

absl::Status Malformed(absl::string_view what) { return absl::InvalidArgumentError(absl::StrCat("npy: ", what)); }

// ---- The header dict, a Python literal: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

class HeaderParser {
 public:
  explicit HeaderParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Header> Parse() {
    Header header;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      TSR_ASSIGN_OR_RETURN(std::string key, ParseString("a key"));
      SkipSpace();
      if (!Consume(':')) return Error(absl::StrCat("expected ':' after key '", key, "'"));
      SkipSpace();
      if (key == "descr") {
        if (seen_descr) return Error("key 'descr' appears twice");
        seen_descr = true;
        if (Peek() == '[') return Error("structured (record) dtypes are not supported");
        TSR_ASSIGN_OR_RETURN(header.descr, ParseString("the 'descr' string"));
      } else if (key == "fortran_order") {
        if (seen_fortran) return Error("key 'fortran_order' appears twice");
        seen_fortran = true;
        TSR_ASSIGN_OR_RETURN(header.fortran_order, ParseBool());
      } else if (key == "shape") {
        if (seen_shape) return Error("key 'shape' appears twice");
        seen_shape = true;
        TSR_ASSIGN_OR_RETURN(header.shape, ParseShape());
      } else {
        return Error(absl::StrCat("unexpected key '", key, "' (expected 'descr', 'fortran_order' and 'shape')"));
      }
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (!Consume('}')) return Error("expected ',' or '}' after a value");
      break;
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the closing '}'");
    if (!seen_descr || !seen_fortran || !seen_shape) {
      std::vector<absl::string_view> missing;
      if (!seen_descr) missing.push_back("'descr'");
      if (!seen_fortran) missing.push_back("'fortran_order'");
      if (!seen_shape) missing.push_back("'shape'");
      return Malformed(absl::StrCat("the header dict lacks ", absl::StrJoin(missing, ", ")));
    }
    return header;
  }

 private:
  absl::Status Error(absl::string_view what) const {
    return Malformed(absl::StrCat("malformed header dict at offset ", pos_, ": ", what));
  }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }

  // A quoted string without escapes (numpy never writes any in these fields).
  absl::StatusOr<std::string> ParseString(absl::string_view what) {
    const char quote = Peek();
    if (quote != '\'' && quote != '"') return Error(absl::StrCat("expected ", what, " as a quoted string"));
    ++pos_;
    const size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') return Error("escapes and newlines in strings are not supported");
      ++pos_;
    }
    if (pos_ >= text_.size()) return Error("unterminated string");
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }

  absl::StatusOr<bool> ParseBool() {
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return Error("'fortran_order' must be True or False");
  }

  // A tuple of non-negative integers: (), (3,), (2, 3). Python 2's "3L" is accepted.
  absl::StatusOr<std::vector<int64_t>> ParseShape() {
    std::vector<int64_t> dims;
    if (!Consume('(')) return Error("'shape' must be a tuple such as (2, 3)");
    while (true) {
      SkipSpace();
      if (Consume(')')) {
        if (dims.size() == 1 && !saw_comma_after_last_) return Error("'shape' (n) is not a tuple; write (n,)");
        return dims;
      }
      if (static_cast<int>(dims.size()) >= kMaxRank) {
        return Error(absl::StrCat("'shape' has more than ", kMaxRank, " dimensions"));
      }
      if (Peek() == '-') return Error("'shape' has a negative dimension");
      if (Peek() < '0' || Peek() > '9') return Error("expected a dimension (a non-negative integer)");
      int64_t d = 0;
      while (Peek() >= '0' && Peek() <= '9') {
        const int digit = Peek() - '0';
        if (d > (kMaxElements - digit) / 10) {
          return Error(absl::StrCat("a dimension of 'shape' exceeds the limit of ", kMaxElements, " elements"));
        }
        d = d * 10 + digit;
        ++pos_;
      }
      Consume('L');
      dims.push_back(d);
      SkipSpace();
      saw_comma_after_last_ = Consume(',');
      if (!saw_comma_after_last_ && Peek() != ')') return Error("expected ',' or ')' in 'shape'");
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  bool saw_comma_after_last_ = false;
};

// ---- dtypes

struct Descr {
  DType dtype;
  bool swap;  // big-endian data
};

absl::StatusOr<Descr> ParseDescr(const std::string& descr) {
  constexpr absl::string_view kSupported =
      "supported: '<f4' f32, '<f8' f64, '<f2' f16, '|i1' i8, '|u1' u8, '<i4' i32, '<i8' i64, '|b1' bool";
  auto unsupported = [&](absl::string_view why) {
    return absl::UnimplementedError(absl::StrCat("npy: unsupported dtype '", descr, "': ", why, " (", kSupported, ")"));
  };
  if (descr.size() < 2) return unsupported("not a numpy type string");
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') {
    return unsupported("expected a byte-order character '<', '>', '|' or '=' first");
  }
  const char kind = descr[1];
  const std::string width = descr.substr(2);
  switch (kind) {
    case 'O':
      return unsupported("object arrays hold pickled Python objects");
    case 'V':
      return unsupported("void/record data (ml_dtypes' bfloat16 is saved this way; cast it to float32 first)");
    case 'U':
    case 'S':
    case 'a':
      return unsupported("strings");
    case 'c':
      return unsupported("complex numbers");
    case 'M':
    case 'm':
      return unsupported("dates and times");
    default:
      break;
  }
  std::optional<DType> dtype;
  if (kind == 'f' && width == "4") dtype = DType::kF32;
  if (kind == 'f' && width == "8") dtype = DType::kF64;
  if (kind == 'f' && width == "2") dtype = DType::kF16;
  if (kind == 'i' && width == "1") dtype = DType::kI8;
  if (kind == 'u' && width == "1") dtype = DType::kU8;
  if (kind == 'i' && width == "4") dtype = DType::kI32;
  if (kind == 'i' && width == "8") dtype = DType::kI64;
  if (kind == 'b' && width == "1") dtype = DType::kBool;
  if (!dtype.has_value()) return unsupported("Tessera has no such element type");
  return Descr{*dtype, order == '>' && DTypeSize(*dtype) > 1};
}

absl::string_view DescrOf(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "<f4";
    case DType::kF64:
      return "<f8";
    case DType::kF16:
      return "<f2";
    case DType::kI8:
      return "|i1";
    case DType::kU8:
      return "|u1";
    case DType::kI32:
      return "<i4";
    case DType::kI64:
      return "<i8";
    case DType::kBool:
      return "|b1";
    default:
      return "";
  }
}

uint32_t ReadLittleEndian(absl::string_view bytes) {
  uint32_t v = 0;
  for (size_t i = bytes.size(); i-- > 0;) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

// Copies `src` (in the file's element order) into `out` in C order, converting
// Fortran order and byte order.
void CopyData(absl::string_view src, const Header& header, bool swap, Tensor& out) {
  const size_t elem = DTypeSize(out.dtype());
  char* dst = static_cast<char*>(out.raw_data());
  const int64_t n = out.num_elements();
  const int rank = static_cast<int>(header.shape.size());
  if (!header.fortran_order || rank < 2 || n == 0) {
    std::memcpy(dst, src.data(), src.size());
  } else {
    // Walk the destination in C order; the source offset of index (i0..ik) is
    // sum(i_j * stride_j) with Fortran strides stride_0 = 1, stride_j = stride_{j-1} * d_{j-1}.
    std::vector<int64_t> stride(rank), index(rank, 0);
    int64_t s = 1;
    for (int j = 0; j < rank; ++j) {
      stride[j] = s;
      s *= header.shape[j];
    }
    int64_t offset = 0;
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst + i * elem, src.data() + offset * elem, elem);
      for (int j = rank - 1; j >= 0; --j) {
        offset += stride[j];
        if (++index[j] < header.shape[j]) break;
        offset -= stride[j] * index[j];
        index[j] = 0;
      }
    }
  }
  if (swap) {
    for (int64_t i = 0; i < n; ++i) std::reverse(dst + i * elem, dst + (i + 1) * elem);
  }
  if (out.dtype() == DType::kBool) {
    // Any nonzero byte is True, as in numpy; a bool must hold 0 or 1 in C++.
    for (int64_t i = 0; i < n; ++i) dst[i] = dst[i] != 0 ? 1 : 0;
  }
}

absl::Status PrefixPath(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat(path, ": ", status.message()));
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(absl::string_view bytes) {
  if (bytes.size() < kMagic.size() || bytes.substr(0, kMagic.size()) != kMagic) {
    return Malformed("not a .npy file (it does not start with \"\\x93NUMPY\")");
  }
  if (bytes.size() < 8) return Malformed("truncated before the format version");
  const int major = static_cast<uint8_t>(bytes[6]);
  const int minor = static_cast<uint8_t>(bytes[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    return Malformed(absl::StrCat("unsupported format version ", major, ".", minor, " (supported: 1.0, 2.0, 3.0)"));
  }
  const size_t length_bytes = major == 1 ? 2 : 4;
  const size_t header_start = 8 + length_bytes;
  if (bytes.size() < header_start) return Malformed("truncated before the header length");
  const uint64_t header_length = ReadLittleEndian(bytes.substr(8, length_bytes));
  if (header_length > bytes.size() - header_start) {
    return Malformed(absl::StrCat("the header length ", header_length, " runs past the end of the file (",
                                  bytes.size() - header_start, " bytes follow it)"));
  }
  absl::string_view header_text = bytes.substr(header_start, header_length);
  // Version 1.0 and 2.0 headers are latin-1, 3.0 is UTF-8; the dict we accept is ASCII.
  for (char c : header_text) {
    if (static_cast<unsigned char>(c) >= 0x80) return Malformed("the header dict has non-ASCII characters");
  }
  TSR_ASSIGN_OR_RETURN(Header header, HeaderParser(header_text).Parse());
  TSR_ASSIGN_OR_RETURN(Descr descr, ParseDescr(header.descr));
  const Shape shape(header.shape);
  absl::StatusOr<int64_t> n = shape.NumElements();
  if (!n.ok()) return Malformed(absl::StrCat("shape ", shape.ToString(), ": ", n.status().message()));
  absl::string_view data = bytes.substr(header_start + header_length);
  const uint64_t expected = static_cast<uint64_t>(*n) * DTypeSize(descr.dtype);
  if (data.size() != expected) {
    return Malformed(absl::StrCat(data.size() < expected ? "truncated data: " : "trailing bytes: ", "a ", header.descr,
                                  " array of shape ", shape.ToString(), " needs ", expected, " bytes of data but ",
                                  data.size(), " follow the header"));
  }
  TSR_ASSIGN_OR_RETURN(Tensor tensor, Tensor::Create(descr.dtype, shape));
  CopyData(data, header, descr.swap, tensor);
  return tensor;
}

absl::StatusOr<Tensor> ReadNpy(const std::string& path, int64_t max_bytes) {
  absl::StatusOr<std::string> bytes = ReadFileBounded(path, max_bytes, "the max_bytes argument of ReadNpy");
  if (!bytes.ok()) return PrefixPath(path, bytes.status());
  absl::StatusOr<Tensor> tensor = ParseNpy(*bytes);
  if (!tensor.ok()) return PrefixPath(path, tensor.status());
  return tensor;
}

absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  if (!tensor.valid()) return absl::InvalidArgumentError("npy: cannot write an invalid (empty) tensor");
  if (tensor.dtype() == DType::kBF16) {
    return absl::UnimplementedError(
        "npy: cannot write a bf16 tensor: numpy has no bfloat16 dtype (ml_dtypes saves it as the anonymous '<V2'); "
        "cast it to f32 first");
  }
  const std::vector<int64_t>& dims = tensor.shape().dims();
  std::string shape = "(";
  for (size_t i = 0; i < dims.size(); ++i) absl::StrAppend(&shape, i == 0 ? "" : ", ", dims[i]);
  if (dims.size() == 1) shape += ",";
  shape += ")";
  std::string dict =
      absl::StrCat("{'descr': '", DescrOf(tensor.dtype()), "', 'fortran_order': False, 'shape': ", shape, ", }");
  // As numpy: room for the first axis (C order) to grow to 21 digits without rewriting.
  const size_t axis_digits = dims.empty() ? 0 : absl::StrCat(dims[0]).size();
  if (!dims.empty()) dict.append(kGrowthAxisMaxDigits - std::min(axis_digits, kGrowthAxisMaxDigits), ' ');
  // Header length = dict + padding + '\n', so that magic + version + length + header is
  // a multiple of 64 (numpy pads a full 64 when already aligned).
  uint8_t major = 1;
  size_t prefix = kMagic.size() + 2 + 2;
  size_t padded = dict.size() + 1 + (kAlign - (prefix + dict.size() + 1) % kAlign);
  if (padded > 0xffff) {
    major = 2;
    prefix = kMagic.size() + 2 + 4;
    padded = dict.size() + 1 + (kAlign - (prefix + dict.size() + 1) % kAlign);
  }
  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); ++i) out.push_back(static_cast<char>((padded >> (8 * i)) & 0xff));
  out += dict;
  out.append(padded - dict.size() - 1, ' ');
  out.push_back('\n');
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.num_bytes());
  return out;
}

absl::Status WriteNpy(const std::string& path, const Tensor& tensor) {
  absl::StatusOr<std::string> bytes = SerializeNpy(tensor);
  if (!bytes.ok()) return PrefixPath(path, bytes.status());
  if (absl::Status s = WriteFileAtomically(path, *bytes); !s.ok()) return PrefixPath(path, s);
  return absl::OkStatus();
}

}  // namespace tsr
