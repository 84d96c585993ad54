# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "PIPESCHED"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.pipesched_obj_root, "test")
config.excludes = ["Inputs", "CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.pipesched_src_root, "examples")))
config.substitutions.append(("%docs", os.path.join(config.pipesched_src_root, "docs")))
# The build tree (cmake --install of it) and lit itself (nested suites).
config.substitutions.append(("%objroot", config.pipesched_obj_root))
config.substitutions.append(("%lit", os.path.join(config.llvm_tools_dir, "lit")))
# The reference generated from ODS (add_mlir_doc).
config.substitutions.append(("%gendocs", os.path.join(config.pipesched_obj_root, "docs")))

# Every FileCheck variable is local to its CHECK-LABEL block.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"

llvm_config.use_default_substitutions()
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])

tool_dirs = [config.pipesched_tools_dir, config.llvm_tools_dir]
tools = ["pipeline-opt", "split-file", "not"]
for optional in ["pipeline-translate", "pipeline-compile", "pipeline-report", "pipeline-run"]:
    if os.path.exists(os.path.join(config.pipesched_tools_dir, optional)):
        tools.append(optional)
llvm_config.add_tool_substitutions(tools, tool_dirs)

# mpirun for the runtime tests: as root it needs --allow-run-as-root, and more
# ranks than cores need --oversubscribe.
import shutil
mpirun = shutil.which("mpirun")
if mpirun and os.path.exists(os.path.join(config.pipesched_tools_dir, "pipeline-run")):
    config.available_features.add("runtime")
    config.substitutions.append(
        ("%mpirun", mpirun + " --allow-run-as-root --oversubscribe --bind-to none"))

# Headless Chromium (Debian's chromium) renders the diagrams and the report
# as a person would see them. Flags: no sandbox as root, no GPU, and no
# background networking (this machine's network is closed).
chromium = shutil.which("chromium")
if chromium:
    config.available_features.add("chromium")
    config.substitutions.append(
        ("%chromium", "timeout 120 " + chromium + " --headless --no-sandbox "
         "--disable-gpu --disable-quic --no-first-run "
         "--disable-background-networking --disable-component-update "
         "--disable-sync --hide-scrollbars"))
