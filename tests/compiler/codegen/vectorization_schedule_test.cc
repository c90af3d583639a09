// Tests of the generated tiling schedule (compiler/codegen/vectorization_schedule.h): the
// tile sizes it picks for elementwise bodies, read from the schedule's text.
#include "compiler/codegen/vectorization_schedule.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "compiler/codegen/codegen_mlir.h"
#include "gtest/gtest.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace tsr::codegen {
namespace {

// y = op(x) on [rows, cols] buffers, the body one `op` of the math or arith dialect.
std::string Elementwise(const std::string& op, int64_t rows, int64_t cols) {
  const std::string type = absl::StrCat("memref<", rows, "x", cols, "xf32>");
  return absl::StrCat(R"(
#id = affine_map<(i, j) -> (i, j)>
func.func @f(%x: )",
                      type, ", %y: ", type, R"() {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : )",
                      type, ") outs(%y : ", type, R"() {
  ^bb0(%u: f32, %o: f32):
    %v = )",
                      op, R"( %u : f32
    linalg.yield %v : f32
  }
  return
}
)");
}

// y[i] = sum over j of x[i, j]: a reduction along the innermost dim.
std::string RowSums(int64_t rows, int64_t cols) {
  const std::string x = absl::StrCat("memref<", rows, "x", cols, "xf32>"), y = absl::StrCat("memref<", rows, "xf32>");
  return absl::StrCat(R"(
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @f(%x: )",
                      x, ", %y: ", y, R"() {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : )",
                      x, ") outs(%y : ", y, R"() {
  ^bb0(%u: f32, %o: f32):
    %v = arith.addf %o, %u : f32
    linalg.yield %v : f32
  }
  return
}
)");
}

std::string ScheduleOf(const std::string& text, int64_t vector_bits) {
  mlir::DialectRegistry registry;
  RegisterCodegenDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
  EXPECT_TRUE(module) << text;
  if (!module) return "";
  return BuildVectorizationSchedule(*module, {.vector_bits = vector_bits});
}

// Plain arithmetic steps by eight vectors of the innermost dim; a body whose math becomes
// a polynomial (erf, exp, tanh) by two, which fit the registers: at eight, GELU's erf
// spilled hundreds of them.
TEST(VectorizationScheduleTest, PolynomialMathStepsByTwoVectors) {
  struct Case {
    std::string op;
    int64_t vectors;
  };
  for (const Case& c : {Case{"arith.negf", 8}, Case{"math.absf", 8}, Case{"math.sqrt", 8}, Case{"math.erf", 2},
                        Case{"math.exp", 2}, Case{"math.tanh", 2}}) {
    for (const int64_t bits : {256, 512}) {
      SCOPED_TRACE(absl::StrCat(c.op, " at ", bits, " bits"));
      const int64_t step = c.vectors * bits / 32;
      const std::string schedule = ScheduleOf(Elementwise(c.op, 4, 3072), bits);
      EXPECT_NE(schedule.find(absl::StrCat("tile_sizes [1, ", step, "]")), std::string::npos) << schedule;
    }
  }
}

// A reduction along the innermost dim runs one vector of outputs side by side, and steps
// through the reduced dim by one vector too: its tile is transposed lane by lane, and at
// 16 x 768 (the whole row) that unrolled into megabytes of IR.
TEST(VectorizationScheduleTest, InnermostReductionTilesAreOneVectorSquare) {
  for (const int64_t bits : {256, 512}) {
    SCOPED_TRACE(absl::StrCat(bits, " bits"));
    const int64_t lanes = bits / 32;
    const std::string schedule = ScheduleOf(RowSums(128, 768), bits);
    EXPECT_NE(schedule.find(absl::StrCat("tile_sizes [", lanes, ", ", lanes, "]")), std::string::npos) << schedule;
  }
}

}  // namespace
}  // namespace tsr::codegen
