// A LeNet-5 style CNN for 28x28 single-channel images, written with the GraphBuilder
// API. Usage: lenet [OUT] — verifies the model, saves it as a GraphDef to OUT
// (default lenet.pb; a .pbtxt path writes text) and prints a summary.
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
  Output x = b.Input("image", DType::kF32, {kBatchDim, 1, 28, 28});
  x = nn::Conv2D(b, x, 6, 5, {.padding = "same", .activation = "relu"});  // [N,6,28,28]
  x = nn::MaxPool2D(b, x, 2);                                             // [N,6,14,14]
  x = nn::Conv2D(b, x, 16, 5, {.activation = "relu"});                    // [N,16,10,10]
  x = nn::MaxPool2D(b, x, 2);                                             // [N,16,5,5]
  x = nn::Flatten(b, x);                                                  // [N,400]
  x = nn::Dense(b, x, 120, {.activation = "relu"});
  x = nn::Dense(b, x, 84, {.activation = "relu"});
  b.MarkOutput("logits", nn::Dense(b, x, 10, {.name = "logits"}));

  TSR_ASSIGN_OR_RETURN(Graph graph, b.Finish());  // the first error, or the verified graph
  TSR_RETURN_IF_ERROR(SaveGraph(graph, path));
  TSR_ASSIGN_OR_RETURN(ModelSummary summary, SummarizeModel(graph));
  std::cout << "saved " << path << "\n" << FormatModelSummary(summary);
  return absl::OkStatus();
}

}  // namespace tsr

int main(int argc, char** argv) {
  absl::Status status = tsr::Run(argc > 1 ? argv[1] : "lenet.pb");
  if (!status.ok()) std::cerr << "lenet: " << status << "\n";
  return status.ok() ? 0 : 1;
}
