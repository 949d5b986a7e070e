#!/usr/bin/env python3
"""Prints N (default 2) free local TCP ports on one line, for scripts that start a server."""

import socket
import sys

count = int(sys.argv[1]) if len(sys.argv) > 1 else 2
socks = [socket.socket() for _ in range(count)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))
for s in socks:
    s.close()
