#!/usr/bin/env python3
"""A scripted fake MCP server for the fuzzer (a test fixture, not part of pcsim).

Usage: script_server.py FILE
Writes FILE to its standard output byte for byte (the fuzzed server output: JSON-RPC lines, noise,
anything), closes it and reads its input until the client closes that. The output does not depend on what the
client sends or when, so a run is deterministic; it never touches the network.
"""
import os
import sys

with open(sys.argv[1], "rb") as f:
    data = f.read()
try:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()
    # The whole script is out: closing says so at once, so a script without an answer fails fast.
    os.close(1)  # sys.stdout.close() would leave the descriptor open
except BrokenPipeError:
    sys.exit(0)
try:
    while sys.stdin.buffer.read(65536):
        pass
except (BrokenPipeError, KeyboardInterrupt):
    pass
