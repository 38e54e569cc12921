#!/usr/bin/env python3
"""A control-plane proxy that kills or freezes a pair conversation at one phase.

  cut_proxy.py LISTEN_PORT SERVER_HOST SERVER_PORT PHASE MODE

Accepts one client on LISTEN_PORT, connects to the server, and relays whole
frames both ways (the RDMA traffic itself goes straight between the two
devices). When the client's frame that starts PHASE has been relayed, it acts:

  PHASE  hello      the client's Hello (connect)
         info       Command "info"
         setup      Command "setup" (the server builds its QPs and memory)
         endpoints  the client's EndpointExchange (QP connection)
         run        Command "run" (the server runs its part)
         finish     Command "finish" (the server checks the payload)
         goodbye    the frame before Goodbye is the last relayed (teardown):
                    Goodbye itself is never passed on
  MODE   close      close both connections at once (a client that died)
         freeze     relay nothing more in either direction but keep both
                    connections open (a stopped client: SIGSTOP)
         kill=PID   send SIGKILL to process PID (either end), then go on
                    relaying; when one side's connection ends, end the other's
         stop=PID   the same with SIGSTOP (PID stays stopped)
                    (PID may be @FILE: the number in FILE, read when acting;
                    a negative number -PGID: every process of group PGID)

With "run" the trigger is the Nth run command (PHASE run:N, default 1).
Prints one line when it acts, then (freeze) waits to be killed.
"""
import os
import signal
import socket
import struct
import sys
import threading
import time

HEADER = struct.Struct("<IHHI")
TYPES = {1: "Hello", 2: "EndpointExchange", 3: "Command", 7: "Goodbye", 9: "Keepalive"}


def read_exact(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError
        buf += chunk
    return buf


def read_frame(sock):
    header = read_exact(sock, HEADER.size)
    _, _, mtype, length = HEADER.unpack(header)
    return mtype, header + read_exact(sock, length)


def command_name(frame):
    # Command payload: u64 sequence, then the benchmark name as u32 length + bytes.
    (n,) = struct.unpack_from("<I", frame, HEADER.size + 8)
    return frame[HEADER.size + 12:HEADER.size + 12 + n].decode()


def phase_of(mtype, frame):
    if mtype == 1:
        return "hello"
    if mtype == 2:
        return "endpoints"
    if mtype == 3:
        return command_name(frame)
    if mtype == 7:
        return "goodbye"
    return None


def main():
    listen_port, host, port = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    phase, mode = sys.argv[4], sys.argv[5]
    nth = 1
    victim, sig = None, None
    if mode.startswith(("kill=", "stop=")):
        sig = signal.SIGKILL if mode.startswith("kill=") else signal.SIGSTOP
        mode, victim = mode.split("=", 1)
    if ":" in phase:
        phase, n = phase.split(":")
        nth = int(n)
    ls = socket.create_server(("0.0.0.0", listen_port), reuse_port=True)
    client, _ = ls.accept()
    server = socket.create_connection((host, port), timeout=30)
    server.settimeout(None)
    stop = threading.Event()
    lock = threading.Lock()

    acted = threading.Event()

    def act(what):
        with lock:
            if acted.is_set():
                return
            acted.set()
            if victim is None:
                stop.set()
        gone = ""
        if victim is not None:
            pid = int(open(victim[1:]).read()) if victim.startswith("@") else int(victim)
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                gone = f" (process {pid} had already exited)"
        print(f"cut_proxy: {mode} after {what}{gone} at {time.time():.3f}", flush=True)
        if mode == "close":
            client.close()
            server.close()

    def end_both():
        # kill/stop: one side's connection ended; the other learns it at once.
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def server_to_client():
        try:
            while not stop.is_set():
                _, frame = read_frame(server)
                if stop.is_set():
                    return
                client.sendall(frame)
        except (EOFError, OSError):
            pass
        if victim is not None:
            end_both()

    threading.Thread(target=server_to_client, daemon=True).start()
    seen = 0
    try:
        while not stop.is_set():
            mtype, frame = read_frame(client)
            this = phase_of(mtype, frame)
            if phase == "goodbye" and this == "goodbye":
                act("the last frame before Goodbye")
                if victim is not None:
                    end_both()
                break
            if stop.is_set():
                break
            server.sendall(frame)
            if this == phase:
                seen += 1
                if seen == nth:
                    # Let the server take the frame before the cut.
                    time.sleep(0.3)
                    act(f"{TYPES.get(mtype, mtype)} '{this}'")
    except (EOFError, OSError):
        if not acted.is_set():
            print("cut_proxy: the conversation ended before the phase", flush=True)
            sys.exit(3)
        end_both()
    if mode == "freeze":
        while True:
            time.sleep(3600)


if __name__ == "__main__":
    main()
