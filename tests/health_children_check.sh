#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# fb_health on a live GPU node with its all_reduce step stuck (--inject-fault all_reduce-hang):
# SIGTERM, and then SIGKILL, to fb_health while its fb_all_reduce child hangs leave no process of
# that child's group behind (a prolog killed by the scheduler must not leave a GPU job running).
# Skips (77) without a GPU or without fb_all_reduce.
#   tests/health_children_check.sh BIN_DIR
set -uo pipefail
bin=$(cd "${1:?usage: tests/health_children_check.sh BIN_DIR}" && pwd)
nvidia-smi -L 2>/dev/null | grep -q GPU || { echo "SKIP: no CUDA GPU here (nvidia-smi -L lists none)"; exit 77; }
[[ -x $bin/fb_all_reduce ]] || { echo "SKIP: no fb_all_reduce beside fb_health (a build without NCCL)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

# Processes of process group $1 that still run (zombies do not count).
running_in_group() {
  local n=0 line fields
  for stat in /proc/[0-9]*/stat; do
    read -r line < "$stat" 2>/dev/null || continue
    read -ra fields <<< "${line##*) }"  # state ppid pgrp ...
    [[ ${fields[2]} == "$1" && ${fields[0]} != Z && ${fields[0]} != X ]] && n=$((n + 1))
  done
  echo "$n"
}
# The process group of fb_health $1's fb_all_reduce: a group whose leader is a child of fb_health.
all_reduce_group() {
  local pid group
  for pid in $(pgrep -x fb_all_reduce); do
    group=$(ps -o pgid= -p "$pid" | tr -d ' ')
    [[ -n $group && $(ps -o ppid= -p "$group" | tr -d ' ') == "$1" ]] && { echo "$group"; return; }
  done
}

for sig in TERM KILL; do
  "$bin/fb_health" --budget 120 --inject-fault all_reduce-hang > /dev/null 2>&1 &
  health=$!
  group=
  for _ in $(seq 600); do  # the GPU copies come first, then the all_reduce: up to 60 s
    group=$(all_reduce_group "$health")
    [[ -n $group ]] && break
    kill -0 "$health" 2>/dev/null || fail "fb_health ended before its all_reduce started"
    sleep 0.1
  done
  [[ -n $group ]] || fail "no fb_all_reduce child of fb_health $health appeared"
  sleep 3  # into the injected hang
  before=$(running_in_group "$group")
  kill "-$sig" "$health"
  wait "$health"
  status=$?
  [[ $status == $((128 + $(kill -l "$sig"))) ]] || fail "fb_health after SIG$sig: exit $status"
  for _ in $(seq 50); do [[ $(running_in_group "$group") == 0 ]] && break; sleep 0.1; done
  left=$(running_in_group "$group")
  [[ $left == 0 ]] || fail "after SIG$sig to fb_health, $left process(es) of its fb_all_reduce group still run"
  echo "SIG$sig to fb_health during a stuck all_reduce: the $before process(es) of the child's group are gone"
done
