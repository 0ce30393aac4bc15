#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Flight Recorder dumps of flight-recorder.sh (2026-12-05-flight-recorder/fr-*), imported by
# fb_import and replayed under mpirun without PyTorch, two ranks as two hosts: back to back and
# with the gaps; the pickle converted first for the MoE job's.
# Usage: results/reference/h200-replay/replay-flight-recorder.sh OUT_DIR   (from the repository root)
set -uo pipefail
dest=${1:?usage: replay-flight-recorder.sh OUT_DIR}
out=/tmp/replay-proof
rm -rf "$out" && mkdir -p "$out" "$dest"
source results/reference/h200-replay/common.sh
dumps=$here/h200-replay/2026-12-05-flight-recorder

python3 scripts/flight-recorder-to-json.py "$out/fr-moe-converted" "$dumps"/fr-moe/fr.rank*.pkl
for job in ddp fsdp moe; do
  input=$dumps/fr-$job
  [[ $job == moe ]] && input=$out/fr-moe-converted
  "$build/bin/fb_import" "$input" --trace "$out/t-$job" | tee "$out/import-$job.txt"
done
# FR_REPLAYS picks stages (default: all of them).
for stage in ${FR_REPLAYS:-ddp ddp-gaps fsdp fsdp-gaps moe}; do
  case $stage in
    ddp) replay fr-ddp "$out/t-ddp" 150 -n 2 -w 1 ;;
    ddp-gaps) replay fr-ddp-gaps "$out/t-ddp" 150 -n 2 -w 1 --gaps ;;
    fsdp) replay fr-fsdp "$out/t-fsdp" 200 -n 2 -w 1 ;;
    fsdp-gaps) replay fr-fsdp-gaps "$out/t-fsdp" 200 -n 1 -w 1 --gaps ;;
    moe) replay fr-moe "$out/t-moe" 150 -n 2 -w 1 ;;
  esac
  pack
done
say "done"
