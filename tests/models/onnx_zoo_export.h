// Exports models of the ONNX model zoo (scripts/onnx_zoo_models.py: PyTorch models with
// fixed-seed weights) into a folder, for the tests that check Tessera against them
// (tests/models/onnx_zoo_test.cc) or feed them to the compiler. Needs the source tree
// ($TESSERA_SOURCE_DIR, which CTest sets) and a Python with torch and torchvision
// (Debian's /usr/bin/python3, or $TESSERA_PYTHON).
#ifndef TESSERA_TESTS_MODELS_ONNX_ZOO_EXPORT_H_
#define TESSERA_TESTS_MODELS_ONNX_ZOO_EXPORT_H_

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tsr::testing {

inline std::string ZooPython() {
  const char* env = std::getenv("TESSERA_PYTHON");
  return env != nullptr ? env : "/usr/bin/python3";
}

// Writes <dir>/<model>/{model.onnx,input.npy,expected.npy} for each of `models` (all of
// them when empty); `dir` must exist. FailedPrecondition when the environment lacks the
// source tree or torch, Internal when the export fails (with the script's output).
inline absl::Status ExportOnnxZoo(const std::string& dir, const std::vector<std::string>& models = {}) {
  const auto read_text = [](const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  const char* source = std::getenv("TESSERA_SOURCE_DIR");
  if (source == nullptr) {
    return absl::FailedPreconditionError(
        "TESSERA_SOURCE_DIR is not set (CTest sets it to the source tree; set it when running directly)");
  }
  const std::string log = dir + "/export.log";
  if (std::system(absl::StrCat(ZooPython(), " -c 'import torch, torchvision, numpy' >", log, " 2>&1").c_str()) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        ZooPython(),
        " cannot import torch and torchvision (install Debian's python3-torch and python3-torchvision, or point "
        "$TESSERA_PYTHON at a Python that has them):\n",
        read_text(log)));
  }
  const std::string command = absl::StrCat(ZooPython(), " ", source, "/scripts/onnx_zoo_models.py ", dir, " ",
                                           absl::StrJoin(models, " "), " >", log, " 2>&1");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("the export failed: ", command, "\n", read_text(log)));
  }
  return absl::OkStatus();
}

// The zoo models a test checks: with $TESSERA_ZOO_DIR set, every model of the zoo found there
// (mlp, lenet, resnet18, mobilenet_v2, gpt_block; callers skip those missing); otherwise
// `defaults` exported by ExportOnnxZoo into the fresh folder <tmp>/<prefix>_<pid>, which the
// caller removes when `temporary`. Unavailable when neither is possible without the source
// tree (tests skip then); ExportOnnxZoo's errors otherwise.
struct ZooSelection {
  std::string dir;
  std::vector<std::string> models;
  bool temporary = false;
};

inline absl::StatusOr<ZooSelection> SelectZooModels(const std::vector<std::string>& defaults,
                                                    const std::string& temp_dir, const std::string& prefix) {
  ZooSelection selection;
  if (const char* zoo = std::getenv("TESSERA_ZOO_DIR"); zoo != nullptr) {
    selection.dir = zoo;
    selection.models = {"mlp", "lenet", "resnet18", "mobilenet_v2", "gpt_block"};
    return selection;
  }
  if (std::getenv("TESSERA_SOURCE_DIR") == nullptr) {
    return absl::UnavailableError("TESSERA_SOURCE_DIR is not set (CTest sets it)");
  }
  selection.dir = absl::StrCat(temp_dir, "/", prefix, "_", ::getpid());
  selection.models = defaults;
  selection.temporary = true;
  std::filesystem::create_directories(selection.dir);
  if (absl::Status s = ExportOnnxZoo(selection.dir, defaults); !s.ok()) return s;
  return selection;
}

// Calls `check(dir, model)` for each model SelectZooModels picks that exists there, then
// removes a temporary folder. Its errors as SelectZooModels'.
inline absl::Status ForEachZooModel(const std::vector<std::string>& defaults, const std::string& temp_dir,
                                    const std::string& prefix,
                                    const std::function<void(const std::string&, const std::string&)>& check) {
  absl::StatusOr<ZooSelection> zoo = SelectZooModels(defaults, temp_dir, prefix);
  if (!zoo.ok()) return zoo.status();
  for (const std::string& model : zoo->models) {
    if (std::filesystem::exists(absl::StrCat(zoo->dir, "/", model, "/model.onnx"))) check(zoo->dir, model);
  }
  if (zoo->temporary) std::filesystem::remove_all(zoo->dir);
  return absl::OkStatus();
}

}  // namespace tsr::testing

#endif  // TESSERA_TESTS_MODELS_ONNX_ZOO_EXPORT_H_
