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

# fabricbench_add_tool(NAME LIBS ...): the executable fb_NAME from tools/fb_NAME.cpp.
function(fabricbench_add_tool name)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  add_executable(fb_${name} fb_${name}.cpp)
  target_link_libraries(fb_${name} PRIVATE ${ARG_LIBS} CLI11::CLI11 fabricbench_warnings)
  set_target_properties(fb_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  install(TARGETS fb_${name} RUNTIME DESTINATION bin)
endfunction()

# fabricbench_add_collective(NAME): the executable fb_NAME, its main written from
# benchmarks/collective_main.cpp.in.
function(fabricbench_add_collective name)
  set(FB_NAME ${name})
  fabricbench_descriptor_name(${name} FB_DESCRIPTOR)
  configure_file(${PROJECT_SOURCE_DIR}/benchmarks/collective_main.cpp.in
    ${FABRICBENCH_GENERATED_DIR}/benchmarks/fb_${name}.cpp @ONLY)
  add_executable(fb_${name} ${FABRICBENCH_GENERATED_DIR}/benchmarks/fb_${name}.cpp)
  target_link_libraries(fb_${name} PRIVATE fabricbench_collectives fabricbench_warnings)
  set_target_properties(fb_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  install(TARGETS fb_${name} RUNTIME DESTINATION bin)
endfunction()

# fabricbench_own_mpi_session_dirs(): each test of the calling directory gets its own Open MPI
# session folder under the build. Open MPI 4.1 creates /tmp/ompi.HOST.UID at every launch and
# removes it after; two tests launching at once race on that mkdir ("File exists", orte_init
# fails: open-mpi/ompi#8510), which failed mpi_bad_input once under ctest -j2.
function(fabricbench_own_mpi_session_dirs)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(test IN LISTS tests)
    # Made here, as the build's owner: made by Open MPI at a first run as root, it would be 0700,
    # and the owner's later runs could not make their own ompi.HOST.UID inside.
    file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/mpi-sessions/${test})
    set_property(TEST ${test} APPEND PROPERTY ENVIRONMENT
      "OMPI_MCA_orte_tmpdir_base=${CMAKE_BINARY_DIR}/mpi-sessions/${test}")
  endforeach()
endfunction()
