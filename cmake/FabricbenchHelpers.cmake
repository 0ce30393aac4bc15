# Helpers that keep each subdirectory's CMakeLists short.

# fabricbench_add_unit_test(NAME SOURCES... LIBS ...): a GoogleTest binary labelled "unit".
function(fabricbench_add_unit_test name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT FABRICBENCH_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest_main fabricbench_warnings)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS unit TIMEOUT 120)
endfunction()

# fabricbench_add_collective(NAME): one executable fb_NAME from benchmarks/fb_NAME.cpp.
function(fabricbench_add_collective name)
  add_executable(fb_${name} fb_${name}.cpp)
  target_link_libraries(fb_${name} PRIVATE fabricbench_collectives fabricbench_warnings)
  set_target_properties(fb_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  install(TARGETS fb_${name} RUNTIME DESTINATION bin)
endfunction()
