# lit configuration of Tessera's pass tests: every .mlir file under tests/lit/ is a test whose
# RUN lines use tessera-opt (from the build) and FileCheck / not (from LLVM 19).
import os

import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tessera_obj_root, "tests", "lit")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in", "BUILD.bazel"]
config.environment["PATH"] = os.pathsep.join(
    [config.tessera_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
