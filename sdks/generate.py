#!/usr/bin/env python3
"""Writes every copy of the collection list and the event catalogue, as `gable collections` prints them.

    python3 sdks/generate.py                 rewrite the generated blocks (what `make generate` runs)
    python3 sdks/generate.py --check         write nothing; exit 1 and show the difference when a
                                             block is not what the registry says (.ci/generated)
    python3 sdks/generate.py --input FILE    read the collections and events from FILE (the JSON
                                             of `gable collections --format json`) instead of the binary
    python3 sdks/generate.py --list          print the files this script writes

The collections (the registry, `domain::collections`) and the event types (the catalogue,
`domain::events`) come from `$GABLE_BIN collections --format json`, an object of two
arrays, `collections` and `events` (default binary `target/debug/gable`; `make generate`
builds it first). Each file of `TARGETS` below holds
one or more blocks between a `BEGIN GENERATED <name>` line and an `END GENERATED <name>`
line (in the file's own comment syntax); this script replaces what lies between the two
and never touches anything else. The marker lines stay as they are, and the block takes
their indentation. The output depends on the registry and the catalogue alone (their order,
their names and docs), so two runs write the same bytes. No number of collections or event
types is written anywhere by hand: the docs' tables and counts are blocks here too.

What is still written by hand for a new collection or event type (docs/development.md,
"Adding a collection or an event type"): a kit class of its own, when a collection needs
more than the generic one (as `payments` does: `SPECIAL` below), and everything outside
these blocks.

Python 3 standard library only.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent

# Collections whose accessor is a class of the kit's own rather than the generic collection
# (every kit names it the same): collection name -> class name.
SPECIAL = {"payments": "Payments"}


# ---- names -----------------------------------------------------------------------------------

def words(name: str) -> list[str]:
    """`purchase-orders` -> ["purchase", "orders"]."""
    return name.split("-")


def camel(name: str) -> str:
    first, *rest = words(name)
    return first + "".join(w.capitalize() for w in rest)


def pascal(name: str) -> str:
    return "".join(w.capitalize() for w in words(name))


def snake(name: str) -> str:
    return "_".join(words(name))


def wrap(items: list[str], width: int, indent: str, sep: str = " ") -> list[str]:
    """Greedy word wrap of `items`, each line `indent` + items joined by `sep`, at most `width` wide."""
    lines: list[str] = []
    line = ""
    for item in items:
        candidate = item if not line else line + sep + item
        if line and len(indent) + len(candidate) > width:
            lines.append(indent + line)
            line = item
        else:
            line = candidate
    if line:
        lines.append(indent + line)
    return lines


# ---- what each block holds -------------------------------------------------------------------
# Each renderer takes the collections or the event types (dicts as `gable collections --format
# json` prints them: `Catalogue` holds both) and the block's indentation, and returns the
# block's lines.

Collections = list[dict]
Events = list[dict]


class Catalogue:
    """What `gable collections --format json` prints: the collections and the event types."""

    def __init__(self, collections: Collections, events: Events):
        self.collections = collections
        self.events = events

    def object_of(self, collection: str) -> str:
        return next(c["object"] for c in self.collections if c["name"] == collection)


def go_fields(cs: Collections, ind: str) -> list[str]:
    # gofmt aligns the names, the types and the comments of consecutive fields.
    names = [pascal(c["name"]) for c in cs]
    types = ["*" + SPECIAL.get(c["name"], "Collection") for c in cs]
    nw, tw = max(map(len, names)), max(map(len, types))
    return [f"{ind}{n:<{nw}} {t:<{tw}} // /v1/{c['name']}" for n, t, c in zip(names, types, cs)]


def go_wire(cs: Collections, ind: str) -> list[str]:
    out = []
    for c in cs:
        get = f'c.Collection("{c["name"]}")'
        value = f"&{SPECIAL[c['name']]}{{{get}}}" if c["name"] in SPECIAL else get
        out.append(f"{ind}c.{pascal(c['name'])} = {value}")
    return out


def ts_accessors(cs: Collections, ind: str) -> list[str]:
    return [f'{ind}readonly {camel(c["name"])} = new {SPECIAL.get(c["name"], "Collection")}(this, "{c["name"]}");' for c in cs]


def php_properties(cs: Collections, ind: str) -> list[str]:
    types = [SPECIAL.get(c["name"], "Collection") for c in cs]
    tw = max(map(len, types))
    return [f"{ind}* @property-read {t:<{tw}} ${camel(c['name'])}" for t, c in zip(types, cs)]


def php_collections(cs: Collections, ind: str) -> list[str]:
    return [f"{ind}'{camel(c['name'])}' => '{c['name']}'," for c in cs]


def java_accessors(cs: Collections, ind: str) -> list[str]:
    out = []
    for c in cs:
        if c["name"] in SPECIAL:
            cls = SPECIAL[c["name"]]
            out.append(f"{ind}public {cls} {camel(c['name'])}() {{ return new {cls}(this); }}")
        else:
            out.append(f'{ind}public Resource {camel(c["name"])}() {{ return collection("{c["name"]}"); }}')
    return out


def ruby_collections(cs: Collections, ind: str) -> list[str]:
    return [f"{ind}COLLECTIONS = %w[", *wrap([c["name"] for c in cs], 90, ind + "  "), f"{ind}].freeze"]


def python_collections(cs: Collections, ind: str) -> list[str]:
    return [f"{ind}COLLECTIONS = (", *wrap([f'"{c["name"]}",' for c in cs], 100, ind + "    "), f"{ind})"]


def validator_collections(cs: Collections, ind: str) -> list[str]:
    out = [f"{ind}COLLECTIONS = {{"]
    for c in cs:
        ops = ", ".join(f'"{op}"' for op in c["operations"])
        out.append(f'{ind}    "{c["name"]}": ({ops}),')
    return out + [f"{ind}}}"]


def readme_collections(cs: Collections, ind: str) -> list[str]:
    names = [c["name"] for c in cs]
    names[0] = "`" + names[0]
    names[-1] = names[-1] + "`."
    lines = wrap(["- **Collections**:", *names], 90, "")
    return [lines[0]] + ["  " + line for line in lines[1:]]


def cell(text: str) -> str:
    return text.replace("|", "\\|")


def workflows_events(cat: Catalogue, ind: str) -> list[str]:
    out = ["", f"{ind}| Type | `data.object` | Emitted when (and by nothing else) | Also in `data` |", f"{ind}|---|---|---|---|"]
    for e in cat.events:
        extra = ", ".join(f"`{x['name']}`" for x in e["extra"])
        out.append(f"{ind}| {e['name']} | {cat.object_of(e['collection'])} | {cell(e['doc'])} | {extra} |")
    return out + [""]


def readme_events(cat: Catalogue, ind: str) -> list[str]:
    names = [e["name"] for e in cat.events]
    names[0] = "`" + names[0]
    names[-1] = names[-1] + "`."
    lines = wrap([f"- **Events**, {len(names)} types:", *names], 90, "")
    return [lines[0]] + ["  " + line for line in lines[1:]]


def js_event_types(cat: Catalogue, ind: str) -> list[str]:
    return [f"{ind}const EVENT_TYPES = [", *wrap([f"'{e['name']}'," for e in cat.events], 100, ind + "  "), f"{ind}];"]


def of_collections(render: Callable[[Collections, str], list[str]]) -> Callable[[Catalogue, str], list[str]]:
    """A renderer of the collections alone."""
    return lambda cat, ind: render(cat.collections, ind)


# file (from the repository root) -> {block name: renderer}
TARGETS: dict[str, dict[str, Callable[[Catalogue, str], list[str]]]] = {
    "sdks/go/collections.go": {"fields": of_collections(go_fields), "wire": of_collections(go_wire)},
    "sdks/typescript/src/client.ts": {"accessors": of_collections(ts_accessors)},
    "sdks/php/src/Client.php": {"properties": of_collections(php_properties), "collections": of_collections(php_collections)},
    "sdks/java/src/main/java/dev/gable/Gable.java": {"accessors": of_collections(java_accessors)},
    "sdks/ruby/lib/gable/client.rb": {"collections": of_collections(ruby_collections)},
    "sdks/python/src/gable/client.py": {"collections": of_collections(python_collections)},
    "tests/openapi/validate.py": {"collections": of_collections(validator_collections)},
    "tests/browser/webhooks.test.mjs": {"events": js_event_types},
    "README.md": {"collections": of_collections(readme_collections), "events": readme_events},
    "docs/workflows.md": {"events": workflows_events},
}

BEGIN = re.compile(r"^(\s*)\S.*\bBEGIN GENERATED ([a-z-]+)\b")
END = re.compile(r"\bEND GENERATED ([a-z-]+)\b")


def render(path: str, text: str, cat: Catalogue) -> str:
    """`text` with each of its blocks rewritten; every block the table names must be there, once."""
    renderers = TARGETS[path]
    lines = text.split("\n")
    out: list[str] = []
    done: set[str] = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = BEGIN.match(line)
        i += 1
        if not m:
            if END.search(line):
                raise SystemExit(f"generate: {path}:{i}: END GENERATED without its BEGIN")
            continue
        indent, name = m.group(1), m.group(2)
        if name not in renderers:
            raise SystemExit(f"generate: {path}:{i}: no block named {name!r} is generated in this file")
        if name in done:
            raise SystemExit(f"generate: {path}:{i}: block {name!r} appears twice")
        while i < len(lines) and not (END.search(lines[i]) and END.search(lines[i]).group(1) == name):
            if BEGIN.match(lines[i]):
                raise SystemExit(f"generate: {path}:{i + 1}: a BEGIN GENERATED inside block {name!r}")
            i += 1
        if i == len(lines):
            raise SystemExit(f"generate: {path}: block {name!r} has no END GENERATED {name}")
        out.extend(renderers[name](cat, indent))
        out.append(lines[i])
        i += 1
        done.add(name)
    missing = sorted(set(renderers) - done)
    if missing:
        raise SystemExit(f"generate: {path}: no BEGIN GENERATED marker for {', '.join(missing)}")
    return "\n".join(out)


def load(input_file: str | None) -> Catalogue:
    if input_file:
        raw = Path(input_file).read_text()
    else:
        target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
        binary = os.environ.get("GABLE_BIN") or str((ROOT / target) / "debug/gable")
        if not Path(binary).is_file():
            raise SystemExit(f"generate: no server binary at {binary}: build it (cargo build -p gable) or set GABLE_BIN")
        try:
            raw = subprocess.run([binary, "collections", "--format", "json"], check=True, capture_output=True, text=True).stdout
        except subprocess.CalledProcessError as e:
            raise SystemExit(f"generate: `{binary} collections --format json` failed: {e.stderr.strip()}")
    printed = json.loads(raw)
    if not isinstance(printed, dict) or not isinstance(printed.get("collections"), list) or not isinstance(printed.get("events"), list):
        raise SystemExit("generate: not what `gable collections --format json` prints: an object of `collections` and `events`")
    cs, events = printed["collections"], printed["events"]
    if not cs or not events:
        raise SystemExit("generate: no collections or no event types")
    for c in cs:
        if not re.fullmatch(r"[a-z]+(-[a-z]+)*", str(c.get("name"))):
            raise SystemExit(f"generate: {c.get('name')!r} is not a collection name (lowercase words joined by `-`)")
        if not isinstance(c.get("operations"), list):
            raise SystemExit(f"generate: {c['name']} has no operations")
    names = {c["name"] for c in cs}
    for e in events:
        if not re.fullmatch(r"[a-z]+(_[a-z]+)*\.[a-z]+(_[a-z]+)*", str(e.get("name"))):
            raise SystemExit(f"generate: {e.get('name')!r} is not an event type name (`<object>.<verb>`)")
        if e.get("collection") not in names:
            raise SystemExit(f"generate: {e['name']}: its collection {e.get('collection')!r} is not one of the collections")
    return Catalogue(cs, events)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", help="the JSON of `gable collections --format json` (default: run $GABLE_BIN)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when a block is out of date")
    ap.add_argument("--list", action="store_true", help="print the files this script writes, and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(TARGETS))
        return 0
    cat = load(args.input)
    stale = []
    for path in TARGETS:
        file = ROOT / path
        old = file.read_text()
        new = render(path, old, cat)
        if new == old:
            continue
        stale.append(path)
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), f"a/{path}", f"b/{path}"))
        else:
            file.write_text(new)
            print(f"generate: wrote {path}")
    if args.check and stale:
        print(f"generate: {len(stale)} of {len(TARGETS)} files differ from the registry and the catalogue "
              f"({len(cat.collections)} collections, {len(cat.events)} event types): run `make generate`", file=sys.stderr)
        return 1
    if not stale:
        done = "all up to date"
    elif len(stale) == len(TARGETS):
        done = "all rewritten"
    else:
        done = f"{len(stale)} rewritten, the others up to date"
    print(f"generate: {len(cat.collections)} collections, {len(cat.events)} event types; {len(TARGETS)} files, {done}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
