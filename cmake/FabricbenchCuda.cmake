# Finds the CUDA toolkit and NCCL where they live: CUDA_HOME / NCCL_HOME, /usr/local/cuda
# (Debian with NVIDIA's installer) or the system paths (Ubuntu's packages).
set(FABRICBENCH_HAVE_CUDA OFF)
set(FABRICBENCH_HAVE_NCCL OFF)
if(NOT FABRICBENCH_WITH_CUDA)
  fabricbench_note("CUDA/NCCL: disabled (FABRICBENCH_WITH_CUDA=OFF) - NCCL backend disabled")
  return()
endif()

set(_cuda_roots $ENV{CUDA_HOME} $ENV{CUDA_PATH} /usr/local/cuda)
if(NOT CMAKE_CUDA_COMPILER)
  find_program(_nvcc nvcc HINTS ${_cuda_roots} PATH_SUFFIXES bin)
  if(_nvcc)
    set(CMAKE_CUDA_COMPILER ${_nvcc})
  endif()
endif()
include(CheckLanguage)
check_language(CUDA)
if(NOT CMAKE_CUDA_COMPILER)
  fabricbench_note("CUDA: not found (no nvcc; set CUDA_HOME) - NCCL backend disabled")
  return()
endif()

# Never "native": CPU-only builders (CI) have no GPU to ask. 80 = A100, 90 = H100/H200.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  set(CMAKE_CUDA_ARCHITECTURES 80 90 CACHE STRING "CUDA architectures to build for")
endif()
enable_language(CUDA)
# The kernels share headers with the C++20 host code. CMake 3.25 does not know nvcc's C++20 flag
# (newer CMake does): teach it, so CUDA_STANDARD 20 works with both.
if(NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION OR CMAKE_CUDA20_STANDARD_COMPILE_OPTION STREQUAL "")
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
set(CMAKE_CUDA_STANDARD 20)
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
find_package(CUDAToolkit REQUIRED)
set(FABRICBENCH_HAVE_CUDA ON)
list(JOIN CMAKE_CUDA_ARCHITECTURES "," _cuda_arches)
fabricbench_note("CUDA: ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}), architectures ${_cuda_arches}")

find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS $ENV{NCCL_HOME} $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS} ${_cuda_roots}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY nccl
  HINTS $ENV{NCCL_HOME} $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR} ${_cuda_roots}
  PATH_SUFFIXES lib lib64 lib/x86_64-linux-gnu)
if(NOT NCCL_INCLUDE_DIR OR NOT NCCL_LIBRARY)
  fabricbench_note("NCCL: not found (set NCCL_HOME) - NCCL backend disabled")
  return()
endif()
file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h _nccl_version_lines REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*" "\\1.\\2.\\3"
  NCCL_VERSION "${_nccl_version_lines}")
add_library(fabricbench_nccl_lib INTERFACE)
target_include_directories(fabricbench_nccl_lib INTERFACE ${NCCL_INCLUDE_DIR})
target_link_libraries(fabricbench_nccl_lib INTERFACE ${NCCL_LIBRARY} CUDA::cudart)
set(FABRICBENCH_HAVE_NCCL ON)
fabricbench_note("NCCL: ${NCCL_VERSION} (${NCCL_LIBRARY}) - NCCL backend built")
