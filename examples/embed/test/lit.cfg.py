# -*- Python -*-
import os

import lit.formats

config.name = "PIPESCHED_EMBED"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.embed_tools_dir, "test")
config.environment["PATH"] = os.pathsep.join(
    [config.embed_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
