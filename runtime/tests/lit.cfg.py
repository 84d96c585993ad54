# -*- Python -*-
# The runtime's lit suite: integration/*.test (pipeline-run under mpirun) and
# the GoogleTest binary in unit/. Plain lit, no LLVM lit helpers, so that it
# also runs from a standalone runtime build:
#   lit -sv <runtime build>/tests
import os

import lit.formats

config.name = "PIPESCHED-RUNTIME"
# bash: the tests use `!` and $(...).
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".test"]
config.test_source_root = os.path.dirname(os.path.realpath(__file__))
config.test_exec_root = config.pipesched_runtime_obj
config.excludes = ["programs", "plugins", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]

# Longer names first: lit replaces in order, and %p is a prefix of %programs.
config.substitutions.append(("%pipeline-run", config.pipeline_run))
config.substitutions.append(("%pipeline-translate", config.pipeline_translate))
config.substitutions.append(("%pipeline-compile", config.pipeline_compile))
config.substitutions.append(("%nan-plugin", config.nan_plugin))
config.substitutions.append(("%stall-plugin", config.stall_plugin))
config.substitutions.append(("%error-plugin", config.error_plugin))
config.substitutions.append(("%load-stall-plugin", config.load_stall_plugin))
config.substitutions.append(("%examples", config.examples))
config.substitutions.append(("%programs", os.path.join(config.test_source_root, "programs")))
config.substitutions.append(("%plugin", config.mlp_plugin))
config.substitutions.append(("%python", config.python))
config.substitutions.append(("%mpirun", config.mpirun))

# The compiler's tools (pipeline-translate and pipeline-compile), built by
# the top-level project: tests that compile specs require them.
if os.access(config.pipeline_translate, os.X_OK) and os.access(
    config.pipeline_compile, os.X_OK
):
    config.available_features.add("pipeline-translate")
# pipeline-run was built with --backend cuda (it may still find no GPU).
if config.cuda_backend.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("cuda-backend")

for var in ["PATH", "HOME", "TMPDIR", "LD_LIBRARY_PATH"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
