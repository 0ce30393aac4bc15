# Compiler settings shared by every fabricbench target.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
if(NOT CMAKE_BUILD_TYPE AND NOT CMAKE_CONFIGURATION_TYPES)
  set(CMAKE_BUILD_TYPE RelWithDebInfo CACHE STRING "Build type" FORCE)
endif()

add_library(fabricbench_warnings INTERFACE)
target_compile_options(fabricbench_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion>)
if(FABRICBENCH_WERROR)
  target_compile_options(fabricbench_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()
if(FABRICBENCH_SANITIZE)
  target_compile_options(fabricbench_warnings INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(fabricbench_warnings INTERFACE -fsanitize=address,undefined)
endif()
if(FABRICBENCH_FUZZ)  # coverage for libFuzzer in every library the fuzz targets link
  target_compile_options(fabricbench_warnings INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
endif()

# The git revision is baked in so every stored result names the code that produced it.
execute_process(COMMAND git rev-parse --short=12 HEAD
  WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
  OUTPUT_VARIABLE FABRICBENCH_GIT_REVISION OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT FABRICBENCH_GIT_REVISION)
  set(FABRICBENCH_GIT_REVISION "unknown")
endif()
