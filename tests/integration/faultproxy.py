#!/usr/bin/env python3
"""faultproxy.py: a TCP forwarder for the cluster tests that can be switched
at run time between three modes, to simulate network faults between peers:

  pass    forward bytes both ways (the default)
  drop    black hole: accept connections and read, but never forward or
          answer anything (existing connections stall too) -- a peer that
          hangs, as seen through a partition or a dead router
  refuse  close the listening socket and every open connection, so new
          connections get "connection refused" -- a peer that is down

The mode is read from a control file (one word) every 50 ms, so a test
switches it with `echo drop > CTL`. SIGUSR1 selects drop, SIGUSR2 pass.
With --state F the mode in force is written to F (atomically) once the
switch is complete, so a test can wait for the switch itself; a
second line, "swallowed N", counts the connections taken in drop mode
that their client gave up on (closed unanswered, e.g. on its timeout).

usage: faultproxy.py --target HOST:PORT [--listen PORT] [--port-file F]
                     [--control F] [--state F] [--mode pass|drop|refuse]
With --listen 0 an ephemeral port is bound and written to --port-file.
"""

import argparse
import asyncio
import os
import signal
import socket
import sys

MODES = ("pass", "drop", "refuse")


class Proxy:
    def __init__(self, args):
        self.host, port = args.target.rsplit(":", 1)
        self.tport = int(port)
        self.listen_port = args.listen
        self.port_file = args.port_file
        self.control = args.control
        self.state = args.state
        self.swallowed = 0
        self.mode = args.mode
        self.server = None
        self.conns = set()      # writers of live connections

    async def start_listening(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.listen_port))
        sock.listen(128)
        self.listen_port = sock.getsockname()[1]
        self.server = await asyncio.start_server(self.handle, sock=sock)
        if self.port_file:
            tmp = self.port_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("%d\n" % self.listen_port)
            os.rename(tmp, self.port_file)

    def stop_listening(self):
        if self.server is not None:
            self.server.close()
            self.server = None
        for w in list(self.conns):
            try:
                w.transport.abort()
            except Exception:
                pass
        self.conns.clear()

    def write_state(self):
        if self.state:
            tmp = self.state + ".tmp"
            with open(tmp, "w") as f:
                f.write("%s\nswallowed %d\n" % (self.mode, self.swallowed))
            os.rename(tmp, self.state)

    async def set_mode(self, mode):
        if mode not in MODES or mode == self.mode:
            return
        old, self.mode = self.mode, mode
        print("faultproxy: %s -> %s" % (old, mode), file=sys.stderr,
              flush=True)
        if mode == "refuse":
            self.stop_listening()
        elif old == "refuse":
            await self.start_listening()
        self.write_state()

    async def pump(self, reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                # In drop mode the bytes vanish: nothing is forwarded, so
                # the other side waits until its own timeout.
                while self.mode == "drop":
                    await asyncio.sleep(0.05)
                    if reader.at_eof():
                        return
                if self.mode == "refuse":
                    break
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError, asyncio.CancelledError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    async def handle(self, creader, cwriter):
        self.conns.add(cwriter)
        try:
            if self.mode == "drop":
                # Accept, swallow, never answer; forward nothing even if
                # the mode changes later (that connection is lost).
                while not creader.at_eof():
                    if not await creader.read(65536):
                        break
                self.swallowed += 1
                self.write_state()
                return
            try:
                treader, twriter = await asyncio.open_connection(
                    self.host, self.tport)
            except OSError:
                cwriter.transport.abort()
                return
            self.conns.add(twriter)
            await asyncio.gather(self.pump(creader, twriter),
                                 self.pump(treader, cwriter))
            self.conns.discard(twriter)
        except (ConnectionError, OSError):
            pass
        finally:
            self.conns.discard(cwriter)
            try:
                cwriter.close()
            except Exception:
                pass

    async def watch_control(self):
        while True:
            if self.control:
                try:
                    with open(self.control) as f:
                        word = f.read().strip()
                    if word:
                        await self.set_mode(word)
                except FileNotFoundError:
                    pass
            await asyncio.sleep(0.05)

    async def run(self):
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(
            signal.SIGUSR1, lambda: loop.create_task(self.set_mode("drop")))
        loop.add_signal_handler(
            signal.SIGUSR2, lambda: loop.create_task(self.set_mode("pass")))
        stop = loop.create_future()
        for s in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(s, lambda: stop.done() or
                                    stop.set_result(None))
        if self.mode != "refuse":
            await self.start_listening()
        elif self.port_file and self.listen_port == 0:
            sys.exit("faultproxy: --mode refuse needs a fixed --listen port")
        self.write_state()
        watcher = loop.create_task(self.watch_control())
        await stop
        watcher.cancel()
        self.stop_listening()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", required=True, help="HOST:PORT to forward to")
    ap.add_argument("--listen", type=int, default=0)
    ap.add_argument("--port-file")
    ap.add_argument("--control")
    ap.add_argument("--state")
    ap.add_argument("--mode", choices=MODES, default="pass")
    args = ap.parse_args()
    asyncio.run(Proxy(args).run())


if __name__ == "__main__":
    main()
