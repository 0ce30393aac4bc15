#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fb_sweep, the real executable: however it ends - SIGTERM, SIGINT, SIGHUP, SIGKILL, the launch's
timeout (a launcher that ignores SIGTERM), the launcher's own exit - no process of its launch is
left (a real mpirun job would go on running on the cluster), not even one that left the launch's
process group by setsid(). Bad input (NaN or negative
--timeout, a bad variable name, a launcher that is not there, a PREFIX.runs that is a file, too
many combinations, a value that is not UTF-8) is exit 2 with one line, nothing launched, no file
written. An earlier sweep's files are replaced; files of the user's under the same names (a
benchmark's run included) never are. Processes are found through /proc, by process group."""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def expect(condition, message):
    if not condition:
        fail(message)


def process_stat(pid):
    """(state, process group) of pid, or None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[2])


def running_in_group(group):
    running = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            found = process_stat(entry.name)
            if found and found[1] == group and found[0] not in "ZX":
                running.append(int(entry.name))
    return running


def wait_until(condition, seconds):
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def launcher(tmp, name, body):
    """A launcher script: it ignores the --csv/--json/--tag arguments fb_sweep appends."""
    script = tmp / name
    script.write_text(f"#!/bin/sh\necho $$ > {tmp}/{name}.pid\n{body}\n")
    script.chmod(0o755)
    return script


def default_signals():
    # As a shell's foreground job gets them: a test run under nohup or in the background must
    # still see fb_sweep's own handling.
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def start_sweep(options, tmp, name, script, timeout="600"):
    command = [str(options.bin / "fb_sweep"), "--var", "FB_SWEEP_TEST=1", "--out", str(tmp / name),
               "--timeout", timeout, "--", str(script)]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=default_signals)


def launch_group(tmp, name):
    pid_file = tmp / f"{name}.pid"
    expect(wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), 10), f"{name}: the launch did not start")
    found = process_stat(int(pid_file.read_text()))
    expect(found is not None, f"{name}: the launcher is already gone")
    return found[1]


def test_signals(options, tmp):
    script = launcher(tmp, "sleeper.sh", "sleep 300 &\nsleep 301")
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL):
        sweep = start_sweep(options, tmp, f"sweep-{sig.name}", script)
        group = launch_group(tmp, "sleeper.sh")
        expect(wait_until(lambda: len(running_in_group(group)) >= 3, 5), f"{sig.name}: the launch is not running")
        before = len(running_in_group(group))
        (tmp / "sleeper.sh.pid").unlink()
        sweep.send_signal(sig)
        sweep.communicate(timeout=30)
        expect(sweep.returncode == -sig, f"fb_sweep after {sig.name}: returncode {sweep.returncode}, expected {-sig}")
        expect(wait_until(lambda: not running_in_group(group), 5),
               f"after {sig.name} to fb_sweep, its launch's processes {running_in_group(group)} still run")
        print(f"{sig.name} to fb_sweep: it died by it, and the {before} processes of its launch's group are gone")


def test_timeout_and_leftovers(options, tmp):
    stubborn = launcher(tmp, "stubborn.sh", "trap '' TERM\nsleep 300 &\nsleep 301")
    start = time.monotonic()
    sweep = start_sweep(options, tmp, "timeout", stubborn, timeout="1")
    group = launch_group(tmp, "stubborn.sh")
    out, _ = sweep.communicate(timeout=60)
    seconds = time.monotonic() - start
    expect(sweep.returncode == 3 and seconds < 10, f"--timeout 1, a launcher ignoring SIGTERM: exit {sweep.returncode} after {seconds:.1f} s")
    expect(not running_in_group(group), f"after the timeout, {running_in_group(group)} still run")
    expect(b"killed after the 1 s timeout" in out, f"the launch's record: {out.decode(errors='replace')}")
    print(f"--timeout 1, SIGTERM ignored: ended by SIGKILL after the grace, exit 3 in {seconds:.1f} s, nothing left")

    leaver = launcher(tmp, "leaver.sh", f"sleep 300 &\necho $! > {tmp}/left.pid\nexit 0")
    sweep = start_sweep(options, tmp, "leaver", leaver)
    sweep.communicate(timeout=60)
    left = int((tmp / "left.pid").read_text())
    expect(wait_until(lambda: (process_stat(left) or ("Z", 0))[0] in "ZX", 5),
           f"the launcher exited leaving sleep {left} in its group, and it still runs")
    print(f"a launcher that exits leaving a background process: that process ended too (exit {sweep.returncode})")


def test_strays_outside_the_group(options, tmp):
    """A process that left the launch's group (setsid) is ended too: its parent's death hands it to fb_sweep."""
    def gone(pid):
        return (process_stat(pid) or ("Z", 0))[0] in "ZX"

    for how in ("exit", "SIGTERM", "SIGKILL", "timeout"):
        # Both: a pid file left by the last case would be read before this launch writes its own.
        (tmp / "stray.pid").unlink(missing_ok=True)
        (tmp / "deaf.pid").unlink(missing_ok=True)
        # Two strays, the second deaf to SIGTERM: one ends at SIGTERM, the other needs SIGKILL. The
        # launcher that exits waits 3 s first, so the strays are seen outside its group before
        # fb_sweep ends them.
        body = (f"setsid sleep 302 &\necho $! > {tmp}/stray.pid\n"
                f"setsid sh -c 'trap \"\" TERM; exec sleep 303' &\necho $! > {tmp}/deaf.pid\n" +
                ("sleep 3\nexit 0" if how == "exit" else "sleep 301"))
        script = launcher(tmp, f"stray-{how}.sh", body)
        sweep = start_sweep(options, tmp, f"stray-{how}", script, timeout="2" if how == "timeout" else "600")
        expect(wait_until(lambda: (tmp / "stray.pid").exists() and (tmp / "stray.pid").read_text().strip(), 10),
               f"{how}: the launch did not start its stray")
        stray = int((tmp / "stray.pid").read_text())
        expect(wait_until(lambda: (tmp / "deaf.pid").exists() and (tmp / "deaf.pid").read_text().strip(), 10),
               f"{how}: the launch did not start its second stray")
        deaf = int((tmp / "deaf.pid").read_text())
        expect(wait_until(lambda: all(process_stat(p) and process_stat(p)[1] == p for p in (stray, deaf)), 5),
               f"{how}: sleep {stray} or {deaf} did not leave the launch's group")
        if how in ("SIGTERM", "SIGKILL"):
            sweep.send_signal(getattr(signal, how))
        sweep.communicate(timeout=60)
        expected = {"exit": (0, 3), "timeout": (3,), "SIGTERM": (-signal.SIGTERM,), "SIGKILL": (-signal.SIGKILL,)}[how]
        expect(sweep.returncode in expected, f"{how}: fb_sweep returned {sweep.returncode}, expected one of {expected}")
        for pid in (stray, deaf):
            expect(wait_until(lambda: gone(pid), 15), f"{how}: sleep {pid}, which left the group by setsid, still runs")
        print(f"two processes that left the launch's group by setsid (one deaf to SIGTERM), fb_sweep ended by {how}: "
              f"both ended, fb_sweep returned {sweep.returncode}")

    # A child the caller had before fb_sweep started is not the launch's: it is left alone.
    quick = launcher(tmp, "quick.sh", "exit 0")
    result = subprocess.run(["bash", "-c", f'sleep 300 > /dev/null 2>&1 & echo $! > {tmp}/before.pid; exec "$0" "$@"',
                             str(options.bin / "fb_sweep"), "--var", "A=1", "--out", str(tmp / "before"), "--",
                             str(quick)], capture_output=True, timeout=60, preexec_fn=default_signals)
    before = int((tmp / "before.pid").read_text())
    alive = not gone(before)
    os.kill(before, signal.SIGKILL)
    expect(alive, f"fb_sweep ended sleep {before}, a child its caller had started before it (exit {result.returncode})")
    print("a child fb_sweep's process had before the launch (bash's background job, then exec): left running")


def test_bad_input(options, tmp):
    prefix = tmp / "bad"
    (tmp / "file.runs").write_text("")
    many = [arg for name in "ABCDE" for arg in ("--var", f"{name}=" + ",".join(str(i) for i in range(10)))]
    cases = [(["--timeout", "nan"], "--timeout: 'nan' is not a number"),
             (["--timeout", "-5"], "--timeout: '-5' is out of range (must be 1 to 604800)"),
             (["--timeout", "inf"], "--timeout: 'inf' is not finite"),
             (["--timeout", "0"], "--timeout: '0' is out of range"),
             (["--var", "A B=1"], "'A B' is not a variable name"),
             (["--var", b"A=\xff"], "is not printable UTF-8 text"),
             (["--var", "A=1,2,1"], "--var A: value '1' given twice"),
             (["--launcher-is", "/nonexistent/mpirun"], "launcher '/nonexistent/mpirun': not found on PATH or not executable"),
             (["--out-is", str(tmp / "file")], f"--out: {tmp}/file.runs exists and is not a folder"),
             (["--out-is", f"{tmp}/"], f"--out '{tmp}/' is a folder: give a prefix in it"),
             (["--out-is", "/dev/null"], "would be made in /dev, among the kernel's devices"),
             (["--var", "1A=1"], "not starting with a digit"),
             (many, "100000 combinations to launch; at most 10000"),
             (["--bogus"], "--bogus")]
    for args, message in cases:
        out, program = str(prefix), "true"
        if args[0] == "--launcher-is":
            program, args = args[1], []
        if args and args[0] == "--out-is":
            out, args = args[1], []
        if not any(a == "--var" for a in args):
            args = ["--var", "A=1"] + args
        command = [str(options.bin / "fb_sweep")] + args + ["--out", out, "--", program]
        result = subprocess.run(command, capture_output=True, timeout=30)
        lines = [line for line in result.stderr.decode(errors="replace").splitlines() if line.strip()]
        written = [p.name for p in tmp.iterdir() if p.name.startswith("bad")]
        expect(result.returncode == 2 and len(lines) == 1 and message in lines[0] and not written and not result.stdout,
               f"fb_sweep {args}: exit {result.returncode}, stderr {lines}, written {written}")
        print(f"fb_sweep {' '.join(a if isinstance(a, str) else repr(a) for a in args)[:60]}: exit 2, {lines[0]}")


def test_results_are_each_launchs_own(options, tmp):
    """An earlier sweep's files under a launch's names are not its results, nor is a run that did not finish."""
    source = tmp / "source.json"
    made = subprocess.run([str(options.bin / "fb_all_reduce"), "--backend", "mpi", "-b", "8", "-e", "64", "-n", "2",
                           "--json", str(source)], capture_output=True, timeout=120)
    expect(made.returncode == 0, f"the source run: exit {made.returncode} {made.stderr[-300:]}")
    copier = launcher(tmp, "copier.sh", f'while [ $# -gt 0 ]; do [ "$1" = --json ] && cp "{tmp}/copy.json" "$2"; shift; done')
    prefix = str(tmp / "sweep")

    def sweep(program):
        return subprocess.run([str(options.bin / "fb_sweep"), "--var", "A=1", "--out", prefix, "--", str(program)],
                              capture_output=True, timeout=120)

    (tmp / "copy.json").write_text(source.read_text())
    first = sweep(copier)
    expect(first.returncode == 0 and Path(prefix + ".json").exists(), f"a launch with results: exit {first.returncode}")
    second = sweep("true")
    expect(second.returncode == 3 and b"all failed" in second.stdout and not Path(prefix + ".json").exists() and
           not Path(prefix + ".csv").exists(),
           f"a launch that wrote nothing, where the last sweep left 0.json and its merged files: exit "
           f"{second.returncode} {second.stdout.decode(errors='replace')[-300:]}")
    print("a launch that wrote nothing is not merged with the last sweep's files, whose merged files went with "
          "its launches: exit 3, no merged file")
    unfinished = json.loads(source.read_text())
    unfinished["complete"] = False
    (tmp / "copy.json").write_text(json.dumps(unfinished))
    third = sweep(copier)
    expect(third.returncode == 3 and b"did not finish" in third.stdout and not Path(prefix + ".json").exists(),
           f"a launch whose run did not finish: exit {third.returncode} {third.stdout.decode(errors='replace')[-300:]}")
    print("a launch whose run says \"complete\": false is a failed launch, never merged into a complete file")
    (tmp / "copy.json").write_text(source.read_text())
    two = subprocess.run([str(options.bin / "fb_sweep"), "--var", "A=1,2", "--out", prefix, "--", str(copier)],
                         capture_output=True, timeout=120)
    expect(two.returncode == 0 and Path(prefix + ".runs/1.json").exists(), f"two launches: exit {two.returncode}")
    one = sweep(copier)
    left = sorted(p.name for p in Path(prefix + ".runs").iterdir())
    expect(one.returncode == 0 and left == ["0.json", "0.log"], f"a shorter sweep after a longer one left {left}")
    print(f"a shorter sweep removes the longer one's launches beyond its own: {left}")
    expect(Path(prefix + ".runs/0.log").read_text().startswith("# fabricbench launch: A=1 "),
           "a launch log begins with its settings and command")

    # Files of the user's under the sweep's names are never removed: refused in the way of a launch,
    # left alone beyond the launches and as merged names; and no link is followed.
    user = tmp / "user"
    (user.parent / "user.runs").mkdir()
    for name, text in (("user.csv", "precious\n"), ("user.json", "{}\n"), ("user.runs/7.json", "k\n"),
                       ("user.runs/3.log", "mine\n")):
        (tmp / name).write_text(text)
    kept = subprocess.run([str(options.bin / "fb_sweep"), "--var", "A=1", "--out", str(user), "--", "true"],
                          capture_output=True, timeout=120)
    survivors = {name: (tmp / name).read_text() for name in ("user.csv", "user.json", "user.runs/7.json",
                                                             "user.runs/3.log")}
    expect(kept.returncode == 3 and survivors == {"user.csv": "precious\n", "user.json": "{}\n",
                                                  "user.runs/7.json": "k\n", "user.runs/3.log": "mine\n"},
           f"a sweep removed the user's own files: exit {kept.returncode}, left {survivors}")
    (tmp / "user.runs/0.csv").write_text("mine\n")
    refused = subprocess.run([str(options.bin / "fb_sweep"), "--var", "A=1", "--out", str(user), "--", "true"],
                             capture_output=True, timeout=120)
    expect(refused.returncode == 2 and b"left from elsewhere" in refused.stderr and
           (tmp / "user.runs/0.csv").read_text() == "mine\n", f"a user's 0.csv in the way: exit {refused.returncode}")
    (tmp / "elsewhere").mkdir()
    (tmp / "elsewhere/0.json").write_text(source.read_text())
    (tmp / "linked.runs").symlink_to(tmp / "elsewhere")
    linked = subprocess.run([str(options.bin / "fb_sweep"), "--var", "A=1", "--out", str(tmp / "linked"), "--",
                             "true"], capture_output=True, timeout=120)
    expect(linked.returncode == 2 and b"symbolic link" in linked.stderr and (tmp / "elsewhere/0.json").exists(),
           f"a PREFIX.runs that is a link: exit {linked.returncode} {linked.stderr[-200:]}")
    print("the user's files under a sweep's names are kept (or refuse the sweep); a linked PREFIX.runs is refused")
    # A benchmark's own run at PREFIX.json (`--out before` beside before.json) is fabricbench's, but
    # no sweep's: refused before any launch, never removed.
    (tmp / "before.json").write_text(source.read_text())
    mine = subprocess.run([str(options.bin / "fb_sweep"), "--var", "A=1", "--out", str(tmp / "before"), "--",
                           str(copier)], capture_output=True, timeout=120)
    expect(mine.returncode == 2 and b"not known to be an earlier sweep's" in mine.stderr and
           (tmp / "before.json").read_text() == source.read_text() and not (tmp / "before.runs/0.log").exists(),
           f"a run of the user's at PREFIX.json: exit {mine.returncode} {mine.stderr[-300:]}")
    print("a benchmark's run under the merged names refuses the sweep before any launch and is kept")


def test_closed_output(options, tmp):
    """`fb_sweep ... | head -1`: the sweep goes on (every launch runs and is merged), then says its
    table was lost and exits 3; it was killed by SIGPIPE (141), silently, after its first launch."""
    copier = launcher(tmp, "run.sh", 'while [ $# -gt 0 ]; do [ "$1" = --json ] && echo \'{"x": 1}\' > "$2"; shift; done')
    prefix = str(tmp / "closed")
    sweep = subprocess.Popen([str(options.bin / "fb_sweep"), "--var", "A=1,2,3", "--out", prefix, "--", str(copier)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    sweep.stdout.close()  # before its first line
    _, err = sweep.communicate(timeout=120)
    launched = sorted(p.name for p in Path(prefix + ".runs").glob("*.log"))
    expect(sweep.returncode == 3 and b"writing to standard output failed" in err and launched == ["0.log", "1.log",
                                                                                                    "2.log"],
           f"fb_sweep with its output closed: exit {sweep.returncode}, {err[-200:]}, launched {launched}")
    print(f"fb_sweep with its output closed: every launch ran ({launched}), exit 3, said so")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, type=Path)
    options = parser.parse_args()
    for test in (test_bad_input, test_results_are_each_launchs_own, test_timeout_and_leftovers, test_signals,
                 test_strays_outside_the_group, test_closed_output):
        with tempfile.TemporaryDirectory() as tmp:
            test(options, Path(tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
