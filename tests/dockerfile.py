"""A Dockerfile read as Docker reads it, enough to assert what the image must be: instructions
with their continuation lines joined, comments and parser directives dropped, grouped by stage."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Instruction:
    keyword: str  # upper case: FROM, RUN, COPY …
    value: str  # the rest of the line, continuations joined
    line: int

    def words(self) -> list[str]:
        """Exec form (a JSON array) or shell form, split as a shell would."""
        text = self.value.strip()
        if text.startswith("["):
            parsed = json.loads(text)
            assert isinstance(parsed, list)
            return [str(p) for p in parsed]
        return shlex.split(text)


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def last(self, keyword: str) -> Instruction | None:
        found = self.all(keyword)
        return found[-1] if found else None


@dataclass
class Dockerfile:
    args: dict[str, str]  # ARGs before the first FROM, with their defaults
    stages: list[Stage]

    def base_of(self, stage: Stage) -> str:
        """The stage's image with ``${ARG}`` defaults filled in."""
        return re.sub(r"\$\{?(\w+)\}?", lambda m: self.args.get(m.group(1), m.group(0)), stage.base)


def instructions(text: str) -> list[Instruction]:
    found: list[Instruction] = []
    pending = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue  # blank lines, comments and parser directives (# syntax=…)
        if pending and line.startswith("#"):
            continue  # comments inside a continued instruction are dropped too
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = pending + line
        pending = ""
        keyword, _, value = whole.partition(" ")
        found.append(Instruction(keyword.upper(), value.strip(), start))
    assert not pending, "the Dockerfile ends inside a continued instruction"
    return found


def parse(path: Path) -> Dockerfile:
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for ins in instructions(path.read_text()):
        if ins.keyword == "FROM":
            words = ins.value.split()
            flags = [w for w in words if w.startswith("--")]
            rest = [w for w in words if not w.startswith("--")]
            assert not flags or all(f.startswith("--platform") for f in flags), ins
            name = rest[2] if len(rest) == 3 and rest[1].upper() == "AS" else None
            stages.append(Stage(base=rest[0], name=name))
        elif not stages:
            assert ins.keyword == "ARG", f"line {ins.line}: only ARG may precede the first FROM"
            key, _, default = ins.value.partition("=")
            args[key.strip()] = default.strip()
        else:
            stages[-1].instructions.append(ins)
    return Dockerfile(args=args, stages=stages)
