// A multilayer perceptron (784-256-256-10) for 28x28 images, written with the
// GraphBuilder API. Usage: mlp [OUT] — verifies the model, saves it as a GraphDef to
// OUT (default mlp.pb; a .pbtxt path writes text) and prints a summary.
#include <iostream>
#include <string>

#include "graph/builder/graph_builder.h"
#include "graph/builder/model_summary.h"
#include "graph/builder/nn.h"
#include "graph/proto/graph_def_io.h"
#include "graph/status_macros.h"

namespace tsr {

absl::Status Run(const std::string& path) {
  GraphBuilder b;
  Output x = b.Input("image", DType::kF32, {kBatchDim, 784});
  x = nn::Dense(b, x, 256, {.activation = "relu"});
  x = nn::Dense(b, x, 256, {.activation = "relu"});
  b.MarkOutput("logits", nn::Dense(b, x, 10, {.name = "logits"}));

  TSR_ASSIGN_OR_RETURN(Graph graph, b.Finish());  // the first error, or the verified graph
  TSR_RETURN_IF_ERROR(SaveGraph(graph, path));
  TSR_ASSIGN_OR_RETURN(ModelSummary summary, SummarizeModel(graph));
  std::cout << "saved " << path << "\n" << FormatModelSummary(summary);
  return absl::OkStatus();
}

}  // namespace tsr

int main(int argc, char** argv) {
  absl::Status status = tsr::Run(argc > 1 ? argv[1] : "mlp.pb");
  if (!status.ok()) std::cerr << "mlp: " << status << "\n";
  return status.ok() ? 0 : 1;
}
