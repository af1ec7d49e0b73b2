#!/usr/bin/env python3
"""Serves a stored MCP `tools/list` capture over stdio, as the live server would.

Usage: serve_capture.py CAPTURE.tools.json [SERVER-NAME [VERSION]]

Lets the documentation's `pcsim capture` and `pcsim config` examples run offline, from the captures
in this folder, with the same tools the real servers listed (answers initialize, tools/list in one
page, ping; anything else with "method not found").
"""
import json
import os
import sys


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: serve_capture.py CAPTURE.tools.json [NAME [VERSION]]\n")
        sys.exit(2)
    path = sys.argv[1]
    with open(path) as f:
        result = json.load(f)
    default = os.path.basename(path).split(".")[0]
    name = sys.argv[2] if len(sys.argv) > 2 else default
    version = sys.argv[3] if len(sys.argv) > 3 else "capture"
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method = msg.get("method")
        if method is None or "id" not in msg:
            continue
        if method == "initialize":
            send({
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": name, "version": version},
                },
            })
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}})


if __name__ == "__main__":
    main()
