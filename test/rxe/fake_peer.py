#!/usr/bin/env python3
"""A control-plane peer of another protocol version, for the fault tests.

  fake_peer.py server PORT   accept one client, answer its Hello with version 99
  fake_peer.py client PORT   connect, send a Hello of version 99, print the reply
  fake_peer.py garbage PORT  send random bytes, then an HTTP request, on two connections
"""
import os
import socket
import struct
import sys

MAGIC = 0x50434246  # "FBCP" little-endian
HELLO = 1


def hello_frame(version=99, build="9.9.9", host="fake-peer"):
    def s(x):
        b = x.encode()
        return struct.pack("<I", len(b)) + b
    payload = struct.pack("<H", version) + s(build) + s(host) + struct.pack("<II", 0, 0)
    return struct.pack("<IHHI", MAGIC, version, HELLO, len(payload)) + payload


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "server":
        ls = socket.create_server(("0.0.0.0", port), reuse_port=True)
        ls.settimeout(60)
        conn, _ = ls.accept()
        conn.settimeout(10)
        conn.recv(4096)  # the client's Hello
        conn.sendall(hello_frame())
        conn.recv(4096)  # wait for the client to give up
        conn.close()
    elif mode == "client":
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(hello_frame())
        data = c.recv(4096)
        print(f"server replied {len(data)} bytes")
        c.close()
    elif mode == "garbage":
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(os.urandom(4096))
        c.close()
        c = socket.create_connection(("127.0.0.1", port), timeout=10)
        c.sendall(b"GET / HTTP/1.1\r\nHost: fabench\r\n\r\n")
        c.close()
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
