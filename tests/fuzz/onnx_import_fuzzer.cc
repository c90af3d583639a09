// libFuzzer target for ImportOnnxModelFromBytes (graph/onnx/onnx_importer.h), the
// reader of untrusted ONNX models.
//
// Input: a serialized ModelProto. The model is imported without a folder, so external
// data is refused (the folder confinement has its own tests). Beyond the sanitizers'
// checks (ASan, UBSan, libFuzzer's -rss_limit_mb and -malloc_limit_mb; the tensor limit
// below keeps legitimate allocations under them), it asserts that every rejection
// carries a message and every accepted graph verifies.
//
// Build (clang only; the root CMakeLists adds the sanitizer flags):
//   CC=clang CXX=clang++ cmake -G Ninja -S . -B build-fuzz -DTESSERA_FUZZ=ON \
//       -DTESSERA_BUILD_TESTS=OFF -DTESSERA_REQUIRE_MLIR=OFF
//   ninja -C build-fuzz onnx_import_fuzzer onnx_import_fuzz_corpus
// Run (the corpus target writes small valid models into build-fuzz/tests/fuzz/onnx_corpus):
//   cd build-fuzz/tests/fuzz && mkdir -p artifacts && ./onnx_import_fuzzer onnx_corpus \
//       -max_total_time=600 -rss_limit_mb=2048 -artifact_prefix=artifacts/
// Reproduce a crash: ./onnx_import_fuzzer artifacts/crash-<hash>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/onnx/onnx_importer.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "onnx_import_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tsr::OnnxImportOptions options;
  options.max_tensor_bytes = int64_t{64} << 20;
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tsr::ImportedModel> model = tsr::ImportOnnxModelFromBytes(bytes, options);
  if (!model.ok()) {
    if (model.status().message().empty()) Fail("a rejection without a message", model.status().ToString());
    return 0;
  }
  if (absl::Status s = model->graph.Verify(); !s.ok()) Fail("an accepted graph does not verify", s.ToString());
  return 0;
}
