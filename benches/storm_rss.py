#!/usr/bin/env python3
"""Memory after connection storms (issue #17 item 12): RSS of a running `croupier run`
before, right after and some seconds after storms of public connections.

    python3 benches/storm_rss.py BINARY [--storms 3] [--viewers 2000] [--sse 400]
        [--requests 2000] [--pause 10] [--env KEY=VALUE ...]

Each storm opens VIEWERS `/ws/public` viewers (handshake done, frames read) and SSE
`/sse/public` streams at once, makes REQUESTS short `GET /api/public` requests on 200
keep-alive connections, then closes everything. The service runs the built-in default
config (demo dealing, simulated shoe) on a fresh database, a free port, `VmRSS` read from
/proc. Prints one markdown row per measurement.
"""

import argparse
import asyncio
import base64
import os
import re
import resource
import socket
import subprocess
import sys
import tempfile
import time


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(r"VmRSS:\s+(\d+) kB", f.read())
    return int(m.group(1)) / 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def ws_viewer(port, hold):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    key = base64.b64encode(os.urandom(16)).decode()
    w.write(
        (
            f"GET /ws/public HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
            f"Sec-WebSocket-Version: 13\r\n\r\n"
        ).encode()
    )
    await w.drain()
    head = await r.readuntil(b"\r\n\r\n")
    ok = head.startswith(b"HTTP/1.1 101")
    await r.read(4096)  # the first frame (the view)
    await hold.wait()
    w.close()
    return ok


async def sse_stream(port, hold):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    w.write(b"GET /sse/public HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n")
    await w.drain()
    head = await r.readuntil(b"\r\n\r\n")
    ok = b" 200 " in head.split(b"\r\n")[0]
    await hold.wait()
    w.close()
    return ok


async def requests(port, n):
    r, w = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(n):
        w.write(b"GET /api/public HTTP/1.1\r\nHost: t\r\n\r\n")
        await w.drain()
        head = await r.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"content-length: (\d+)", head, re.I).group(1))
        await r.readexactly(length)
        if b" 200 " not in head.split(b"\r\n")[0]:
            break  # refused (503 and the connection closed): the storm goes on without it
    w.close()


async def storm(port, viewers, sse, reqs):
    hold = asyncio.Event()
    tasks = [asyncio.create_task(ws_viewer(port, hold)) for _ in range(viewers)]
    tasks += [asyncio.create_task(sse_stream(port, hold)) for _ in range(sse)]
    await asyncio.gather(*(requests(port, reqs // 200) for _ in range(200)))
    await asyncio.sleep(2)
    hold.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    return sum(1 for x in results if x is True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--storms", type=int, default=3)
    ap.add_argument("--viewers", type=int, default=2000)
    ap.add_argument("--sse", type=int, default=400)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--pause", type=float, default=10)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--gdb-trim", action="store_true", help="then call malloc_trim(0) in the process through gdb, to measure what it gives back")
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    port = free_port()
    d = tempfile.mkdtemp()
    cfg = os.path.join(d, "table.toml")
    text = subprocess.run(
        [a.binary, "check-config", "--print-default"], capture_output=True, text=True
    ).stdout
    if "[table]" not in text:
        text = open(os.path.join(os.path.dirname(__file__), "..", "config", "table.toml")).read()
    text = text.replace('path = "data/croupier.db"', f'path = "{d}/croupier.db"')
    text = text.replace('bind = "127.0.0.1:8080"', f'bind = "127.0.0.1:{port}"')
    open(cfg, "w").write(text)
    env = dict(os.environ)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    p = subprocess.Popen(
        [a.binary, "run", "--config", cfg],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        for _ in range(300):
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        time.sleep(3)
        print(f"| when | RSS MB |\n|---|---|\n| after start | {rss_mb(p.pid):.1f} |")
        for i in range(a.storms):
            t0 = time.time()
            ok = asyncio.run(storm(port, a.viewers, a.sse, a.requests))
            print(f"| storm {i + 1}: {ok} streams served, closed ({time.time() - t0:.1f} s) | {rss_mb(p.pid):.1f} |")
            time.sleep(a.pause)
            print(f"| storm {i + 1} + {a.pause:.0f} s | {rss_mb(p.pid):.1f} |")
            sys.stdout.flush()
        if a.gdb_trim:
            subprocess.run(
                ["gdb", "-p", str(p.pid), "-batch", "-ex", "call (int) malloc_trim(0)"],
                capture_output=True,
            )
            print(f"| malloc_trim(0) through gdb | {rss_mb(p.pid):.1f} |")
    finally:
        p.terminate()
        p.wait()


if __name__ == "__main__":
    main()
