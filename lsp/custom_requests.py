"""The ``hexplore/*`` requests: reading their parameters and shaping their results (PROTOCOL.md).

Parameters arrive as plain JSON objects (see `server._converter`);
anything missing or of the wrong type is an `InvalidParams` error that names the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from explorer import api, running
from explorer.api import PassRecord, Remark, RemarkKind
from explorer.schedule_tree import ScheduleNode
from explorer.workspace import DocumentAnalysis
from lsp.positions import LineIndex

FUNCTIONS = "hexplore/functions"
PASSES = "hexplore/passes"
ARTIFACT = "hexplore/artifact"
SCHEDULE_TREE = "hexplore/scheduleTree"
RUN = "hexplore/run"

def field(params: Any, name: str, method: str, kind: type = str) -> Any:
    """``params[name]``, which must be a `kind` (a non-empty one, for strings)."""
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(f"{method}: expected an object of parameters, got {params!r}")
    value = params.get(name)
    if not isinstance(value, kind) or (kind is str and not value):
        raise JsonRpcInvalidParams(
            f"{method}: expected `{name}` to be a {'non-empty string' if kind is str else kind.__name__}"
            f", got {value!r}"
        )
    return value


def sizes(params: dict[str, Any], method: str) -> dict[str, int]:
    """The optional ``sizes`` object: integer parameter name -> positive value."""
    value = params.get("sizes") or {}
    ok = isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v > 0
        for k, v in value.items()
    )
    if not ok:
        raise JsonRpcInvalidParams(f"{method}: expected `sizes` to map parameter names to positive integers, got {value!r}")
    return dict(value)


def timeout(params: dict[str, Any], method: str, default: float) -> float:
    value = params.get("timeoutSeconds", default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise JsonRpcInvalidParams(f"{method}: expected `timeoutSeconds` to be a positive number, got {value!r}")
    return float(value)


def device(params: dict[str, Any], method: str) -> str:
    """The optional ``device``: one of `DEVICES`, `DEFAULT_DEVICE` (as `hexplore run`) if absent."""
    value = params.get("device", running.DEFAULT_DEVICE)  # loads the run-time modules: a run follows
    if value not in running.DEVICES:
        raise JsonRpcInvalidParams(f"{method}: expected `device` to be one of {', '.join(running.DEVICES)}, got {value!r}")
    return str(value)


def run_result(report: running.RunReport) -> dict[str, Any]:
    return {
        "status": report.status,
        "message": report.message.removeprefix(running.NOT_CHECKABLE) or _matched(report),
        "device": report.device,
        "sizes": dict(report.params),
        "kernels": report.kernels,
        "arrays": [
            {"name": a.name, "ok": a.ok, "message": a.message, "maxAbsError": a.max_abs_error}
            for a in report.arrays
        ],
        "elapsed_ms": round(report.elapsed_s * 1000, 1),
        "reference_ms": round(report.reference_s * 1000, 3),
        "optimized_ms": round(report.optimized_s * 1000, 3),
        "speedup": round(report.speedup, 3),
        "bytesTransferred": report.bytes_transferred,
        "variant": report.variant,
        "note": report.note,
    }


def _matched(report: running.RunReport) -> str:
    what = f"{report.kernels} kernel(s)" if report.kernels else f"the {report.variant or 'optimized'} code"
    return f"the generated code matches the original ({what})"


def functions_result(
    analysis: DocumentAnalysis, index: LineIndex, decisions: Mapping[str, Sequence[Remark]] | None = None
) -> list[dict[str, Any]]:
    """`decisions`: the offload decisions known per function, counted with its remarks."""
    out = []
    for fr in analysis.functions:
        fn = fr.analysis.function
        kinds = [r.kind for r in (*fr.remarks, *(decisions or {}).get(fr.name, ()))]
        out.append(
            {
                "name": fn.name,
                "range": _json_range(index, fn.range),
                "selectionRange": _json_range(index, fn.name_range),
                "scops": len(fr.scops),
                "loops": sum(len(sa.scop.loops) for sa in fr.scops),
                "remarks": {k.value.lower(): kinds.count(k) for k in RemarkKind},
                "analysed": not any(r.name == "FunctionHasErrors" for r in fr.remarks),
            }
        )
    return out


def passes_result(trace: tuple[PassRecord, ...]) -> list[dict[str, Any]]:
    return [
        {
            "name": p.label,
            "pass": p.name,
            "scop": p.scop,
            "options": dict(p.options),
            "elapsed_ms": round(p.elapsed_s * 1000, 3),
            "remark_count": len(p.remarks),
        }
        for p in trace
    ]


def artifact_result(record: PassRecord) -> dict[str, Any]:
    return {"text": record.text, "language": api.artifact_language(record.name)}


def schedule_tree_json(node: ScheduleNode, index: LineIndex) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": node.kind, "detail": node.detail}
    if node.arcana:
        out["arcana"] = node.arcana
    if node.range is not None:
        out["range"] = _json_range(index, node.range)
    if node.kind == "band":
        out["loop"] = node.loop
        out["status"] = node.status
        out["carried"] = list(node.carried)
        out["permutable"] = node.permutable
    out["children"] = [schedule_tree_json(c, index) for c in node.children]
    return out


def _json_range(index: LineIndex, r: Any) -> dict[str, Any]:
    rng = index.range(r)
    return {
        "start": {"line": rng.start.line, "character": rng.start.character},
        "end": {"line": rng.end.line, "character": rng.end.character},
    }
