#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A Slurm Prolog (slurm.conf: Prolog=/path/to/slurm-prolog.sh, PrologFlags=Alloc) that runs
# fb_health and, when it says FAIL, drains this node with fb_health's one line as the reason and
# fails the prolog, so Slurm requeues the job onto healthy nodes. Settings (the prolog gets no user
# environment): /etc/default/fabricbench-health, or the file named by FB_HEALTH_CONFIG, may set
#   FB_HEALTH=/usr/bin/fb_health   FB_HEALTH_ARGS="--rules /etc/fabricbench/node.rules --budget 45"
#   SCONTROL=scontrol
set -uo pipefail
config=${FB_HEALTH_CONFIG:-/etc/default/fabricbench-health}
[[ -r $config ]] && source "$config"
FB_HEALTH=${FB_HEALTH:-fb_health} SCONTROL=${SCONTROL:-scontrol}
node=${SLURMD_NODENAME:-$(hostname)}
# shellcheck disable=SC2086 # FB_HEALTH_ARGS is a list of words
output=$("$FB_HEALTH" --host "$node" ${FB_HEALTH_ARGS:-} 2>&1)
status=$?
line=$(tail -1 <<< "$output")
((status == 0)) && exit 0
reason=${line:0:240}
((status == 1)) || reason="fb_health exit $status: ${line:0:200}"  # it could not run: drain too
# A failed prolog makes slurmctld drain the node as "Prolog error" and requeue the job (held unless
# SchedulerParameters=nohold_on_prolog_fail). That reason replaces any given before, so ours is set
# again a moment after this script has ended, from a process of its own.
"$SCONTROL" update NodeName="$node" State=DRAIN Reason="$reason"
setsid bash -c 'sleep 3; "$0" update NodeName="$1" State=DRAIN Reason="$2"' "$SCONTROL" "$node" "$reason" \
  < /dev/null > /dev/null 2>&1 &
echo "$reason" >&2
exit 1
