#!/usr/bin/env bash
# The main job as the machine comes (always); on an H200 also the parity table (run18.sh).
set -u
out=/tmp/p21
rm -rf "$out" && mkdir -p "$out"
nvidia-smi -L > "$out/gpu.txt" 2>&1
echo "gpu: $(head -1 "$out/gpu.txt")"
python3 -c '
import os, subprocess, sys, time
t = time.monotonic()
with open(sys.argv[1], "w") as f:
    p = subprocess.Popen(["scripts/main-job.sh"], stdout=f, stderr=subprocess.STDOUT)
    _, status, _ = os.wait4(p.pid, 0)
print(f"main job: wall {time.monotonic() - t:.1f} s, exit {os.waitstatus_to_exitcode(status)}")
' "$out/main-job-as-it-comes.log" | tee "$out/main-job.txt"
tar -C /tmp -czf "$OUT/p21.tgz" p21
if grep -q H200 "$out/gpu.txt"; then bash build-anchors/run18.sh; fi
