#!/usr/bin/env python3
"""Expected o200k_base token counts of OpenAI's harmony tool rendering, from the reference code.

For every tool file (the 15 MCP captures of tests/fixtures/reference/mcp and the files of
tests/fixtures/tool-tokens), this renders a developer message that carries only the tool list, the way
gpt-oss / GPT-5 see it (`DeveloperContent.with_function_tools`), with two independent references:

  harmony_tokens   len(encoding.render(message)) from PyPI `openai-harmony` (OpenAI's own renderer
                   and tokenizer, HARMONY_GPT_OSS encoding)
  tiktoken_tokens  PyPI `tiktoken` o200k_base count of the same text (special tokens counted as one
                   token each)

and writes tests/fixtures/tool-tokens/expected-o200k-harmony.json, which the Rust test
(tests/integration/tokens.rs) compares with pcsim's own renderer and embedded tokenizer, exactly.

Offline: both packages normally download the vocabulary. This script points them at the copy that the
`tiktoken-rs` crate ships (cargo's registry, or --vocab FILE): `openai-harmony` reads the folder named by
TIKTOKEN_ENCODINGS_BASE, `tiktoken` reads TIKTOKEN_CACHE_DIR, where the file is named by the sha1 of its
download URL. Both check the file's sha256.

Usage (from the repository root):
  python3 -m venv /tmp/hv && /tmp/hv/bin/pip install openai-harmony==0.0.8 tiktoken==0.14.0
  /tmp/hv/bin/python scripts/tool_tokens_reference.py
"""

import argparse
import glob
import hashlib
import json
import os
import shutil
import sys
import tempfile

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
FIXTURES = "tests/fixtures/tool-tokens"
OUT = os.path.join(FIXTURES, "expected-o200k-harmony.json")


def find_vocab(explicit):
    if explicit:
        return explicit
    home = os.path.expanduser(os.environ.get("CARGO_HOME", "~/.cargo"))
    found = sorted(glob.glob(os.path.join(home, "registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken")))
    if not found:
        sys.exit("o200k_base.tiktoken not found in cargo's registry (run `cargo fetch`), or pass --vocab FILE")
    return found[-1]


def setup_offline_vocab(vocab):
    data = open(vocab, "rb").read()
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        sys.exit(f"{vocab}: sha256 is not o200k_base's")
    base = tempfile.mkdtemp(prefix="o200k-")
    shutil.copy(vocab, os.path.join(base, "o200k_base.tiktoken"))
    cache = tempfile.mkdtemp(prefix="tiktoken-cache-")
    shutil.copy(vocab, os.path.join(cache, hashlib.sha1(O200K_URL.encode()).hexdigest()))
    os.environ["TIKTOKEN_ENCODINGS_BASE"] = base
    os.environ["TIKTOKEN_CACHE_DIR"] = cache


def load_tools(path):
    """The tools as a client sends them: name, description, input schema (MCP-only fields dropped)."""
    doc = json.load(open(path))
    while isinstance(doc, dict) and "result" in doc:
        doc = doc["result"]
    items = doc["tools"] if isinstance(doc, dict) else doc
    tools = []
    for t in items:
        if t.get("type") == "function" and isinstance(t.get("function"), dict):
            t = t["function"]
        schema = t.get("inputSchema", t.get("input_schema", t.get("parameters")))
        if schema is None:
            schema = {"type": "object", "properties": {}}
        tools.append((t["name"], t.get("description") or "", schema))
    return tools


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vocab", help="o200k_base.tiktoken (default: the tiktoken-rs crate's copy)")
    ap.add_argument("--captures", default="tests/fixtures/reference/mcp")
    args = ap.parse_args()
    setup_offline_vocab(find_vocab(args.vocab))

    import openai_harmony as oh
    import tiktoken

    enc = oh.load_harmony_encoding(oh.HarmonyEncodingName.HARMONY_GPT_OSS)
    o200k = tiktoken.get_encoding("o200k_base")
    files = sorted(glob.glob(os.path.join(args.captures, "*.tools.json")))
    if len(files) != 15:
        sys.exit(f"expected the 15 captures in {args.captures}, found {len(files)}")
    inputs = [("captures", f) for f in files]
    inputs += [("fixtures", f) for f in sorted(glob.glob(os.path.join(FIXTURES, "*.tools.json")))]
    inputs += [("examples", "examples/tools/get_weather.json")]
    rows = []
    for where, path in inputs:
        tools = load_tools(path)
        descs = [oh.ToolDescription.new(n, d, parameters=s) for n, d, s in tools]
        dev = oh.DeveloperContent.new().with_function_tools(descs)
        msg = oh.Message.from_role_and_content(oh.Role.DEVELOPER, dev)
        tokens = enc.render(msg)
        text = enc.decode_utf8(tokens)
        # The three formatting tokens: <|start|>, <|message|>, <|end|>.
        specials = ["<|start|>", "<|message|>", "<|end|>"]
        body = text
        for s in specials:
            assert body.count(s) == 1, (path, s)
            body = body.replace(s, "\x00")
        parts = body.split("\x00")
        tk = 3 + sum(len(o200k.encode_ordinary(p)) for p in parts)
        rows.append({
            "file": f"{where}/{os.path.basename(path)}",
            "tools": len(tools),
            "harmony_tokens": len(tokens),
            "tiktoken_tokens": tk,
            "text_bytes": len(text.encode()),
            "text_fnv1a64": f"{fnv1a64(text.encode()):016x}",
        })
        if len(tokens) != tk:
            sys.exit(f"{path}: openai-harmony {len(tokens)} vs tiktoken {tk}")
    # What else the renderer writes when function tools are present: the system message gains a
    # line ("Calls to these tools must go to the commentary channel: 'functions'.").
    sysc = oh.SystemContent.new()
    one = load_tools(os.path.join(FIXTURES, "synthetic-3x20.tools.json"))[:1]
    dev = oh.DeveloperContent.new().with_function_tools(
        [oh.ToolDescription.new(n, d, parameters=s) for n, d, s in one])
    with_tools = enc.render_conversation(oh.Conversation.from_messages(
        [oh.Message.from_role_and_content(oh.Role.SYSTEM, sysc),
         oh.Message.from_role_and_content(oh.Role.DEVELOPER, dev)]))
    dev_alone = enc.render(oh.Message.from_role_and_content(oh.Role.DEVELOPER, dev))
    sys_alone = enc.render(oh.Message.from_role_and_content(oh.Role.SYSTEM, sysc))
    system_line = len(with_tools) - len(dev_alone) - len(sys_alone)
    # Whether the renderer writes a schema's `$defs` (and what it makes of a `$ref` property).
    defs_schema = {"type": "object", "required": ["page"],
                   "properties": {"page": {"$ref": "#/$defs/Page"}},
                   "$defs": {"Page": {"type": "object", "description": "DEFS MARKER",
                                      "properties": {"id": {"type": "string"}}}}}
    defs_text = enc.decode_utf8(enc.render(oh.Message.from_role_and_content(
        oh.Role.DEVELOPER, oh.DeveloperContent.new().with_function_tools(
            [oh.ToolDescription.new("create_page", "Create a page", parameters=defs_schema)]))))
    out = {
        "about": "o200k_base tokens of the harmony developer message carrying only the tool list; "
                 "generated by scripts/tool_tokens_reference.py",
        "system_tools_line_tokens": system_line,
        "defs_probe": {"schema": defs_schema, "rendered": defs_text,
                       "defs_rendered": "DEFS MARKER" in defs_text},
        "openai_harmony": oh.__version__ if hasattr(oh, "__version__") else "0.0.8",
        "tiktoken": tiktoken.__version__,
        "files": rows,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for r in rows:
        print(f"{r['file']:48} {r['tools']:3} tools {r['harmony_tokens']:6} tokens")


if __name__ == "__main__":
    main()
