"""What the command line prints: score tables, the plate's table, episodes coloured by who wrote them."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from ..world.families import FAMILIES
from ..world.presets import PRESETS
from ..world.records import HeldOutScore, RunMeta
from ..world.scoring import Scored
from ..world.stats import mean_sd, wilson
from ..world.transcript import Transcript, visible


def scores_table(scores: dict[str, HeldOutScore], title: str) -> Table:
    """Per family: solved/total, the rate, its 95% Wilson interval, and the failure kinds."""
    t = Table(title=title, title_justify="left")
    t.add_column("family")
    t.add_column("solved", justify="right")
    t.add_column("rate", justify="right")
    t.add_column("95% interval", justify="right")
    t.add_column("failures")
    for name, s in scores.items():
        lo, hi = wilson(s.solved, s.total)
        fails = ", ".join(f"{k} {v}" for k, v in s.failures.items()) or "-"
        t.add_row(name, f"{s.solved}/{s.total}", s.percent(), f"{100 * lo:.0f}-{100 * hi:.0f}%", fails)
    return t


def plate_table(records: dict[tuple[str, int], RunMeta], seeds: list[int], held_out: int | None) -> Table:
    """The plate's figure: per preset and family, mean ± sd over seeds, each seed, and the plate's number."""
    n = "all" if held_out is None else held_out
    t = Table(
        title=f"held-out success, {n} sums per family; mean ± sd over seeds {','.join(map(str, seeds))}",
        title_justify="left",
    )
    t.add_column("trained on")
    for fam in FAMILIES:
        t.add_column(fam, justify="right")
        t.add_column("per seed", justify="right", style="dim")
    t.add_column("plate", justify="right", style="dim")
    for preset in PRESETS.values():
        row = [preset.label]
        for fam in FAMILIES:
            rates = [100 * records[(preset.name, s)].scores[fam].rate for s in seeds]
            m, sd = mean_sd(rates)
            row += [f"{m:.0f}% ± {sd:.0f}", " ".join(f"{r:.0f}" for r in rates)]
        row.append(" / ".join(f"{preset.plate.get(fam, 0)}%" for fam in FAMILIES))
        t.add_row(*row)
    return t


def episode_text(transcript: Transcript) -> Text:
    """The episode on one line, each segment in its writer's colour."""
    return Text.assemble(*((visible(seg.text), seg.role.style) for seg in transcript.segments))


def episode_lines(transcript: Transcript) -> list[Text]:
    """One line per segment under its writer's name (readable without colour too)."""
    return [
        Text.assemble(f"  {seg.role.writer:<11}", (visible(seg.text), seg.role.style)) for seg in transcript.segments
    ]


def episode_json(scored: Scored) -> dict:
    """One evaluated episode as JSON: the problem, the segments by role, the verdict."""
    return {
        "family": scored.problem.family,
        "prompt": scored.problem.prompt,
        "answer": scored.problem.answer,
        "segments": [[s.role.value, s.text] for s in scored.episode.transcript.segments],
        "solved": scored.verdict.solved,
        "failure": scored.verdict.failure.value if scored.verdict.failure else None,
    }
