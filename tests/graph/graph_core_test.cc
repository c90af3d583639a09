#include "gtest/gtest.h"
#include "graph/graph.h"
#include "graph/op_registry.h"
TEST(Smoke, RegistryHasSourceOps) { EXPECT_NE(tsr::OpRegistry::Global().Find("Constant"), nullptr); }
