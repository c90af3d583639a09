// tsr-ods-gen: prints compiler/dialect/TsrGeneratedOps.td (the ODS of every registered graph
// op not written by hand) to stdout.
//
//   build/bin/tsr-ods-gen > compiler/dialect/TsrGeneratedOps.td
#include <iostream>

#include "compiler/dialect/tsr_ods_generator.h"
#include "graph/op_registry.h"

int main() {
  std::cout << tsr::GenerateTsrOds(tsr::OpRegistry::Global());
  return 0;
}
