"""`breadth models`: the shipped models by the names every command takes, with what each was trained on.

Reads the checkpoints' headers only (no torch), so it answers at once; nothing is written.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from breadth.core.storage.header import read_header
from breadth.core.storage.paths import shipped_checkpoint
from breadth.core.storage.presets import PRESETS, SHIPPED
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.text.shown import shown_text

console = Console(highlight=False, markup=False, emoji=False)
PLATE = ("add_2x2", "add_3x1")  # the plate's environments, a column each; the rest are averaged as `others`


def models(args) -> int:
    """Print the shipped models: name, what it was trained on, its seed and held-out scores."""
    t = Table(title="shipped models (give a name wherever a checkpoint is asked for)", title_justify="left")
    t.add_column("name")
    t.add_column("trained on")
    t.add_column("seed", justify="right")
    for env in PLATE:
        t.add_column(shown_text(REGISTERED[env].short), justify="right")
    t.add_column("others", justify="right")
    for name in SHIPPED:
        header = read_header(shipped_checkpoint(name))
        run = header.run
        if name in PRESETS:
            trained = f"{PRESETS[name].label} demonstrations"
        else:  # a base: its shape, as bases differ only in it
            shape = header.model
            trained = f"single-digit worksheets ({shape['n_layer']}x{shape['n_embd']})"
        scores = [run.scores[f].percent() if f in run.scores else "-" for f in PLATE]
        rest = [s.rate for f, s in run.scores.items() if f not in PLATE]
        others = f"{100 * sum(rest) / len(rest):.0f}%" if rest else "-"
        t.add_row(shown_text(name), shown_text(trained), run.seed_text, *scores, others)
    console.print(t)
    console.print("Scores: held-out sums, greedy; fine-tunes start from base (a pool's: pool_base).")
    console.print("e.g. breadth play two_digit_70 23+45 · breadth eval mix_35_35")
    return 0
