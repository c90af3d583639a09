// GenerateTsrOds: the ODS of the registry-generated tsr ops (compiler/dialect/TsrGeneratedOps.td).
// No MLIR here: the generator links only tessera_graph.
#ifndef TESSERA_COMPILER_DIALECT_TSR_ODS_GENERATOR_H_
#define TESSERA_COMPILER_DIALECT_TSR_ODS_GENERATOR_H_

#include <string>

namespace tsr {

class OpRegistry;

// One `def Tsr_<Op>Op` per op of `registry` not written by hand in TsrOps.td, sorted by name.
std::string GenerateTsrOds(const OpRegistry& registry);

}  // namespace tsr

#endif  // TESSERA_COMPILER_DIALECT_TSR_ODS_GENERATOR_H_
