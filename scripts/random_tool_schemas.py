#!/usr/bin/env python3
"""Writes tests/fixtures/tool-tokens/random-schemas.tools.json: 40 tools with random JSON schemas
(seeded, so the file is reproducible) that mix every form a tool schema takes in the wild: nested
objects, arrays with and without items, enums of strings, numbers, booleans and null, oneOf / anyOf /
allOf, type lists, const, $ref and $defs, defaults of every JSON type, formats, titles, examples,
nullable, bounds, patterns, additionalProperties, $schema, multi-line descriptions and descriptions
holding comment markers and quotes.

scripts/tool_tokens_reference.py then records openai-harmony's rendering of the file (its length, hash
and o200k count) in expected-o200k-harmony.json, and tests/integration/tokens.rs holds pcsim's
harmony rendering to it, byte for byte: a differential test beyond what the 15 captures contain.

Usage (from the repository root): python3 scripts/random_tool_schemas.py
"""

import json
import random

SEED = 31
COUNT = 40
OUT = "tests/fixtures/tool-tokens/random-schemas.tools.json"
WORDS = "alpha beta gamma delta path query page id name limit offset format url owner repo title body state sort".split()


def desc(rng):
    if rng.random() < 0.3:
        return None
    s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12)))
    if rng.random() < 0.2:
        s += "\nSecond line: " + rng.choice(WORDS)
    if rng.random() < 0.1:
        s += " (e.g. \"x\" // y */ ` | {z})"
    if rng.random() < 0.1:
        s = s + "."
    return s


def schema(rng, depth=0):
    kinds = ["string", "integer", "number", "boolean", "array", "object", "enum", "oneOf", "anyOf",
             "allOf", "typelist", "const", "ref", "none", "null"]
    if depth > 2:
        kinds = kinds[:4] + ["enum"]
    k = rng.choice(kinds)
    s = {}
    if k in ("string", "integer", "number", "boolean", "null"):
        s["type"] = k
    elif k == "array":
        s["type"] = "array"
        if rng.random() < 0.8:
            s["items"] = schema(rng, depth + 1)
        if rng.random() < 0.2:
            s["minItems"] = 1
    elif k == "object":
        s["type"] = "object"
        if rng.random() < 0.8:
            props = {f"{rng.choice(WORDS)}_{i}": schema(rng, depth + 1) for i in range(rng.randint(0, 4))}
            s["properties"] = props
            if props and rng.random() < 0.7:
                s["required"] = rng.sample(list(props), rng.randint(0, len(props)))
        if rng.random() < 0.3:
            s["additionalProperties"] = rng.choice([False, True, {"type": "string"}])
    elif k == "enum":
        s["enum"] = rng.sample(["a", "b", "c d", "e\"f", 1, 2.5, True, None], rng.randint(1, 4))
        if rng.random() < 0.5:
            s["type"] = "string"
    elif k in ("oneOf", "anyOf", "allOf"):
        s[k] = [schema(rng, depth + 1) for _ in range(rng.randint(1, 3))]
    elif k == "typelist":
        s["type"] = rng.sample(["string", "null", "integer", "boolean", "array", "object"], 2)
    elif k == "const":
        s["const"] = rng.choice(["x", 3, True])
    elif k == "ref":
        s["$ref"] = "#/$defs/X"
    d = desc(rng)
    if d:
        s["description"] = d
    if rng.random() < 0.2:
        s["default"] = rng.choice(["d", 0, 1.5, False, None, [1, 2], {"k": "v"}])
    if rng.random() < 0.1:
        s["format"] = rng.choice(["uri", "date-time", "email"])
    if rng.random() < 0.1:
        s["title"] = "T"
    if rng.random() < 0.1:
        s["examples"] = ["ex"]
    if rng.random() < 0.1:
        s["nullable"] = True
    if rng.random() < 0.1:
        s["minimum"] = 0
        s["maximum"] = 10
    if rng.random() < 0.1:
        s["pattern"] = "^a+$"
    if rng.random() < 0.05:
        s["deprecated"] = True
    return s


def main():
    rng = random.Random(SEED)
    tools = []
    for i in range(COUNT):
        props = {f"{rng.choice(WORDS)}_{j}": schema(rng, 1) for j in range(rng.randint(0, 5))}
        sch = {"type": "object", "properties": props}
        if props and rng.random() < 0.8:
            sch["required"] = rng.sample(list(props), rng.randint(0, len(props)))
        if rng.random() < 0.2:
            sch["$schema"] = "http://json-schema.org/draft-07/schema#"
        if rng.random() < 0.2:
            sch["additionalProperties"] = False
        if rng.random() < 0.1:
            sch["$defs"] = {"X": {"type": "string"}}
        if rng.random() < 0.05:
            sch = {"type": "object"}
        t = {"name": f"tool_{i:02}_{rng.choice(WORDS)}", "inputSchema": sch}
        d = desc(rng)
        if d:
            t["description"] = d
        tools.append(t)
    with open(OUT, "w") as f:
        json.dump({"tools": tools}, f, indent=1)
        f.write("\n")
    print(f"{OUT}: {len(tools)} tools")


if __name__ == "__main__":
    main()
