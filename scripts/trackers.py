#!/usr/bin/env python3
"""Helpers of scripts/check-prices: unpack the trackers' wheels, list differences with their verdicts,
and pin excerpts of the trackers' files for CI. Standard library only (Python 3.11+ for tomllib)."""
import dataclasses, datetime, decimal, glob, hashlib, json, os, re, sys, tomllib, types, urllib.request, zipfile


def released(package, filename):
    """The upload day of a wheel, from PyPI's JSON simple API (what pip itself reads)."""
    req = urllib.request.Request(f"https://pypi.org/simple/{package}/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        files = json.load(r)["files"]
    return next(f["upload-time"][:10] for f in files if f["filename"] == filename)


def genai_json(unpacked):
    """genai-prices' bundled data (a Python module) as JSON in the shape of its dataclasses."""
    sys.path.insert(0, unpacked)
    for m in ("httpx", "httpx2"):  # imported by the package's updater, not needed for the data
        sys.modules.setdefault(m, types.ModuleType(m))
    from genai_prices import data, types as gt

    def enc(o):
        if isinstance(o, decimal.Decimal):
            return float(o)
        if isinstance(o, (datetime.date, datetime.time)):
            return o.isoformat()
        if isinstance(o, gt.ModelPrice):
            return {k: v for k, v in o.__dict__.items() if not k.startswith("_") and v is not None}
        if dataclasses.is_dataclass(o):
            d = {f.name: getattr(o, f.name) for f in dataclasses.fields(o) if not f.name.startswith("_")}
            return {k: v for k, v in d.items() if v is not None}
        raise TypeError(type(o))

    return json.dumps(data.providers, default=enc, indent=1)


def extract(wheels, out):
    trackers = []
    for whl in sorted(glob.glob(os.path.join(wheels, "*.whl"))):
        name = os.path.basename(whl)
        sha = hashlib.sha256(open(whl, "rb").read()).hexdigest()
        version = name.split("-")[1]
        z = zipfile.ZipFile(whl)
        if name.startswith("litellm-"):
            path = os.path.join(out, f"litellm-{version}.json")
            open(path, "wb").write(z.read("litellm/model_prices_and_context_window_backup.json"))
            trackers.append(dict(id=f"litellm-{version}", name="LiteLLM", package="litellm", json=path))
        elif name.startswith("genai_prices-"):
            unpacked = os.path.join(out, "genai")
            z.extractall(unpacked)
            path = os.path.join(out, f"genai-prices-{version}.json")
            open(path, "w").write(genai_json(unpacked))
            trackers.append(dict(id=f"genai-prices-{version}", name="genai-prices", package="genai-prices", json=path))
        else:
            continue
        trackers[-1].update(version=version, wheel=name, sha256=sha, released=released(trackers[-1]["package"], name))
    json.dump(trackers, open(os.path.join(out, "trackers.json"), "w"), indent=1)


def verdicts(check_file, verdict_file):
    """Lists every difference with its verdict; returns 1 when one has none."""
    check = json.load(open(check_file))["check"]
    tracker = check["tracker"]
    table = tomllib.load(open(verdict_file, "rb"))
    known = {(v["model"], v["field"]): v for v in table.get("verdict", []) if v["tracker"] == tracker}
    missing = 0
    print(f"{check['agreeing']} prices agree, {len(check['disagreements'])} differ")
    for d in check["disagreements"]:
        v = known.get((d["model"], d["field"]))
        verdict = f"{v['verdict']}: {v['reason']}" if v else "NO VERDICT (add one to tests/fixtures/trackers/verdicts.toml)"
        missing += v is None
        print(f"  {d['model']:<24} {d['field']:<40} pcsim {d['catalog']}  {tracker} {d['litellm']}  -> {verdict}")
    for m, k in check["missing_keys"]:
        print(f"  {m}: the file has no entry `{k}`")
    return 1 if missing else 0


def pin(trackers_file, catalog, out_dir):
    """Writes excerpts of the trackers' files (the entries the catalog names) and a provenance file."""
    text = open(catalog).read()
    ll_keys = set(re.findall(r'^litellm = "([^"]+)"', text, re.M))
    genai_ids = set(re.findall(r'^genai_prices = "([^"]+)"', text, re.M))
    os.makedirs(out_dir, exist_ok=True)
    prov = []
    for t in json.load(open(trackers_file)):
        full = json.load(open(t["json"]))
        if t["name"] == "LiteLLM":
            excerpt = {k: full[k] for k in sorted(ll_keys) if k in full}
        else:
            excerpt = []
            for p in full:
                models = [m for m in p["models"] if f"{p['id']}/{m['id']}" in genai_ids]
                if models:
                    excerpt.append({"id": p["id"], "name": p.get("name"), "models": models})
        name = f"{t['id']}.json"
        json.dump(excerpt, open(os.path.join(out_dir, name), "w"), indent=1, sort_keys=False)
        open(os.path.join(out_dir, name), "a").write("\n")
        prov.append({k: t[k] for k in ("id", "name", "version", "released", "wheel", "sha256")} | {"excerpt": name})
    json.dump(prov, open(os.path.join(out_dir, "provenance.json"), "w"), indent=1)
    open(os.path.join(out_dir, "provenance.json"), "a").write("\n")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "extract":
        extract(*args)
    elif cmd == "verdicts":
        sys.exit(verdicts(*args))
    elif cmd == "pin":
        pin(*args)
    else:
        sys.exit(f"unknown command {cmd}")
