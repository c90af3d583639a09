// Tests of the .tsrx format: a round trip of an executable with every step kind (a tiled
// function call among them) and attribute type, refusal of every truncation, 2000 seeded byte flips, wrong magic and
// version, bad sections and metadata, and the target checks.
#include "compiler/executable/executable_file.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>

#include "compiler/executable/executable.pb.h"
#include "gmock/gmock.h"
#include "graph/tensor.h"
#include "gtest/gtest.h"
#include "platform/crc32c.h"

namespace tsr {
namespace {

using ::testing::HasSubstr;

std::string Bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.raw_data()), t.num_bytes()); }

ExecutableValue Value(std::string name, DType dtype, Shape shape, ValueLocation where, int64_t offset = -1,
                      int reused_from = -1) {
  ExecutableValue v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = std::move(shape);
  v.location = where;
  v.offset = offset;
  v.reused_from = reused_from;
  return v;
}

// x[2,3] @ w[3,4] -> h (arena) ; h + b -> h2 (in place over h) ; relu(h2) -> y (a compiled
// function); a second output counts the rows of an i64 constant through a kernel.
Executable SampleExecutable() {
  Executable e;
  e.producer = "tessera test";
  e.target = {"x86_64-unknown-linux-gnu", "znver3", "+avx,+avx2,+fma,-avx512f"};
  e.values = {
      Value("x", DType::kF32, Shape{2, 3}, ValueLocation::kInput),
      Value("w", DType::kF32, Shape{3, 4}, ValueLocation::kConstant),
      Value("b", DType::kBF16, Shape{4}, ValueLocation::kConstant),
      Value("h", DType::kF32, Shape{2, 4}, ValueLocation::kArena, 0),
      Value("h2", DType::kF32, Shape{2, 4}, ValueLocation::kArena, 0, 3),
      Value("y", DType::kF32, Shape{2, 4}, ValueLocation::kOutput),
      Value("idx", DType::kI64, Shape{3}, ValueLocation::kConstant),
      Value("n", DType::kI64, Shape{}, ValueLocation::kArena, 64),
      Value("count", DType::kI64, Shape{}, ValueLocation::kOutput),
      Value("empty", DType::kU8, Shape{0, 5}, ValueLocation::kArena, 0),
  };
  e.inputs = {{"x", 0}};
  e.outputs = {{"y", 5}, {"count", 8}};
  e.arena_bytes = 128;
  ExecutableStep matmul;
  matmul.name = "MatMul";
  matmul.inputs = {0, 1};
  matmul.outputs = {3};
  matmul.attrs = {{"i", AttrValue::Int(-7)},
                  {"f", AttrValue::Float(0.25)},
                  {"s", AttrValue::String(std::string("a\0b", 3))},
                  {"flag", AttrValue::Bool(true)},
                  {"ints", AttrValue::Ints({1, -2, 3})},
                  {"floats", AttrValue::Floats({1.5, -2})},
                  {"strings", AttrValue::Strings({"p", ""})},
                  {"tensor", AttrValue::FromTensor(Tensor::FromVector<int32_t>(Shape{2}, {5, 6}))},
                  {"type", AttrValue::Type(DType::kF16)},
                  {"shape", AttrValue::FromShape(Shape{kBatchDim, 3})}};
  ExecutableStep add;
  add.name = "Add";
  add.inputs = {3, 2, -1};
  add.outputs = {4};
  ExecutableStep relu;
  relu.kind = ExecutableStep::Kind::kFunction;
  relu.name = "tsr_fused_relu_0";
  relu.inputs = {4};
  relu.outputs = {5};
  relu.tiles = 2;  // one row of h2 and of y per call
  relu.tile_strides = {16, 16};
  ExecutableStep size;
  size.name = "Size";
  size.inputs = {6};
  size.outputs = {7, 9};
  ExecutableStep copy;
  copy.kind = ExecutableStep::Kind::kFunction;
  copy.name = "tsr_copy_i64";
  copy.inputs = {7};
  copy.outputs = {8};
  e.steps = {matmul, add, relu, size, copy};
  std::vector<float> w(12);
  for (int i = 0; i < 12; ++i) w[i] = 0.5f * static_cast<float>(i) - 1.0f;
  e.constants = {
      {1, Bytes(Tensor::FromVector<float>(Shape{3, 4}, w))},
      {2, Bytes(Tensor::FromVector<BFloat16>(Shape{4}, {BFloat16::FromFloat(1.0f), BFloat16::FromFloat(-2.0f),
                                                        BFloat16::FromFloat(0.0f), BFloat16::FromFloat(3.5f)}))},
      {6, Bytes(Tensor::FromVector<int64_t>(Shape{3}, {1, 0, -9}))}};
  std::string object(
      "\x7f"
      "ELF",
      4);
  for (int i = 0; i < 300; ++i) object.push_back(static_cast<char>(i * 7));
  e.object_files = {{"fused.o", object}, {"copy.o", std::string(5, '\0')}};
  return e;
}

std::string Serialized(const Executable& e) {
  absl::StatusOr<std::string> bytes = SerializeExecutable(e);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *bytes : std::string();
}

uint64_t U64At(const std::string& s, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[at + i])) << (8 * i);
  return v;
}
void PutU32(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}
void PutU64(std::string& s, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// The file with its metadata changed by `edit`, checksums and sizes made right again:
// what a buggy or hostile writer could produce.
std::string WithMetadata(const std::string& file,
                         const std::function<void(tessera::executable::ExecutableProto&)>& edit) {
  const uint64_t offset = U64At(file, 24);
  tessera::executable::ExecutableProto meta;
  EXPECT_TRUE(meta.ParseFromString(file.substr(offset)));
  edit(meta);
  std::string out = file.substr(0, offset);
  const std::string m = meta.SerializeAsString();
  out += m;
  PutU64(out, 16, out.size());
  PutU64(out, 32, m.size());
  PutU32(out, 40, crc32c::Value(m));
  PutU32(out, 60, crc32c::Value(out.data(), 60));
  return out;
}

std::string ParseError(const std::string& bytes) {
  absl::StatusOr<Executable> e = ParseExecutable(bytes, "model.tsrx");
  EXPECT_FALSE(e.ok());
  return e.ok() ? std::string() : std::string(e.status().message());
}

TEST(ExecutableFileTest, RoundTripIsExact) {
  const Executable e = SampleExecutable();
  ASSERT_TRUE(ValidateExecutable(e).ok()) << ValidateExecutable(e);
  const std::string bytes = Serialized(e);
  ASSERT_EQ(bytes.substr(0, 4), "TSRX");
  absl::StatusOr<Executable> back = ParseExecutable(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, e);
  for (const ExecutableConstant& c : e.constants) {
    // Each constant lies in the file at a multiple of 64, ready to be mapped.
    const size_t at = bytes.find(c.bytes);
    ASSERT_NE(at, std::string::npos);
    EXPECT_EQ(at % 64, 0u);
  }
  // Serialization is deterministic.
  EXPECT_EQ(Serialized(*back), bytes);

  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/executable_file_test.tsrx";
  ASSERT_TRUE(WriteExecutable(e, path).ok());
  absl::StatusOr<Executable> read = ReadExecutable(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, e);
  std::remove(path.c_str());
}

TEST(ExecutableFileTest, EveryTruncationIsRefused) {
  const std::string bytes = Serialized(SampleExecutable());
  ASSERT_GT(bytes.size(), 500u);
  for (size_t len = 0; len < bytes.size(); ++len) {
    SCOPED_TRACE(::testing::Message() << "length " << len);
    const std::string message = ParseError(bytes.substr(0, len));
    EXPECT_THAT(message, HasSubstr("model.tsrx"));
    EXPECT_THAT(message, HasSubstr("truncated"));
  }
  EXPECT_THAT(ParseError(bytes + "x"), HasSubstr("trailing bytes"));
}

TEST(ExecutableFileTest, RandomByteFlipsAreRefusedOrHarmless) {
  const Executable e = SampleExecutable();
  const std::string bytes = Serialized(e);
  int refused = 0;
  int harmless = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937_64 rng(seed);
    std::string bad = bytes;
    const size_t at = rng() % bad.size();
    bad[at] = static_cast<char>(bad[at] ^ (1 + rng() % 255));
    absl::StatusOr<Executable> back = ParseExecutable(bad, "model.tsrx");
    if (back.ok()) {
      EXPECT_EQ(*back, e) << "byte " << at;
      ++harmless;
    } else {
      EXPECT_THAT(back.status().message(), HasSubstr("model.tsrx"));
      ++refused;
    }
  }
  std::printf("2000 byte flips: %d refused, %d in padding and harmless\n", refused, harmless);
  EXPECT_GT(refused, 1500);
}

TEST(ExecutableFileTest, HeaderErrorsSayWhatIsWrong) {
  const std::string bytes = Serialized(SampleExecutable());
  std::string magic = bytes;
  magic[0] = 'X';
  EXPECT_THAT(ParseError(magic), HasSubstr("does not start with \"TSRX\""));
  std::string version = bytes;
  PutU32(version, 4, 7);
  const std::string message = ParseError(version);
  EXPECT_THAT(message, HasSubstr("format version 7"));
  EXPECT_THAT(message, HasSubstr("reads version 1"));
  std::string header = bytes;
  header[20] ^= 1;  // the file size, under the header checksum
  EXPECT_THAT(ParseError(header), HasSubstr("header: checksum mismatch"));
  std::string metadata = bytes;
  metadata[metadata.size() - 3] ^= 1;
  EXPECT_THAT(ParseError(metadata), HasSubstr("metadata: checksum mismatch"));
  std::string section = bytes;
  section[bytes.find(SampleExecutable().object_files[0].bytes) + 10] ^= 1;
  EXPECT_THAT(ParseError(section), HasSubstr("section 3: checksum mismatch"));
  // A header claiming metadata far beyond the file.
  std::string absurd = bytes;
  PutU64(absurd, 32, uint64_t{1} << 62);
  PutU32(absurd, 60, crc32c::Value(absurd.data(), 60));
  EXPECT_THAT(ParseError(absurd), HasSubstr("outside the file"));
}

TEST(ExecutableFileTest, BadSectionsAreRefused) {
  const std::string bytes = Serialized(SampleExecutable());
  using Meta = tessera::executable::ExecutableProto;
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_sections(0)->set_size(uint64_t{1} << 60); })),
              HasSubstr("section 0: bytes"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_sections(1)->set_offset(65); })),
              HasSubstr("not a multiple of 64"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { *m.mutable_sections(1) = m.sections(0); })),
              HasSubstr("overlap"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_constants(1)->set_section(9); })),
              HasSubstr("constant 1: section 9"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_constants(1)->set_section(0); })),
              HasSubstr("used by"));
}

TEST(ExecutableFileTest, InconsistentMetadataIsRefused) {
  const std::string bytes = Serialized(SampleExecutable());
  using Meta = tessera::executable::ExecutableProto;
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(1)->set_inputs(0, 99); })),
              HasSubstr("step 1 (Add): input value 99"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_values(3)->add_dims(2); })),
              HasSubstr("records 32 bytes"));
  EXPECT_THAT(ParseError(WithMetadata(bytes,
                                      [](Meta& m) {
                                        m.mutable_values(2)->set_dtype(tessera::proto::DT_F32);
                                        m.mutable_values(2)->set_size_bytes(16);
                                      })),
              HasSubstr("has 8 bytes; its shape needs 16"));
  // h2 no longer takes over h's buffer, yet sits on it while h is read.
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_values(4)->set_reused_from_plus_one(0); })),
              HasSubstr("buffer plan"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_values(7)->set_offset(128); })),
              HasSubstr("inside the arena"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_values(7)->set_offset(8); })),
              HasSubstr("aligned"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps()->SwapElements(0, 1); })),
              HasSubstr("before any step writes it"));
  EXPECT_THAT(ParseError(WithMetadata(
                  bytes, [](Meta& m) { m.mutable_values(0)->set_dtype(static_cast<tessera::proto::DataType>(42)); })),
              HasSubstr("value 0 ('x')"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_outputs(0)->set_value(0); })),
              HasSubstr("not an output"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(4)->add_outputs(5); })),
              HasSubstr("written by both"));
  EXPECT_THAT(ParseError(WithMetadata(bytes,
                                      [](Meta& m) {
                                        m.mutable_steps(0)->mutable_attrs(0)->mutable_value()->set_type(
                                            static_cast<tessera::proto::DataType>(77));
                                      })),
              HasSubstr("attribute"));
  EXPECT_THAT(
      ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_values(1)->mutable_dims()->Add(int64_t{1} << 41); })),
      HasSubstr("value 1 ('w')"));
  // Tiled calls: blocks that do not cut an argument exactly, or an output not at all; strides
  // for the wrong number of arguments; tiles on a kernel step or below 1.
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(2)->set_tiles(3); })),
              HasSubstr("tile stride 16 for 3 tiles"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(2)->set_tile_strides(1, 0); })),
              HasSubstr("an output's blocks must cover it exactly"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(2)->set_tile_strides(0, 8); })),
              HasSubstr("it must be 0 or cut it exactly"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(2)->clear_tile_strides(); })),
              HasSubstr("0 tile strides for 2 arguments"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(0)->set_tiles(2); })),
              HasSubstr("only a function call is tiled"));
  EXPECT_THAT(ParseError(WithMetadata(bytes, [](Meta& m) { m.mutable_steps(2)->set_tiles(-5); })),
              HasSubstr("has -5 tiles"));
  EXPECT_THAT(ParseError(WithMetadata(bytes,
                                      [](Meta& m) {
                                        m.mutable_steps(2)->clear_outputs();
                                        m.mutable_steps(2)->mutable_tile_strides()->RemoveLast();
                                      })),
              HasSubstr("is tiled but writes nothing"));
  // An output no step writes.
  Executable e = SampleExecutable();
  e.steps.pop_back();
  EXPECT_THAT(SerializeExecutable(e).status().message(), HasSubstr("output but no step writes it"));
  // More arguments than the loader can pass, and the thread count out of range.
  e = SampleExecutable();
  for (ExecutableStep& step : e.steps) {
    if (step.kind != ExecutableStep::Kind::kFunction) continue;
    while (step.inputs.size() + step.outputs.size() <= static_cast<size_t>(kMaxFunctionArguments)) {
      step.inputs.push_back(step.inputs.front());
    }
  }
  EXPECT_THAT(ValidateExecutable(e).message(), HasSubstr("arguments; at most 64 are supported"));
  e = SampleExecutable();
  e.threads = -2;
  EXPECT_THAT(ValidateExecutable(e).message(), HasSubstr("threads is -2"));
}

TEST(ExecutableFileTest, ForeignTargetsAreRefused) {
  const ExecutableTarget target = SampleExecutable().target;
  EXPECT_TRUE(CheckTargetRuns(target, {"x86_64-pc-linux-gnu", "znver4", "+avx,+avx2,+fma,+avx512f,+sse4.2"}).ok());
  absl::Status s = CheckTargetRuns(target, {"x86_64-unknown-linux-gnu", "haswell-ish", "+avx,-avx2,+sse4.2"});
  EXPECT_THAT(s.message(), HasSubstr("lacks: +avx2,+fma"));
  EXPECT_THAT(s.message(), HasSubstr("znver3"));
  EXPECT_THAT(CheckTargetRuns(target, {"aarch64-unknown-linux-gnu", "neoverse-v1", "+neon"}).message(),
              HasSubstr("compiled for x86_64-unknown-linux-gnu"));
  EXPECT_FALSE(CheckTargetRuns(target, {"x86_64-apple-darwin", "znver3", "+avx,+avx2,+fma"}).ok());

  EXPECT_TRUE(CheckTargetIsa(target, CpuIsa::kAvx2).ok());
  EXPECT_THAT(CheckTargetIsa(target, CpuIsa::kScalar).message(), HasSubstr("+avx,+avx2,+fma"));
  EXPECT_THAT(CheckTargetIsa({"x86_64-unknown-linux-gnu", "skx", "+avx512f,+avx2"}, CpuIsa::kAvx2).message(),
              HasSubstr("+avx512f"));

  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/executable_file_test_foreign.tsrx";
  ASSERT_TRUE(WriteExecutable(SampleExecutable(), path).ok());
  const HostTarget arm{"aarch64-unknown-linux-gnu", "neoverse-v1", "+neon"};
  absl::StatusOr<Executable> read = ReadExecutable(path, {.host = &arm});
  EXPECT_THAT(read.status().message(), HasSubstr(path + ": target: "));
  std::remove(path.c_str());
}

TEST(ExecutableFileTest, FuzzEntryPointSurvivesGarbage) {
  std::mt19937_64 rng(7);
  const std::string bytes = Serialized(SampleExecutable());
  for (int i = 0; i < 200; ++i) {
    std::string junk = bytes.substr(0, rng() % bytes.size());
    for (char& c : junk) {
      if (rng() % 16 == 0) c = static_cast<char>(rng());
    }
    ParseExecutableForFuzzing(reinterpret_cast<const uint8_t*>(junk.data()), junk.size());
  }
}

}  // namespace
}  // namespace tsr
