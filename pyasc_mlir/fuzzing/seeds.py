"""Which program a seed gives: runs, chunks and the Hypothesis settings they replay.

Program ``number`` of run ``seed`` (a :class:`Spec`) is the second example of a Hypothesis run
seeded with a hash of ``(seed, number)`` (the first example is always the simplest program);
:func:`~pyasc_mlir.fuzzing.shrinking.shrink` replays the same run to shrink a failure. A run is
cut into :class:`Chunk` s of :data:`CHUNK` programs, each for one platform of
:data:`PLATFORM_CYCLE` (one g++ library build and one worker task per chunk). The same seed
gives the same programs for a given Hypothesis version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from pyasc_mlir.fuzzing.program import Program
from pyasc_mlir.fuzzing.strategies import programs
from pyasc_mlir.platform import DEFAULT_PLATFORM

PLATFORM_CYCLE = (DEFAULT_PLATFORM, "310P3", DEFAULT_PLATFORM, "910B4")
"""Platforms of successive chunks (a batch library is built for one platform)."""
CHUNK = 25
"""Programs per library build (one g++ translation unit) and per worker task."""


@dataclass(frozen=True)
class Chunk:
    """``count`` consecutive programs of a run (one library build, one platform)."""

    seed: int
    index: int
    count: int
    max_ops: int = 15

    @property
    def platform(self) -> str:
        """The chunk's platform: :data:`PLATFORM_CYCLE` at ``seed + index``."""
        return PLATFORM_CYCLE[(self.seed + self.index) % len(PLATFORM_CYCLE)]

    def specs(self) -> list[Spec]:
        """The chunk's programs: numbers ``index * CHUNK`` on."""
        first = self.index * CHUNK
        return [Spec(self.seed, first + i, self.platform, self.max_ops) for i in range(self.count)]


@dataclass(frozen=True)
class Spec:
    """Program ``number`` of run ``seed``: the second example of a Hypothesis run seeded with
    (seed, number) -- the first is always the simplest program, the second a random one."""

    seed: int
    number: int
    platform: str
    max_ops: int = 15

    @property
    def hseed(self) -> int:
        """The Hypothesis seed: 4 bytes of SHA-256 of ``pyasc-fuzz:<seed>:<number>``."""
        h = hashlib.sha256(f"pyasc-fuzz:{self.seed}:{self.number}".encode()).digest()
        return int.from_bytes(h[:4], "little")


def hypothesis_settings(shrink: bool) -> Any:
    """Settings of a replayed run: two examples, no database or deadline, quiet; the shrink
    phase only when ``shrink``."""
    from hypothesis import HealthCheck, Phase, Verbosity, settings

    phases = [Phase.generate, Phase.shrink] if shrink else [Phase.generate]
    return settings(
        max_examples=2,
        database=None,
        deadline=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
        verbosity=Verbosity.quiet,
        derandomize=False,
    )


def generate_one(spec: Spec) -> Program:
    """The program of ``spec`` (deterministic)."""
    from hypothesis import given
    from hypothesis import seed as hseed

    seen: list[Program] = []

    @hypothesis_settings(shrink=False)
    @hseed(spec.hseed)
    @given(programs(spec.platform, spec.max_ops))
    def collect(p: Program) -> None:
        seen.append(p)

    collect()
    return seen[-1]


def generate(chunk: Chunk) -> list[Program]:
    """The programs of one chunk (deterministic in the run's seed)."""
    return [generate_one(s) for s in chunk.specs()]
