"""The `hexplore analyze` report: text (clang-style), JSON (stable schema), LLVM optimization
records (YAML, for opt-viewer) and SARIF 2.1.0.

JSON schema (version 1), documented in docs/analyze-json.md::

    {"schema": "hexplore-analyze/1", "file": ..., "remarks": [file-level remarks],
     "functions": [{"name", "range", "scops": [...], "remarks": [...]}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from core_compiler.analysis import FileAnalysis, FunctionAnalysis, ScopAnalysis
from core_compiler.remarks import Remark, RemarkKind

SCHEMA = "hexplore-analyze/1"

# ------------------------------------------------------------------------------------- JSON


def remark_json(r: Remark) -> dict[str, object]:
    return {
        "kind": r.kind.value,
        "pass": r.pass_name,
        "name": r.name,
        "message": r.message,
        "range": r.range.to_json(),
        "function": r.function,
        "args": _plain(r.args),
    }


def _plain(value: object) -> object:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def scop_json(sa: ScopAnalysis) -> dict[str, object]:
    scop, deps = sa.scop, sa.deps
    return {
        "name": scop.name,
        "range": scop.range.to_json(),
        "parameters": list(scop.params),
        "context": str(scop.context),
        "arrays": [
            {
                "name": a.name,
                "element_type": a.elem_type,
                "extents": [None if e is None else e.isl() for e in a.extents],
                "kind": a.kind,
            }
            for a in scop.arrays
        ],
        "statements": [
            {
                "name": s.name,
                "range": s.range.to_json(),
                "text": s.info.text,
                "iterators": list(s.iterators),
                "domain": str(s.domain),
                "schedule": str(s.schedule),
                "reads": [_access_json(a) for a in s.reads],
                "writes": [_access_json(a) for a in s.writes],
            }
            for s in scop.statements
        ],
        "loops": [
            {
                "id": lp.loop.id,
                "var": lp.loop.var,
                "depth": lp.loop.depth,
                "range": lp.loop.range.to_json(),
                "header_range": lp.loop.header_range.to_json(),
                "parallel": lp.parallel,
                "reduction": lp.reduction,
                "carried": [
                    {
                        "kind": c.kind,
                        "array": c.array,
                        "source": c.source,
                        "sink": c.sink,
                        "distance": list(c.distance),
                    }
                    for c in lp.carried
                ],
            }
            for lp in deps.loops
        ],
        "dependences": [
            {"kind": d.kind, "array": d.array, "source": d.source, "sink": d.sink, "relation": str(d.relation)}
            for d in deps.deps
        ],
        "reductions": [
            {"statement": r.statement, "op": r.op, "array": r.array, "loops": list(r.loops)}
            for r in deps.reductions
        ],
    }


def _access_json(a: object) -> dict[str, object]:
    from core_compiler.scop.model import Access

    assert isinstance(a, Access)
    return {"array": a.array, "relation": str(a.relation), "range": a.info.range.to_json()}


def function_json(fa: FunctionAnalysis) -> dict[str, object]:
    return {
        "name": fa.function.name,
        "range": fa.function.range.to_json(),
        "scops": [scop_json(s) for s in fa.scops],
        "remarks": [remark_json(r) for r in fa.remarks],
    }


def to_json(fa: FileAnalysis) -> str:
    doc = {
        "schema": SCHEMA,
        "file": fa.path,
        "remarks": [remark_json(r) for r in fa.remarks],
        "functions": [function_json(f) for f in fa.functions],
    }
    return json.dumps(doc, indent=2) + "\n"


# ------------------------------------------------------------------------------------- text


def remark_text(r: Remark) -> str:
    """``file:line:col: remark: message [-Rpass=name]`` like clang's ``-Rpass`` output."""
    word = "error" if r.name == "SyntaxError" else "remark"
    return f"{r.range.file}:{r.range.line}:{r.range.col}: {word}: {r.message} [{r.kind.value}:{r.name}]"


def to_text(fa: FileAnalysis) -> str:
    out: list[str] = [remark_text(r) for r in fa.remarks]
    for f in fa.functions:
        out += function_text(f)
    return "\n".join(out) + "\n"


def function_text(f: FunctionAnalysis) -> list[str]:
    """One function's lines of the text report (`hexplore analyze` prints them as they come)."""
    what = "CUDA kernel" if f.function.is_cuda_kernel else f"{len(f.scops)} scop(s)"
    out = [f"function {f.function.name} (line {f.function.range.line}): {what}"]
    for sa in f.scops:
        out += ["  " + line for line in _scop_text(sa)]
    out += ["  " + remark_text(r) for r in f.remarks]
    return out


def _scop_text(sa: ScopAnalysis) -> list[str]:
    scop = sa.scop
    out = [
        f"scop lines {scop.range.line}-{scop.range.end_line}, parameters [{', '.join(scop.params)}]"
    ]
    for s in scop.statements:
        out.append(f"  {s.name} (line {s.range.line}): {s.info.text}")
        out.append(f"    domain {s.domain}")
        out += [f"    read   {a.relation}" for a in s.reads]
        out += [f"    write  {a.relation}" for a in s.writes]
    for lp in sa.deps.loops:
        if lp.parallel:
            state = "parallel"
        elif lp.reduction:
            state = "reduction"
        else:
            state = "carries " + lp.carried[0].describe()
        out.append(f"  loop {lp.loop.var} (line {lp.loop.range.line}): {state}")
    return out


# ------------------------------------------------------------------------------------- YAML


def to_yaml(fa: FileAnalysis) -> str:
    """LLVM optimization records, one YAML document per remark (loadable by opt-viewer)."""
    docs = []
    for r in fa.all_remarks():
        lines = [
            f"--- !{r.kind.value}",
            f"Pass:            {_yq(r.pass_name)}",
            f"Name:            {_yq(r.name)}",
            f"DebugLoc:        {{ File: {_yq(r.range.file)}, Line: {r.range.line}, Column: {r.range.col} }}",
            f"Function:        {_yq(r.function or '<file>')}",
            "Args:",
            f"  - String:          {_yq(r.message)}",
        ]
        for k, v in r.args.items():
            lines.append(f"  - {k}:{' ' * max(1, 16 - len(k))}{_yq(json.dumps(_plain(v)) if not isinstance(v, str) else v)}")
        docs.append("\n".join(lines))
    return "\n".join(docs) + ("\n...\n" if docs else "")


def _yq(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


# ------------------------------------------------------------------------------------- SARIF


_SARIF_LEVEL = {RemarkKind.MISSED: "warning", RemarkKind.PASSED: "note", RemarkKind.ANALYSIS: "note"}


def to_sarif(fa: FileAnalysis) -> str:
    remarks = fa.all_remarks()
    rule_ids = sorted({r.name for r in remarks})
    results = [_sarif_result(r, rule_ids) for r in remarks]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "hexplore",
                        "informationUri": "https://pypi.org/project/hexplore/",
                        "rules": [{"id": rid, "name": rid} for rid in rule_ids],
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


def _sarif_result(r: Remark, rule_ids: list[str]) -> dict[str, object]:
    level = "error" if r.name == "SyntaxError" else _SARIF_LEVEL[r.kind]
    return {
        "ruleId": r.name,
        "ruleIndex": rule_ids.index(r.name),
        "kind": "fail" if r.kind is RemarkKind.MISSED else "informational",
        "level": level if r.kind is RemarkKind.MISSED or r.name == "SyntaxError" else "none",
        "message": {"text": r.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": r.range.file},
                    "region": {
                        "startLine": max(r.range.line, 1),
                        "startColumn": max(r.range.col, 1),
                        "endLine": max(r.range.end_line, 1),
                        "endColumn": max(r.range.end_col, 1),
                    },
                }
            }
        ],
        "properties": {"pass": r.pass_name, "function": r.function, "remarkKind": r.kind.value},
    }


FORMATS = {"text": to_text, "json": to_json, "yaml": to_yaml, "sarif": to_sarif}


def render_report(fa: FileAnalysis, fmt: str) -> str:
    return FORMATS[fmt](fa)
