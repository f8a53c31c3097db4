"""The four remark formats: clang-style text, JSON, LLVM optimization records (YAML), SARIF 2.1.0."""

from __future__ import annotations

import json

import yaml

from core_compiler.analysis import analyze_file
from core_compiler.report import to_sarif, to_text, to_yaml

FA = analyze_file("examples/demo.c")


def test_text_lines_look_like_clang_remarks() -> None:
    lines = [ln.strip() for ln in to_text(FA).splitlines() if ": remark: " in ln]
    assert any(
        ln.startswith("examples/demo.c:36:7: remark: `y[idx[i]]` takes its subscript") and ln.endswith("[Missed:IndirectAccess]")
        for ln in lines
    )


class _Remark(yaml.YAMLObject):
    """What LLVM's opt-viewer (optrecord.py) does: one class per remark kind tag."""

    yaml_loader = yaml.SafeLoader

    @classmethod
    def from_yaml(cls, loader, node):  # type: ignore[no-untyped-def]
        return (cls.__name__, loader.construct_mapping(node, deep=True))


class Passed(_Remark):
    yaml_tag = "!Passed"


class Missed(_Remark):
    yaml_tag = "!Missed"


class Analysis(_Remark):
    yaml_tag = "!Analysis"


def test_yaml_is_llvm_optimization_records() -> None:
    docs = list(yaml.load_all(to_yaml(FA), Loader=yaml.SafeLoader))
    assert len(docs) == len(FA.all_remarks())
    kinds = {kind for kind, _ in docs}
    assert {"Missed", "Analysis"} <= kinds
    kind, rec = next(d for d in docs if d[1]["Name"] == "IndirectAccess")
    assert kind == "Missed" and rec["Pass"] == "scop-detect" and rec["Function"] == "scatter_add"
    assert rec["DebugLoc"] == {"File": "examples/demo.c", "Line": 36, "Column": 7}
    assert rec["Args"][0]["String"].startswith("`y[idx[i]]`")


def test_sarif_2_1_0_structure() -> None:
    doc = json.loads(to_sarif(FA))
    assert doc["version"] == "2.1.0"
    (run,) = doc["runs"]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert rules == sorted(set(rules)) and "IndirectAccess" in rules
    res = next(r for r in run["results"] if r["ruleId"] == "IndirectAccess")
    assert res["level"] == "warning" and rules[res["ruleIndex"]] == "IndirectAccess"
    region = res["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"], region["endColumn"]) == (36, 7, 13)
