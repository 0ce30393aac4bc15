# SPDX-License-Identifier: Apache-2.0
# Sourced by the scripts that launch on this one machine: Open MPI as root, over loopback only
# (by default it would pick the machine's own eth0 address).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_tcp_if_include=${OMPI_MCA_btl_tcp_if_include:-lo}
export OMPI_MCA_oob_tcp_if_include=${OMPI_MCA_oob_tcp_if_include:-lo}
