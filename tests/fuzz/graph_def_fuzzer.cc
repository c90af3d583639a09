// libFuzzer target for ParseGraph (graph/proto/graph_def_io.h), the reader of
// untrusted GraphDef files.
//
// Input: the first byte selects the format (even: binary, odd: text), the rest is the
// GraphDef. Beyond the sanitizers' checks (ASan, UBSan, libFuzzer's -rss_limit_mb and
// -malloc_limit_mb), it asserts that
//   - every rejection carries a message, and
//   - every accepted graph survives a round trip: writing it and reading it back gives
//     a graph that writes the same bytes.
//
// Build (clang only; the root CMakeLists adds the sanitizer flags):
//   CC=clang CXX=clang++ cmake -G Ninja -S . -B build-fuzz -DTESSERA_FUZZ=ON \
//       -DTESSERA_BUILD_TESTS=OFF -DTESSERA_REQUIRE_MLIR=OFF
//   ninja -C build-fuzz graph_def_fuzzer graph_def_fuzz_corpus
// Run (the corpus target writes seeds, a small valid graph in both formats, into
// build-fuzz/tests/fuzz/graph_def_corpus; graph_def.dict holds the text format's words):
//   cd build-fuzz/tests/fuzz && mkdir -p artifacts && ./graph_def_fuzzer graph_def_corpus \
//       -dict=/path/to/tests/fuzz/graph_def.dict -max_total_time=600 -rss_limit_mb=2048 \
//       -artifact_prefix=artifacts/
// Reproduce a crash: ./graph_def_fuzzer artifacts/crash-<hash>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/proto/graph_def_io.h"

namespace {

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "graph_def_fuzzer: %s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const tsr::GraphFormat format = (data[0] & 1) != 0 ? tsr::GraphFormat::kText : tsr::GraphFormat::kBinary;
  const absl::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);

  absl::StatusOr<tsr::Graph> graph = tsr::ParseGraph(bytes, format);
  if (!graph.ok()) {
    if (graph.status().message().empty()) Fail("a rejection without a message", graph.status().ToString());
    return 0;
  }
  absl::StatusOr<std::string> written = tsr::SerializeGraph(*graph, format);
  if (!written.ok()) Fail("an accepted graph does not serialize", written.status().ToString());
  absl::StatusOr<tsr::Graph> reread = tsr::ParseGraph(*written, format);
  if (!reread.ok()) Fail("a written graph does not parse back", reread.status().ToString() + "\n" + *written);
  absl::StatusOr<std::string> rewritten = tsr::SerializeGraph(*reread, format);
  if (!rewritten.ok() || *rewritten != *written) {
    Fail("a graph changed on a round trip", graph->DebugString() + "\nvs\n" + reread->DebugString());
  }
  return 0;
}
