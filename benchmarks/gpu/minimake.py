"""The bundle's Makefile run without make (a device image need not have it): variables,
explicit rules, `$@ $< $^ $(@D)`, up-to-date checks by time, `-k -j` semantics. Only what
bundle.py writes; not a make."""

from __future__ import annotations

import os
import re
import subprocess
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

VAR = re.compile(r"\$\((\w+)\)")


@dataclass
class Rule:
    target: str
    deps: list[str]
    recipe: list[str]


def _expand(text: str, variables: dict[str, str]) -> str:
    for _ in range(10):
        new = VAR.sub(lambda m: variables.get(m.group(1), ""), text)
        if new == text:
            break
        text = new
    return text


def parse(text: str, overrides: dict[str, str]) -> dict[str, Rule]:
    """The rules of a Makefile as bundle.py writes them, variables expanded."""
    variables: dict[str, str] = {}
    rules: dict[str, Rule] = {}
    current: Rule | None = None
    for line in text.splitlines():
        if line.startswith("\t") and current is not None:
            current.recipe.append(line[1:].lstrip("@"))
            continue
        current = None
        m = re.match(r"^(\w+)\s*:?=\s*(.*)$", line)
        if m:
            variables[m.group(1)] = overrides.get(m.group(1), m.group(2))
        elif ":" in line and not line.startswith(("#", ".")):
            head, deps = line.split(":", 1)
            v = {**variables, **overrides}
            current = Rule(_expand(head.strip(), v), _expand(deps, v).split(), [])
            rules[current.target] = current
    final = {**variables, **overrides}
    for r in rules.values():
        r.recipe = [_expand(c, final) for c in r.recipe]
    return rules


def _command(rule: Rule, line: str) -> str:
    deps = rule.deps
    return (line.replace("$(@D)", os.path.dirname(rule.target)).replace("$@", rule.target)
            .replace("$<", deps[0] if deps else "").replace("$^", " ".join(deps)))


def _stale(rule: Rule, cwd: Path) -> bool:
    target = cwd / rule.target
    if not rule.recipe or not target.exists():
        return True
    t = target.stat().st_mtime
    return any((cwd / d).stat().st_mtime > t for d in rule.deps if (cwd / d).exists())


def build(makefile: Path, targets: list[str], overrides: dict[str, str], jobs: int) -> tuple[int, str]:
    """Build `targets` as `make -k -j<jobs>` would; returns (0 or 2, the log)."""
    cwd = makefile.parent
    rules = parse(makefile.read_text(), overrides)
    log: list[str] = []
    lock = threading.Lock()
    state: dict[str, bool] = {}  # target -> built (True) or failed (False)

    def run(rule: Rule) -> bool:
        for line in rule.recipe:
            cmd = _command(rule, line)
            p = subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True, text=True)
            with lock:
                log.append(cmd + "\n" + p.stdout + p.stderr)
            if p.returncode != 0:
                return False
        return True

    order: list[str] = []

    def visit(t: str) -> None:
        if t in rules and t not in order:
            for d in rules[t].deps:
                visit(d)
            order.append(t)

    for t in targets:
        visit(t)
    pending = list(order)
    running: dict[Future[bool], str] = {}
    with ThreadPoolExecutor(jobs) as pool:
        while pending or running:
            for t in list(pending):
                deps = [d for d in rules[t].deps if d in rules]
                if any(state.get(d) is False for d in deps):
                    state[t] = False
                    pending.remove(t)
                elif all(d in state for d in deps) and len(running) < jobs:
                    pending.remove(t)
                    if _stale(rules[t], cwd):
                        running[pool.submit(run, rules[t])] = t
                    else:
                        state[t] = True
            if running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in done:
                    state[running.pop(f)] = f.result()
    failed = [t for t in order if state.get(t) is False and rules[t].recipe]
    log += [f"minimake: *** [{t}] Error" for t in failed]
    return (2 if failed else 0), "\n".join(log)
