#!/usr/bin/env python3
"""The inspector's page in a real headless browser (Debian's chromium),
during a short training run: the DOM shows the actors, a batch counter that
moves between two loads, the curves' canvases drawn from live data; and the
terminal view (`actorrec inspect`) redrawn in place under tmux. Saves a
screenshot of the page. Exits 77 (skipped) without chromium or tmux.

  tests/cluster/browser_test.py build/actorrec [SCREENSHOT.png]
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")


def dom(url, budget_ms, tmp, fragment=""):
    """The page's DOM after `budget_ms` of virtual time with scripts run.
    With ?poll=1 the page polls instead of holding a stream open, which
    virtual time would wait for until the run ends. `fragment`: what a
    click sets after the address's #, e.g. trainer=1."""
    url += "?poll=1" + ("#" + fragment if fragment else "")
    out = subprocess.run(
        [BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + tmp,
         "--virtual-time-budget=%d" % budget_ms, "--dump-dom", url],
        capture_output=True, text=True, timeout=120)
    return out.stdout


def batch_in(page):
    m = re.search(r'<span class="big" id="batch">(\d+)</span>', page)
    return int(m.group(1)) if m else -1


def main():
    actorrec = os.path.abspath(sys.argv[1])
    shot = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
    if BROWSER is None:
        print("no chromium: skipped (tools/install-deps.sh installs it)")
        return 77
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    with tempfile.TemporaryDirectory() as tmp:
        log = open(os.path.join(tmp, "train.log"), "w+")
        train = subprocess.Popen([actorrec, "train", "--set", "training.eval_every=100", "--roofline",
                                  "--inspect", "127.0.0.1:0"],
                                 cwd=tmp, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = None
            for _ in range(600):
                with open(log.name) as f:
                    m = re.search(r"inspector: (http://127\.0\.0\.1:\d+/)", f.read())
                if m:
                    url = m.group(1)
                    break
                time.sleep(0.1)
            check(url is not None, "train printed the inspector's address")
            if url is None:
                return 1
            # Wait until batches move, then load the page twice.
            first = dom(url, 3000, os.path.join(tmp, "profile1"))
            for _ in range(60):
                if batch_in(first) > 0:
                    break
                time.sleep(1)
                first = dom(url, 3000, os.path.join(tmp, "profile1"))
            time.sleep(3)
            second = dom(url, 3000, os.path.join(tmp, "profile2"))
            check("trainer[1]" in first and "embedding_shard[0]" in first and "oracle" in first,
                  "the DOM lists the actors")
            check(batch_in(first) > 0, "the batch counter shows batches (%d)" % batch_in(first))
            check(batch_in(second) > batch_in(first),
                  "the batch counter moves (%d, then %d)" % (batch_in(first), batch_in(second)))
            check('id="loss"' in second and 'id="phases"' in second and 'data-version=' in second,
                  "the curves' canvases are there and the page rendered a snapshot")
            check('<span id="error"></span>' in second, "the page is connected (no error shown)")
            # Each actor's mailbox depth and messages/s in the tree.
            box = re.search(r'<span class="mailbox" data-actor="trainer\[1\]">(\d+) queued · ([0-9–]+) msg/s</span>', second)
            check(box is not None, "the tree shows trainer[1]'s mailbox and messages/s")
            check(re.search(r'data-actor="oracle">\d+ queued · \d+ msg/s', second) is not None,
                  "the oracle's messages/s is a number once a second has passed")
            # Each trainer's cache partition: occupancy of its slots, hit share.
            part = re.search(r'<tr class="partition"><td><a class="trainer" href="#trainer=1">trainer\[1\]</a></td>'
                             r'<td><span class="cell-bar"><i style="width:[0-9.]+%"></i></span>(\d+) / (\d+)</td>'
                             r'<td>([0-9.]+) %</td>', second)
            check(part is not None and 0 < int(part.group(1)) <= int(part.group(2)) and 0 <= float(part.group(3)) <= 100,
                  "the partitions show trainer[1]'s occupancy and hit share")
            check(re.search(r'<tr class="link"><td>embedding shards → cache_partition\[0\]</td><td>[0-9.]+ MB', second)
                  is not None, "the bytes per link are shown")
            check(re.search(r'<b id="roofline-share">[0-9.]+ %</b>', second) is not None,
                  "the GEMM rate is shown against the roofline")
            check('<tr class="shard"><td>embedding_shard[0]</td>' in second, "the shards' residency is shown")
            # A click on a trainer sets #trainer=W: its current plan's summary.
            plan = dom(url, 3000, os.path.join(tmp, "profile4"), "trainer=1")
            check(re.search(r'<th colspan="2">trainer\[1\] · batch \d+ \(epoch \d+\) · lookahead \d+</th>', plan)
                  is not None and re.search(r'<td>rows fetched</td><td class="plan-value">\d+</td>', plan) is not None
                  and "sync hidden (delayed, in the background)" in plan,
                  "#trainer=1 (a click) shows trainer[1]'s plan")
            check('<li class="actor selected"><a class="trainer" href="#trainer=1">' in plan,
                  "the clicked trainer is marked in the tree")
            if shot:
                subprocess.run([BROWSER, "--headless=new", "--no-sandbox", "--disable-gpu",
                                "--user-data-dir=" + os.path.join(tmp, "profile3"), "--hide-scrollbars",
                                "--virtual-time-budget=4000", "--window-size=1280,1100",
                                "--screenshot=" + shot, url + "?poll=1#trainer=1"], capture_output=True, timeout=120)
                check(os.path.exists(shot) and os.path.getsize(shot) > 10000, "a screenshot was saved")
            # The terminal view under tmux: redrawn in place.
            if shutil.which("tmux"):
                port = url.rsplit(":", 1)[1].strip("/")
                session = "actorrec-inspect-%d" % os.getpid()
                subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "160", "-y", "30",
                                actorrec, "inspect", "127.0.0.1:" + port], check=True)
                try:
                    time.sleep(2.5)
                    a = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                                       text=True).stdout
                    time.sleep(2.5)
                    b = subprocess.run(["tmux", "capture-pane", "-p", "-t", session], capture_output=True,
                                       text=True).stdout
                finally:
                    subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
                check(a.startswith("actorrec local") and b.startswith("actorrec local"),
                      "tmux: the view starts at the top of the screen (redrawn in place)")
                check(a.count("samples/s") == 1 and b.count("samples/s") == 1, "tmux: one view on screen, not a scroll")
                ba = re.search(r"^batch (\d+)", a, re.M)
                bb = re.search(r"^batch (\d+)", b, re.M)
                check(ba is not None and bb is not None and int(bb.group(1)) > int(ba.group(1)),
                      "tmux: the batch counter moves")
            else:
                print("no tmux: the terminal view is not checked")
        finally:
            train.terminate()
            try:
                train.wait(60)
            except subprocess.TimeoutExpired:
                train.kill()
                train.wait()
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
