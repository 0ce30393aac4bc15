#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fbplot.py report opened in a real browser (Debian's headless Chromium): the screenshot is not
blank, the verdict table is on the page, and a run tagged with a script and a network image shows
them as text - no script runs (nothing reaches Chromium's console) and nothing is fetched (a
loopback HTTP server that the tag points at gets no request)."""
import argparse
import http.server
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

SKIP = 77


def fail(message):
    print("FAIL:", message)
    sys.exit(1)


class CountingHandler(http.server.BaseHTTPRequestHandler):
    requests = []

    def do_GET(self):  # noqa: N802 (the standard library's name)
        CountingHandler.requests.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True, type=Path)
    parser.add_argument("--mpirun", required=True)
    parser.add_argument("--fbplot", required=True, type=Path)
    parser.add_argument("--keep", type=Path, help="copy the screenshot here")
    options = parser.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium missing (scripts/setup.sh --tests installs it)")
        return SKIP
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CountingHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    beacon = f"http://127.0.0.1:{server.server_address[1]}/beacon"
    hostile = f"x=<script>console.log('FBPWNED')</script><img src={beacon}>"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_tcp_if_include="lo", OMPI_MCA_oob_tcp_if_include="lo")
    with tempfile.TemporaryDirectory() as tmp:
        for name, tags in (("base", ["--tag", "x=baseline"]), ("new", ["--tag", hostile])):
            result = subprocess.run([options.mpirun, "--oversubscribe", "-np", "2", str(options.bin / "fb_all_reduce"),
                                     "--backend", "mpi", "-b", "1K", "-e", "1M", "-f", "8", "--json",
                                     f"{tmp}/{name}.json"] + tags, env=env, capture_output=True, text=True, timeout=120)
            if result.returncode != 0:
                fail(f"fb_all_reduce ({name}): exit {result.returncode}\n{result.stderr}")
        report = Path(tmp) / "report.html"
        result = subprocess.run([sys.executable, str(options.fbplot), "report", f"{tmp}/new.json", "--baseline",
                                 f"{tmp}/base.json", "--compare-bin", str(options.bin / "fb_compare"),
                                 "--out", str(report)], capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            fail(f"fbplot report: exit {result.returncode}\n{result.stderr}")
        page = report.read_text()
        # A real element (not escaped text) that is a script or points at the network.
        if re.search(r"<script|<[^>]*\b(src|href)\s*=\s*['\"]?(https?:)?//", page, re.I):
            fail("the report holds a script element or one that loads from the network")
        shot = Path(tmp) / "shot.png"
        common = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                  "--no-first-run", "--user-data-dir=" + f"{tmp}/profile", "--window-size=1200,1800"]
        run_browser = lambda extra: subprocess.run(common + extra + [report.as_uri()], capture_output=True,
                                                   text=True, timeout=120)
        shot_run = run_browser(["--enable-logging=stderr", "--v=0", f"--screenshot={shot}"])
        dom = run_browser(["--dump-dom"])
        if not shot.is_file() or dom.returncode != 0:
            fail(f"chromium: no screenshot or DOM (exit {shot_run.returncode}/{dom.returncode})\n{shot_run.stderr[-2000:]}")
        if "FBPWNED" in shot_run.stderr or "FBPWNED" in dom.stderr:
            fail("the tag's script ran: its console message is in Chromium's log")
        if CountingHandler.requests:
            fail(f"the page fetched {CountingHandler.requests} from the network")
        text = dom.stdout
        if "<script" in text.lower() or "&lt;script&gt;console.log('FBPWNED')&lt;/script&gt;&lt;img src=" not in text:
            fail("the browser's DOM does not show the tag as text (or holds a script element)")
        verdict_words = [w for w in ("SAME", "UNSURE", "SLOWER", "FASTER") if f"<td>{w}</td>" in text]
        if "<th>verdict</th>" not in text or not verdict_words:
            fail("the verdict table is not on the rendered page")
        import matplotlib.image  # only here: the test needs matplotlib as fbplot does
        pixels = matplotlib.image.imread(str(shot))
        ink = float((pixels[:, :, :3].mean(axis=2) < 0.9).mean())
        colours = len({tuple(p) for p in (pixels[::7, ::7, :3] * 255).astype(int).reshape(-1, 3).tolist()})
        if ink < 0.02 or colours < 20:
            fail(f"the screenshot looks blank: {ink * 100:.1f} % ink, {colours} colours")
        if options.keep:
            shutil.copy(shot, options.keep)
        print(f"chromium {chromium}: screenshot {pixels.shape[1]}x{pixels.shape[0]}, {ink * 100:.1f} % ink, "
              f"{colours} colours; verdict table with {verdict_words}; the tag shown as text, no console "
              f"message, 0 requests to {beacon}")
    server.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
