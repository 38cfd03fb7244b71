"""The matrix view's columns when the stored rows hold more environments than fit a column each at the screen's width.

Runs of `breadth curve` are scored on generated environments whose ids run to 15 characters; with the ten named
environments beside them they need over a hundred columns. Then the view pools them by dimension
(`core.results.matrix_dimensions`): `own` over the environments a row trained on (`*`), `held out` over the rest,
then the held-out ones by how many numbers, operation and call form, each environment counting once. A cell is
coloured by the matrix's bands; the detail under the table names the cell's environments with their own rates.
The registered environments alone always keep their column each (`fits`).
"""

from __future__ import annotations

from rich.text import Text

from breadth.core.results.matrix import MatrixRow, band, band_ranges, columns
from breadth.core.results.matrix_dimensions import OWN, DimensionColumn, per_seed, pooled
from breadth.core.world.environments.environment import name_label, short_label
from breadth.core.world.text.shown import shown

DETAIL_LINES = 2  # lines listing a cell's environments under the table (the rest counted)


def fits(rows: list[MatrixRow], usable: int, label: int, least: int) -> bool:
    """True if `rows` keep a column per environment in `usable` columns beside `label`-wide names: always for the
    registered environments alone (the matrix as it has always been), else if every column, at least `least` wide and
    one wider than its longest label, fits."""
    names = columns(rows)
    if len(names) == len(columns()):
        return True
    need = max(least, max(len(short_label(n)) for n in names) + 1)
    return label + len(names) * need <= usable


def header(dims: list[DimensionColumn], i: int, width: int) -> str:
    """Column `i`'s two header lines right-justified to `width`: its group over a group's first column, its value."""
    first = i == 0 or dims[i - 1].dimension != dims[i].dimension
    return f"{dims[i].group if first else '':>{width}}\n{dims[i].header:>{width}}"


def least_widths(dims: list[DimensionColumn], least: int) -> list[int]:
    """Each column's width: at least `least`, and one more than its header's lines (so neighbours never touch)."""
    out = []
    for i, column in enumerate(dims):
        first = i == 0 or dims[i - 1].dimension != column.dimension
        out.append(max(least, len(column.header) + 1, len(column.group) + 1 if first else 0))
    return out


def cell_text(row: MatrixRow, column: DimensionColumn, styles: dict[str, str]) -> Text:
    """`*99` over the trained environments, `5` over held-out ones, in the band's style; a dim `-` where the row
    has none in this column."""
    r = pooled(row, column)
    if r is None:
        return Text("-", style="dim", justify="right")
    mark = "*" if column.dimension == OWN else ""
    return Text(f"{mark}{100 * r.mean:.0f}", style=styles[band(r.mean)], justify="right")


def scale_key(styles: dict[str, str]) -> Text:
    """The key line of the pooled form: the bands, what `own` and the rest pool, `-`, F12."""
    out = Text("key: ")
    for text, name in band_ranges():
        out.append(f" {text} ", style=styles[name]).append(" ")
    return out.append("· own trained, rest held out · - none · F12", style="")


def detail(row: MatrixRow, column: DimensionColumn, width: int, codes: bool = False) -> Text:
    """The lines under the table for one pooled cell: which environments it pools and their mean over seeds, per
    seed, then the environments best first with their own means (in `width` columns, the rest counted; an environment in
    words, by code with `codes`), then the failure kinds over them all."""
    names = column.members(row)
    where = column.describe()
    if not names:
        return Text(f"{where}: no environment of this row scored here", style="dim")
    r = pooled(row, column)
    out = Text.assemble(
        (f"{where}: ", "bold"),
        f"{100 * r.mean:.0f}% over {len(names)} environment{'s' if len(names) != 1 else ''}, ",
        f"{len(row.seeds)} seeds ({r.solved:,}/{r.total:,})",
    )
    seeds = per_seed(row, column)
    if seeds:
        out.append("\nper seed: " + "  ".join(f"s{s} {100 * v:.0f}" for s, v in seeds.items()), style="dim")
    ranked = sorted(names, key=lambda n: -row.cells[n].mean)
    lines = [Text()]
    for i, name in enumerate(ranked):
        entry = f"{shown(name_label(name, codes))} {100 * row.cells[name].mean:.0f}"
        more = f"  +{len(ranked) - i} more"
        room = width - (len(more) if len(lines) == DETAIL_LINES else 0)
        if lines[-1].cell_len and lines[-1].cell_len + 3 + len(entry) > room:
            if len(lines) == DETAIL_LINES:
                lines[-1].append(more, style="dim")
                break
            lines.append(Text())
        lines[-1].append(" · " if lines[-1].cell_len else "").append(entry)
    for line in lines:
        out.append("\n").append_text(line)
    kinds: dict[str, int] = {}
    for name in names:
        for kind, n in row.cells[name].failures.items():
            kinds[kind] = kinds.get(kind, 0) + n
    if kinds:
        text = ", ".join(f"{shown(k)} {n}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
        out.append(f"\nfailures (all seeds): {text}")
    return out
