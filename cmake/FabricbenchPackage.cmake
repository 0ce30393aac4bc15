# The Debian package cluster nodes install: `cpack -G DEB` in a build folder gives
# fabricbench_<version>_amd64.deb with the executables, the NCCL profiler plugin (lib/ beside
# bin/, where the executables look for it), fbplot.py as fb_plot, and the docs. Its dependencies
# are the Debian 12 / Ubuntu 24.04 runtime packages of what the build links; CUDA and NCCL come
# from NVIDIA's packages on GPU nodes and are not listed (a build without them needs neither).
# Installed, fb_plot runs on the system's Python (where python3-matplotlib is), not on whichever
# python3 comes first on a user's PATH (pyenv, a venv without matplotlib).
file(READ ${PROJECT_SOURCE_DIR}/plots/fbplot.py _fbplot_text)
string(REGEX REPLACE "^#![^\n]*" "#!/usr/bin/python3" _fbplot_text "${_fbplot_text}")
file(WRITE ${PROJECT_BINARY_DIR}/packaging/fb_plot "${_fbplot_text}")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/plots/fbplot.py)
install(PROGRAMS ${PROJECT_BINARY_DIR}/packaging/fb_plot DESTINATION bin)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION share/doc/fabricbench)
install(FILES ${PROJECT_SOURCE_DIR}/results/README.md DESTINATION share/doc/fabricbench RENAME RESULTS.md)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION share/doc/fabricbench)
# fb_health's example rules and the Slurm prolog that drains on its verdict.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/health DESTINATION share/fabricbench)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/scripts/slurm-prolog.sh DESTINATION share/fabricbench RENAME fb_health-prolog.sh)

set(CPACK_PACKAGE_NAME fabricbench)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "fabricbench developers <fabricbench@invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "GPU cluster network benchmarks: NCCL and MPI collectives, RDMA verbs, link matrices, regression verdicts")
set(CPACK_PACKAGE_INSTALL_DIRECTORY /usr)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "openmpi-bin, libopenmpi3 | libopenmpi3t64, libfmt9 | libfmt10, libibverbs1, ibverbs-providers, libbenchmark1debian | libbenchmark1.8.3, python3, python3-matplotlib")
if(FABRICBENCH_HAVE_NCCL)
  set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
      "${CPACK_PACKAGE_DESCRIPTION_SUMMARY}.\n Built with the NCCL backend: needs CUDA's runtime and NCCL (libnccl2) from NVIDIA.")
endif()
include(CPack)
