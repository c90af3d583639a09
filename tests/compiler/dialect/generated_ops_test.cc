// TsrGeneratedOps.td (checked in) must be what tsr-ods-gen prints from the op registry now:
// a registry change without regenerating fails here, with the command to run.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/dialect/tsr_ods_generator.h"
#include "graph/op_registry.h"
#include "gtest/gtest.h"

namespace tsr {
namespace {

TEST(TsrGeneratedOps, CheckedInFileMatchesRegistry) {
  // CTest sets TESSERA_SOURCE_DIR; `bazel test` runs in the workspace's runfiles, which
  // hold the file (a data dependency in tests/BUILD.bazel).
  const char* source = std::getenv("TESSERA_SOURCE_DIR");
  const std::string path = source != nullptr ? std::string(source) + "/compiler/dialect/TsrGeneratedOps.td"
                                             : "compiler/dialect/TsrGeneratedOps.td";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream checked_in;
  checked_in << in.rdbuf();
  const std::string generated = GenerateTsrOds(OpRegistry::Global());
  EXPECT_TRUE(checked_in.str() == generated)
      << path << " is out of date with the op registry; regenerate it:\n"
      << "  ninja -C build tsr-ods-gen && build/bin/tsr-ods-gen > compiler/dialect/TsrGeneratedOps.td";
}

TEST(TsrGeneratedOps, OneOpPerRegisteredOp) {
  const std::string generated = GenerateTsrOds(OpRegistry::Global());
  int defs = 0;
  for (size_t pos = generated.find("\ndef Tsr_"); pos != std::string::npos;
       pos = generated.find("\ndef Tsr_", pos + 1)) {
    ++defs;
  }
  // Constant is written by hand in TsrOps.td.
  EXPECT_EQ(defs + 1, OpRegistry::Global().size());
  EXPECT_NE(generated.find("def Tsr_MatMulOp : Tsr_Op<\"MatMul\", [Tsr_RegistryVerified, Pure]>"), std::string::npos);
  EXPECT_EQ(generated.find("def Tsr_ConstantOp"), std::string::npos);
}

}  // namespace
}  // namespace tsr
