// The Trainer's compiled steps (runtime/trainer/step_program.h): a StepCompiler that
// compiles the training graph with CompileGraph — Variables kept as state, the update
// nodes as targets for a training step, none for an evaluation step — for the requested
// batch and loads it as a CompiledProgram. `tessera train` uses it unless --interpret.
//
//   TrainerOptions options;
//   options.step_compiler = CompiledStepCompiler();
//   TSR_ASSIGN_OR_RETURN(auto trainer, Trainer::Create(std::move(model), options));
#ifndef TESSERA_COMPILER_PIPELINE_COMPILED_STEP_H_
#define TESSERA_COMPILER_PIPELINE_COMPILED_STEP_H_

#include <string>

#include "runtime/trainer/step_program.h"

namespace tsr {

struct CompiledStepOptions {
  // When not empty: each program's IR after every stage goes to
  // <dump_ir_dir>/<train|eval>-b<batch>/ (CompileOptions::dump_ir_dir).
  std::string dump_ir_dir;
  bool fuse = true;  // CompileOptions::fuse
};

StepCompiler CompiledStepCompiler(CompiledStepOptions options = {});

}  // namespace tsr

#endif  // TESSERA_COMPILER_PIPELINE_COMPILED_STEP_H_
