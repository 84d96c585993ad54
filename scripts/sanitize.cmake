# The AddressSanitizer + UndefinedBehaviorSanitizer build of
# scripts/build-sanitized.sh, injected right after the top-level project()
# call:
#   cmake -S . -B build-asan -DCMAKE_PROJECT_pipesched_INCLUDE=<this file> ...
# so that no CMakeLists.txt needs an option for it. Everything the build
# compiles is instrumented: the compiler's libraries and tools, the unit
# tests, the fuzz targets, and the runtime (added by the top-level project
# after this runs): pipeline-run, its core, its unit tests and the model
# libraries it loads. Debian's LLVM/MLIR and OpenMPI stay uninstrumented.
set(PIPESCHED_SANITIZE_FLAGS
    -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
# With the fuzzers (clang only), every library also carries libFuzzer's
# coverage instrumentation, so that one build serves the lit suites and the
# fuzz targets; the tools run as usual with it.
if(PIPESCHED_ENABLE_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "PIPESCHED_ENABLE_FUZZERS needs clang (libFuzzer), "
                        "e.g. -DCMAKE_CXX_COMPILER=clang++-14")
  endif()
  list(APPEND PIPESCHED_SANITIZE_FLAGS -fsanitize=fuzzer-no-link)
endif()
add_compile_options(${PIPESCHED_SANITIZE_FLAGS})
add_link_options(-fsanitize=address,undefined)

# The rest once the top-level directory is done and the targets exist.
function(pipesched_sanitize_targets)
  # Test/Install/embed.test links the installed static libraries into a
  # program of its own (examples/embed) that knows nothing of this build:
  # the exported targets carry the sanitizer runtimes to it (every exported
  # library links PipeschedScheduling publicly).
  target_link_options(PipeschedScheduling INTERFACE -fsanitize=address,undefined)
  # The tools' drivers walk LLVM's registered command-line options
  # (pipesched::hideLLVMOptions), and Debian's libLLVM holds Polly's, whose
  # vtables carry no type_info (Polly is built with -fno-rtti): UBSan's vptr
  # check cannot tell their dynamic type and reports every one of them. Off
  # for the drivers only (tools/*/*.cpp); on in every library and the runtime.
  foreach(tool pipeline-opt pipeline-translate pipeline-compile)
    target_compile_options(${tool} PRIVATE -fno-sanitize=vptr)
  endforeach()
  # pipeline-run: OpenMPI's leaks kept out of LeakSanitizer's reports
  # (scripts/sanitize-mpi.cpp, with scripts/lsan.supp); its dlclose must
  # override the C library's for OpenMPI too.
  if(TARGET pipeline-run)
    target_sources(pipeline-run PRIVATE ${PROJECT_SOURCE_DIR}/scripts/sanitize-mpi.cpp)
    target_link_options(pipeline-run PRIVATE -Wl,--export-dynamic-symbol=dlclose)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL pipesched_sanitize_targets)
