# The one list of RDMA verbs operations. Each WORD has its descriptor in verbs/operations/WORD.cpp
# (the constant kRdmaWord); from this list CMake builds those files into the verbs library and
# generates fb_rdma_WORD_bw and fb_rdma_WORD_lat from benchmarks/verbs_main.cpp.in.
set(FABRICBENCH_VERBS_OPERATIONS write read send atomic)

# fabricbench_add_verbs_operation(WORD): its bandwidth and latency executables.
function(fabricbench_add_verbs_operation name)
  set(FB_NAME ${name})
  fabricbench_descriptor_name(rdma_${name} FB_DESCRIPTOR)
  foreach(metric bw lat)
    set(FB_METRIC_WORD ${metric})
    if(metric STREQUAL "bw")
      set(FB_METRIC kBandwidth)
      set(FB_METRIC_TEXT bandwidth)
    else()
      set(FB_METRIC kLatency)
      set(FB_METRIC_TEXT latency)
    endif()
    set(target fb_rdma_${name}_${metric})
    configure_file(${PROJECT_SOURCE_DIR}/benchmarks/verbs_main.cpp.in
      ${FABRICBENCH_GENERATED_DIR}/benchmarks/${target}.cpp @ONLY)
    add_executable(${target} ${FABRICBENCH_GENERATED_DIR}/benchmarks/${target}.cpp)
    target_link_libraries(${target} PRIVATE fabricbench_verbs fabricbench_warnings)
    set_target_properties(${target} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
    install(TARGETS ${target} RUNTIME DESTINATION bin)
  endforeach()
endfunction()
