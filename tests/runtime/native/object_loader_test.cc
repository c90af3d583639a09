// Tests of runtime/native: objects built here from LLVM IR (no MLIR) are loaded, linked
// against the process and called; unresolved symbols, foreign CPUs and malformed bytes
// (truncations, random corruption) are refused with a Status, never a crash.
#include "runtime/native/object_loader.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "runtime/native/target_description.h"

namespace tsr {
namespace {

// LLVM IR text -> relocatable object bytes for `target`.
std::vector<uint8_t> CompileIr(const std::string& ir, const TargetDescription& target) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext context;
  llvm::SMDiagnostic diagnostic;
  std::unique_ptr<llvm::Module> module = llvm::parseIR(llvm::MemoryBufferRef(ir, "test.ll"), diagnostic, context);
  EXPECT_NE(module, nullptr) << diagnostic.getMessage().str();
  if (module == nullptr) return {};
  std::string error;
  const llvm::Target* llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  EXPECT_NE(llvm_target, nullptr) << error;
  std::unique_ptr<llvm::TargetMachine> machine(llvm_target->createTargetMachine(
      target.triple, target.cpu, target.features, llvm::TargetOptions(), llvm::Reloc::PIC_));
  module->setDataLayout(machine->createDataLayout());
  module->setTargetTriple(target.triple);
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager pm;
  EXPECT_FALSE(machine->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile));
  pm.run(*module);
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

// y[i] = sqrtf(x[i]) + offset, for i < n: calls libm and reads a global.
constexpr char kSqrtIr[] = R"(
@offset = global float 1.0
declare float @sqrtf(float)
define void @sqrt_plus(ptr %x, ptr %y, i64 %n) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %px = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %px
  %s = call float @sqrtf(float %v)
  %o = load float, ptr @offset
  %r = fadd float %s, %o
  %py = getelementptr float, ptr %y, i64 %i
  store float %r, ptr %py
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
)";

constexpr char kMissingSymbolIr[] = R"(
declare void @tessera_symbol_nobody_defines(ptr)
define void @calls_missing(ptr %p) {
  call void @tessera_symbol_nobody_defines(ptr %p)
  ret void
}
)";

TEST(ObjectLoaderTest, LoadsLinksAgainstLibmAndCalls) {
  const TargetDescription host = HostTargetDescription();
  const std::vector<uint8_t> bytes = CompileIr(kSqrtIr, host);
  auto module = NativeModule::Load({NativeObject{"sqrt.o", bytes, host, ObjectChecksum(bytes)}});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->defined_symbols(), (std::vector<std::string>{"offset", "sqrt_plus"}));
  auto fn = (*module)->Lookup("sqrt_plus");
  ASSERT_TRUE(fn.ok()) << fn.status();
  std::vector<float> x = {0, 1, 4, 9, 2}, y(5, -1);
  reinterpret_cast<void (*)(const float*, float*, int64_t)> (*fn)(x.data(), y.data(), 5);
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y[i], std::sqrt(x[i]) + 1.0f) << i;
  EXPECT_EQ((*module)->Lookup("nope").status().code(), absl::StatusCode::kNotFound);
}

TEST(ObjectLoaderTest, UnresolvedSymbolIsRefusedByName) {
  const TargetDescription host = HostTargetDescription();
  const std::vector<uint8_t> bytes = CompileIr(kMissingSymbolIr, host);
  auto module = NativeModule::Load({NativeObject{"missing.o", bytes, host, ObjectChecksum(bytes)}});
  EXPECT_EQ(module.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(module.status().message().find("tessera_symbol_nobody_defines"), std::string::npos) << module.status();
  EXPECT_NE(module.status().message().find("missing.o"), std::string::npos) << module.status();
}

TEST(ObjectLoaderTest, ForeignCpuIsRefused) {
  const TargetDescription host = HostTargetDescription();
  if (host.features.find("+avx512f") != std::string::npos) GTEST_SKIP() << "host has AVX-512";
  const TargetDescription znver4{host.triple, "znver4", ""};
  const absl::Status check = CheckHostSupports(znver4);
  EXPECT_EQ(check.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(check.message().find("avx512f"), std::string::npos) << check;
  const TargetDescription by_feature{host.triple, "x86-64", "+avx512f"};
  EXPECT_EQ(CheckHostSupports(by_feature).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(CheckHostSupports(TargetDescription{host.triple, "x86-64", ""}).ok());
  EXPECT_TRUE(CheckHostSupports(host).ok());
  const TargetDescription arm{"aarch64-unknown-linux-gnu", "generic", ""};
  EXPECT_EQ(CheckHostSupports(arm).code(), absl::StatusCode::kFailedPrecondition);
  const std::vector<uint8_t> bytes = CompileIr(kSqrtIr, znver4);
  auto module = NativeModule::Load({NativeObject{"znver4.o", bytes, znver4, ObjectChecksum(bytes)}});
  EXPECT_EQ(module.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(ObjectLoaderTest, MalformedBytesAreRefused) {
  const TargetDescription host = HostTargetDescription();
  const std::vector<uint8_t> bytes = CompileIr(kSqrtIr, host);
  ASSERT_GT(bytes.size(), 64u);
  const std::vector<uint8_t> garbage(100, 0xAB);
  EXPECT_FALSE(NativeModule::Load({NativeObject{"garbage.o", garbage, host, ObjectChecksum(garbage)}}).ok());
  EXPECT_FALSE(NativeModule::Load({NativeObject{"empty.o", {}, host, ObjectChecksum({})}}).ok());
  for (size_t size = 0; size < bytes.size(); size += std::max<size_t>(1, bytes.size() / 97)) {
    SCOPED_TRACE(absl::StrCat("truncated to ", size, " of ", bytes.size()));
    std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + size);
    // With the checksum recorded for the whole object, and with one that matches (the
    // object parser's own checks).
    EXPECT_EQ(NativeModule::Load({NativeObject{"truncated.o", truncated, host, ObjectChecksum(bytes)}}).status().code(),
              absl::StatusCode::kDataLoss);
    EXPECT_FALSE(NativeModule::Load({NativeObject{"truncated.o", truncated, host, ObjectChecksum(truncated)}}).ok());
  }
  // Random corruption is caught by the checksum (LLVM's linker would follow corrupted
  // relocations out of bounds).
  constexpr uint32_t kSeed = 20261130;
  SCOPED_TRACE(absl::StrCat("seed ", kSeed));
  std::mt19937 rng(kSeed);
  int refused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> corrupt = bytes;
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) corrupt[rng() % corrupt.size()] = static_cast<uint8_t>(rng());
    if (corrupt == bytes) continue;
    auto module = NativeModule::Load({NativeObject{"corrupt.o", corrupt, host, ObjectChecksum(bytes)}});
    EXPECT_EQ(module.status().code(), absl::StatusCode::kDataLoss) << module.status();
    refused += !module.ok();
  }
  EXPECT_GT(refused, 150);
}

}  // namespace
}  // namespace tsr
