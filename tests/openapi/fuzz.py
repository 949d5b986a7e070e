#!/usr/bin/env python3
"""Reads schemathesis reports (tests/openapi/fuzz.sh) and prints what the fuzzer found.

    fuzz.py [--accepted FILE] [--examples N] LABEL=DIR [LABEL=DIR ...]

Each DIR is one `st run`'s report directory, with the `ndjson` report (every request,
response and check result) and the `json` one (the run's totals). LABEL names the
database (`sqlite`, `postgres`).

For each database it prints the failures grouped by kind, then check, status, the error
body's `code` and `param`, with the operations that showed each and a few requests that
did (what the fuzzer varied, the parameters and headers sent, a body excerpt, the error's
message), and at the end one summary line per database:

    fuzz sqlite: 236/236 operations, 4123 requests, 0 server errors, 0 undocumented
    statuses, 0 schema violations, 0 valid requests refused, 0 invalid requests accepted,
    0 other

The counts are failing checks (one request can fail several). A failure that an entry of
the allow-list (tests/openapi/fuzz-accepted.toml) matches is printed and counted apart as
accepted, with the entry's reason. Exit status: 1 when any failure is not accepted, when
an operation was not tested, when schemathesis reported an error, or when a report is
missing or incomplete; 0 otherwise.
"""

from __future__ import annotations

import argparse
import base64
import fnmatch
import json
import re
import sys
import tomllib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# Kinds, in the order they are printed, with the checks that belong to each.
KINDS = [
    ("server errors", {"not_a_server_error"}),
    ("undocumented statuses", {"status_code_conformance"}),
    ("schema violations", {"response_schema_conformance", "content_type_conformance", "response_headers_conformance"}),
    ("valid requests refused", {"positive_data_acceptance"}),
    ("invalid requests accepted", {"negative_data_rejection"}),
]
OTHER = "other"
# Operations of the description the fuzzer is not expected to reach, with the reason.
NOT_FUZZED = {
    "GET /v1/openapi.json": "the description itself: schemathesis loads it from there and leaves it out of the "
    "operations it tests; tests/openapi/validate.sh checks it",
    "GET /v1/events/stream": "server-sent events: a valid request's answer does not end, so the fuzzer "
    "(which reads each answer whole) would wait on it for ever; fuzz.sh leaves it out (--exclude-path) and "
    "tests/tests/it/api/openapi.rs and event_stream.rs check every status it documents",
    "GET /v1/request-logs/stream": "server-sent events, as the event stream: left out for the same reason; "
    "tests/tests/it/api/openapi.rs and request_log_stream.rs check every status it documents",
}
METHODS = r"\b(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS|TRACE|CONNECT|QUERY)\b(?! /)"


def kind_of(check: str) -> str:
    for kind, checks in KINDS:
        if check in checks:
            return kind
    return OTHER


def decode(value) -> bytes | None:
    if isinstance(value, dict) and "$base64" in value:
        return base64.b64decode(value["$base64"])
    if isinstance(value, str):
        return value.encode()
    return None


def short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def compact(value, limit: int = 160) -> str:
    try:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return short(text, limit)


@dataclass
class Failure:
    database: str
    check: str
    kind: str
    operation: str
    status: int | None
    code: str
    param: str
    message: str  # the error body's message
    check_message: str  # what schemathesis says
    request: str  # what was sent, in one line
    phase: str = ""  # examples, coverage, fuzzing, stateful
    accepted_by: dict | None = None

    @property
    def pattern(self) -> str:
        """The error message with its quoted values left out: what failures have in common."""
        text = re.sub(r"`[^`]*`", "`…`", self.message)
        # "… is not a field of units": the same failure on every collection.
        parts = self.operation.split("/")
        if len(parts) > 2 and parts[2]:
            text = re.sub(rf"\b{re.escape(parts[2])}\b", "<collection>", text)
        return re.sub(r"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)", "<time>", text)


@dataclass
class Run:
    label: str
    directory: Path
    problems: list[str] = field(default_factory=list)
    operations_total: int = 0
    operations_tested: int = 0
    test_cases: int = 0
    requests: int = 0
    statuses: Counter = field(default_factory=Counter)
    phases: dict = field(default_factory=dict)
    failures: list[Failure] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    running_time: float = 0.0
    # The description's operations ("METHOD /path", as schemathesis labels them), from the
    # openapi.json fuzz.sh saved beside the reports; and the responses each got per phase.
    operations: list[str] = field(default_factory=list)
    responses: dict = field(default_factory=lambda: defaultdict(Counter))


def describe_request(case: dict, request: dict | None) -> str:
    """One line: phase/mode/what was varied, then the query, headers and body that were sent."""
    meta = case.get("meta") or {}
    parts = []
    phase = (meta.get("phase") or {}).get("name") or "?"
    mode = (meta.get("generation") or {}).get("mode") or "?"
    parts.append(f"[{phase}/{mode}]")
    data = (meta.get("phase") or {}).get("data") or {}
    if data.get("description"):
        where = data.get("parameter") or data.get("parameter_location") or ""
        parts.append(short(f"{data['description']}" + (f" ({where})" if where else ""), 120))
    if request is not None:
        uri = request.get("uri") or ""
        path = uri.split("://", 1)[-1]
        path = path[path.find("/") :] if "/" in path else path
        parts.append(f"{request.get('method', case.get('method', ''))} {short(path, 300)}")
    headers = {
        k: v
        for k, v in (case.get("headers") or {}).items()
        if k.lower() not in ("authorization", "gable-version")
    }
    if headers:
        parts.append("headers " + compact(headers, 200))
    if case.get("body") is not None:
        parts.append("body " + compact(case.get("body"), 240))
    return " ".join(parts)


def error_of(response: dict | None) -> tuple[str, str, str]:
    """(code, param, message) of a Gable error body; ('', '', excerpt) for anything else."""
    if not response:
        return "", "", "(no response)"
    content = decode(response.get("content"))
    if not content:
        return "", "", ""
    try:
        body = json.loads(content)
    except ValueError:
        return "", "", short(content.decode("utf-8", "replace"), 160)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return str(err.get("code") or ""), str(err.get("param") or ""), short(str(err.get("message") or ""), 200)
    return "", "", ""


def load_run(label: str, directory: Path) -> Run:
    run = Run(label, directory)
    ndjson = sorted(directory.glob("*.ndjson"))
    summary = sorted(directory.glob("json-*.json")) or sorted(directory.glob("*.json"))
    if not ndjson:
        run.problems.append(f"no ndjson report in {directory}")
        return run
    if not summary:
        run.problems.append(f"no json report in {directory}")
    else:
        doc = json.loads(summary[-1].read_text())
        ops = doc.get("operations") or {}
        run.operations_total = ops.get("selected") or ops.get("total") or 0
        run.operations_tested = ops.get("tested") or 0
        run.test_cases = (doc.get("test_cases") or {}).get("generated") or 0
        run.running_time = doc.get("running_time") or 0.0
        run.phases = {name: p.get("status") for name, p in (doc.get("phases") or {}).items()}
        for err in doc.get("errors") or []:
            run.errors.append(f"{err.get('title')} (x{err.get('count')})")
        if not doc.get("complete"):
            run.problems.append(f"the run did not complete (stop reason: {doc.get('stop_reason')})")

    described = directory / "openapi.json"
    if described.exists():
        paths = json.loads(described.read_text()).get("paths") or {}
        run.operations = sorted(
            f"{method.upper()} {path}"
            for path, item in paths.items()
            for method in item
            if method.lower() in ("get", "put", "post", "delete", "patch", "head", "options", "trace")
            and f"{method.upper()} {path}" not in NOT_FUZZED
        )
    else:
        run.problems.append(f"no openapi.json in {directory}: cannot tell whether every operation was fuzzed")

    tested_labels: set[str] = set()
    all_labels: set[str] = set()
    with ndjson[-1].open(encoding="utf-8") as fh:
        for line in fh:
            try:
                event = json.loads(line)
            except ValueError:
                run.problems.append("a truncated line in the ndjson report")
                continue
            name, payload = next(iter(event.items()))
            if name == "LoadingFinished":
                pool = ((payload.get("statistic") or {}).get("operations") or {})
                run.operations_total = run.operations_total or pool.get("selected") or 0
            elif name == "NonFatalError":
                run.errors.append(short(f"{payload.get('label', '')}: {compact(payload.get('value'), 300)}", 400))
            elif name == "ScenarioFinished":
                read_scenario(run, payload, tested_labels, all_labels)
    return run


def read_scenario(run: Run, payload: dict, tested: set, labels: set) -> None:
    recorder = payload.get("recorder") or {}
    cases = recorder.get("cases") or {}
    interactions = recorder.get("interactions") or {}
    phase_name = payload.get("phase") or "?"
    for case_id, interaction in interactions.items():
        response = interaction.get("response")
        if response is not None:
            run.requests += 1
            run.statuses[response.get("status_code")] += 1
            # A stateful scenario's label names the chain; each case names its own operation.
            case = (cases.get(case_id) or {}).get("value") or {}
            label = recorder.get("label") if phase_name != "stateful" else None
            if not label and case.get("method") and case.get("path"):
                label = f"{case['method'].upper()} {case['path']}"
            if label:
                run.responses[phase_name][label] += 1
    for case_id, checks in (recorder.get("checks") or {}).items():
        node = cases.get(case_id) or {}
        case = node.get("value") or {}
        interaction = interactions.get(case_id) or {}
        response = interaction.get("response")
        for check in checks:
            if check.get("status") != "failure":
                continue
            failure = ((check.get("failure_info") or {}).get("failure")) or {}
            operation = failure.get("operation") or f"{case.get('method', '?')} {case.get('path', '?')}"
            code, param, message = error_of(response)
            phase = ((case.get("meta") or {}).get("phase") or {}).get("name") or payload.get("phase") or ""
            run.failures.append(
                Failure(
                    database=run.label,
                    check=check.get("name", "?"),
                    kind=kind_of(check.get("name", "")),
                    operation=operation,
                    status=(response or {}).get("status_code"),
                    code=code,
                    param=param,
                    message=message,
                    check_message=short(str(failure.get("message") or failure.get("title") or ""), 300),
                    request=describe_request(case, interaction.get("request")),
                    phase=phase,
                )
            )


# ---- the allow-list ------------------------------------------------------------------------
def load_accepted(path: Path) -> list[dict]:
    if not path.exists():
        return []
    doc = tomllib.loads(path.read_text(encoding="utf-8"))
    entries = doc.get("accepted") or []
    for i, entry in enumerate(entries, 1):
        if not entry.get("check") or not entry.get("reason"):
            raise SystemExit(f"fuzz: {path}: entry {i} needs `check` and `reason`")
        unknown = set(entry) - {"check", "operation", "status", "code", "param", "message", "phase", "database", "reason"}
        if unknown:
            raise SystemExit(f"fuzz: {path}: entry {i} has unknown fields {sorted(unknown)}")
    return entries


def matches(entry: dict, f: Failure) -> bool:
    if not fnmatch.fnmatchcase(f.check, entry["check"]):
        return False
    if "operation" in entry and not fnmatch.fnmatchcase(f.operation, entry["operation"]):
        return False
    if "status" in entry and f.status != int(entry["status"]):
        return False
    if "code" in entry and not fnmatch.fnmatchcase(f.code, entry["code"]):
        return False
    if "param" in entry and not fnmatch.fnmatchcase(f.param, entry["param"]):
        return False
    if "message" in entry and not fnmatch.fnmatchcase(f.message, entry["message"]):
        return False
    if "phase" in entry and entry["phase"] != f.phase:
        return False
    if "database" in entry and entry["database"] != f.database:
        return False
    return True


# ---- printing ------------------------------------------------------------------------------
def print_groups(failures: list[Failure], examples: int, indent: str = "  ") -> None:
    """Failures grouped by check, status, code and param; operations and examples under each."""
    groups: dict[tuple, list[Failure]] = defaultdict(list)
    for f in failures:
        key = (f.check, f.status, f.code, f.param)
        if f.kind in ("schema violations", OTHER) or not f.code:
            # The check's own words tell these apart (which property broke the schema).
            first = re.sub(METHODS, "<method>", f.check_message.split("\n")[0])[:120]
            key += (first if f.kind != "undocumented statuses" else "",)
        else:
            key += (f.pattern,)
        groups[key].append(f)
    for key, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0]))):
        check, status, code, param = key[:4]
        ops = Counter(f.operation for f in items)
        head = f"{check}: {status if status is not None else 'no response'}"
        if code:
            head += f" {code}"
        if param:
            head += f" (param {param})"
        print(f"{indent}- {head} — {len(items)} failing checks on {len(ops)} operations")
        if len(key) > 4 and key[4]:
            print(f"{indent}    {'message' if items[0].code else 'schemathesis'}: {short(key[4], 300)}")
        print(f"{indent}    operations: {short(', '.join(sorted(ops)), 900)}")
        seen: set[tuple] = set()
        shown = 0
        for f in items:
            sig = (f.operation, f.request.split(" ", 1)[0], f.message)
            if sig in seen:
                continue
            seen.add(sig)
            print(f"{indent}    e.g. {f.operation}: {f.request}")
            detail = f.message or f.check_message
            if detail:
                print(f"{indent}         -> {short(detail, 300)}")
            if f.kind != "valid requests refused" and f.check_message and f.message:
                print(f"{indent}         schemathesis: {short(f.check_message, 300)}")
            shown += 1
            if shown >= examples:
                break


def summary_line(run: Run) -> str:
    counts = Counter(f.kind for f in run.failures if f.accepted_by is None)
    accepted = sum(1 for f in run.failures if f.accepted_by is not None)
    parts = [
        f"{run.operations_tested}/{run.operations_total} operations",
        f"{run.requests} requests",
    ]
    parts += [f"{counts.get(kind, 0)} {kind}" for kind, _ in KINDS]
    parts.append(f"{counts.get(OTHER, 0)} other")
    line = f"fuzz {run.label}: " + ", ".join(parts)
    if accepted:
        line += f" ({accepted} accepted by the allow-list)"
    if run.errors or run.problems:
        line += f"; {len(run.errors) + len(run.problems)} errors"
    return line


def main() -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", metavar="LABEL=DIR")
    parser.add_argument("--accepted", type=Path, default=here / "fuzz-accepted.toml")
    parser.add_argument("--examples", type=int, default=3, help="requests shown per group (default 3)")
    args = parser.parse_args()

    entries = load_accepted(args.accepted)
    used = Counter()
    runs = []
    for spec in args.runs:
        label, sep, directory = spec.partition("=")
        if not sep:
            parser.error(f"expected LABEL=DIR, got {spec}")
        run = load_run(label, Path(directory))
        for f in run.failures:
            for i, entry in enumerate(entries):
                if matches(entry, f):
                    f.accepted_by = entry
                    used[i] += 1
                    break
        runs.append(run)

    failed = False
    for run in runs:
        print(f"\n==== fuzz {run.label}: {run.directory}")
        statuses = ", ".join(f"{s}: {n}" for s, n in sorted(run.statuses.items(), key=lambda kv: str(kv[0])))
        print(f"  {run.test_cases} test cases, {run.requests} requests ({statuses}), {run.running_time:.0f} s")
        if run.phases:
            print("  phases: " + ", ".join(f"{k} {v}" for k, v in run.phases.items()))
        for problem in run.problems:
            print(f"  ERROR: {problem}")
            failed = True
        if run.operations_total and run.operations_tested < run.operations_total:
            print(f"  ERROR: only {run.operations_tested} of {run.operations_total} operations were tested")
            failed = True
        # The budget is per operation (fuzz.sh: FUZZ_MAX_EXAMPLES): every operation of the
        # description must have had answers in the fuzzing phase, whatever the other phases did.
        if run.operations:
            per_phase = ", ".join(
                f"{phase} {sum(1 for op in run.operations if counts[op])}/{len(run.operations)}"
                for phase, counts in sorted(run.responses.items())
            )
            print(f"  operations answered, by phase: {per_phase}")
            fuzzed = run.responses.get("fuzzing") or Counter()
            unfuzzed = [op for op in run.operations if not fuzzed[op]]
            if unfuzzed:
                print(f"  ERROR: {len(unfuzzed)} of {len(run.operations)} operations got no answer in the fuzzing phase: "
                      + short(", ".join(unfuzzed), 2000))
                failed = True
            elif fuzzed:
                answers = sorted(fuzzed[op] for op in run.operations)
                print(f"  every operation fuzzed: {len(run.operations)} operations; answers per operation in the "
                      f"fuzzing phase: at least {answers[0]}, median {answers[len(answers) // 2]}")
        for err in run.errors:
            print(f"  ERROR (schemathesis): {err}")
            failed = True
        open_ = [f for f in run.failures if f.accepted_by is None]
        for kind in [k for k, _ in KINDS] + [OTHER]:
            items = [f for f in open_ if f.kind == kind]
            if not items:
                continue
            failed = True
            checks = ", ".join(sorted({f.check for f in items}))
            print(f"\n  {kind.upper()} ({len(items)}; {checks})")
            print_groups(items, args.examples)
        accepted = [f for f in run.failures if f.accepted_by is not None]
        if accepted:
            print(f"\n  ACCEPTED by {args.accepted.name} ({len(accepted)})")
            by_reason: dict[str, list[Failure]] = defaultdict(list)
            for f in accepted:
                by_reason[f.accepted_by["reason"]].append(f)
            for reason, items in by_reason.items():
                ops = sorted({f.operation for f in items})
                print(f"  - {len(items)} on {len(ops)} operations: {reason}")

    for i, entry in enumerate(entries):
        if not used[i]:
            print(f"\nnote: allow-list entry {i + 1} ({entry['check']}, {entry.get('operation', '*')}) matched nothing: remove it?")

    print()
    for run in runs:
        print(summary_line(run))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
