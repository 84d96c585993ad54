# The CUDA backend of pipeline-run (--backend cuda, docs/runtime.md,
# Backends): cuBLAS for the Linear layers, a few kernels (one .cu file, so
# that nvcc's share of the build stays small), NCCL for transfers and
# collectives. Built when PIPESCHED_RUNTIME_CUDA is ON (the default) and
# nvcc, the CUDA toolkit with cuBLAS, and NCCL are found; it compiles
# without a GPU. Sets PIPESCHED_RUNTIME_HAVE_CUDA for the tests.
option(PIPESCHED_RUNTIME_CUDA
  "Build pipeline-run's CUDA backend when CUDA, cuBLAS and NCCL are found" ON)
set(PIPESCHED_RUNTIME_CUDA_ARCHITECTURES 90 CACHE STRING
  "CUDA architectures of the CUDA backend (90: H100, H200)")
set(PIPESCHED_RUNTIME_HAVE_CUDA OFF)

if(NOT PIPESCHED_RUNTIME_CUDA)
  message(STATUS "pipeline-run: CUDA backend off (PIPESCHED_RUNTIME_CUDA=OFF): CPU only")
  return()
endif()

include(CheckLanguage)
check_language(CUDA)
find_package(CUDAToolkit QUIET)
set(_missing "")
if(NOT CMAKE_CUDA_COMPILER)
  list(APPEND _missing "nvcc")
endif()
if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas)
  list(APPEND _missing "CUDA toolkit with cuBLAS")
else()
  # NCCL often sits in the toolkit's lib/ (not lib64/) or in the system.
  find_library(NCCL_LIBRARY nccl
    HINTS ${CUDAToolkit_LIBRARY_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR})
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
endif()
if(NOT NCCL_LIBRARY OR NOT NCCL_INCLUDE_DIR)
  list(APPEND _missing "NCCL (nccl.h, libnccl)")
endif()
if(_missing)
  string(REPLACE ";" ", " _missing "${_missing}")
  message(STATUS "pipeline-run: CUDA backend off (not found: ${_missing}): CPU only")
  return()
endif()

enable_language(CUDA)
set(PIPESCHED_RUNTIME_HAVE_CUDA ON)
message(STATUS "pipeline-run: CUDA backend on (CUDA ${CUDAToolkit_VERSION}, "
               "architectures ${PIPESCHED_RUNTIME_CUDA_ARCHITECTURES}, ${NCCL_LIBRARY})")

# (Its CUDA-free parts are in PipeschedRuntimeCore, unit-tested everywhere.)
add_library(PipeschedRuntimeCuda STATIC
  src/cuda/cuda_backend.cpp
  src/cuda/cuda_device.cpp
  src/cuda/cuda_kernels.cu
  src/cuda/cuda_memory.cpp
  src/cuda/cuda_mlp.cpp
  src/cuda/cuda_tracker.cpp
  src/cuda/cuda_warmup.cpp
  src/cuda/device_link_probe.cpp
  src/cuda/mpi_device_comm.cpp
  src/cuda/nccl_comms.cpp
  src/cuda/nccl_device_comm.cpp
  src/cuda/pinned_pool.cpp
)
target_include_directories(PipeschedRuntimeCuda PRIVATE ${NCCL_INCLUDE_DIR})
target_link_libraries(PipeschedRuntimeCuda PUBLIC PipeschedRuntimeCore MPI::MPI_C
  CUDA::cudart CUDA::cublas ${NCCL_LIBRARY})
target_compile_definitions(PipeschedRuntimeCuda PRIVATE OMPI_SKIP_MPICXX=1
  MPICH_SKIP_MPICXX=1)
# --fmad=false: kernels round a*b+c twice, as the host's -ffp-contract=off.
target_compile_options(PipeschedRuntimeCuda PRIVATE
  "$<$<COMPILE_LANGUAGE:CXX>:${PIPESCHED_RUNTIME_WARNINGS};${PIPESCHED_RUNTIME_FP}>"
  "$<$<COMPILE_LANGUAGE:CUDA>:--fmad=false;-Xcompiler=-Wall,-Wextra>")
# The shared CUDA runtime, the one CUDA::cudart and cuBLAS use.
set_target_properties(PipeschedRuntimeCuda PROPERTIES
  CUDA_ARCHITECTURES "${PIPESCHED_RUNTIME_CUDA_ARCHITECTURES}"
  CUDA_STANDARD 17 CUDA_RUNTIME_LIBRARY Shared)

target_link_libraries(pipeline-run PRIVATE PipeschedRuntimeCuda)
target_compile_definitions(pipeline-run PRIVATE PIPESCHED_RUNTIME_HAVE_CUDA=1)
