"""The transfer map as a picture: a heat map of held-out success, rows what training varied along, columns the
designs, each cell's interval over seeds and its ceiling at the same steps written in it."""

from __future__ import annotations

from pathlib import Path

from breadth.core.results.figures import finish, pyplot
from breadth.core.results.transfer_map import ALL, Cell, Reading
from breadth.core.world.text.shown import figure_text


def transfer_figure(readings: list[tuple[Cell, Reading | None]], designs: list, varies: list, out: Path) -> list[Path]:
    """One cell per (way of varying, design): held-out success (colour, bold) with its 95% interval and the
    ceiling's success beneath; a cell with no plan or no runs yet is left blank and says so."""
    import numpy as np

    plt = pyplot()
    by = {(c.design, c.vary): (c, r) for c, r in readings}
    values = np.full((len(varies), len(designs)), np.nan)
    for i, vary in enumerate(varies):
        for j, design in enumerate(designs):
            r = by[design, vary][1]
            if r is not None:
                values[i, j] = 100 * r.held[0]
    fig, ax = plt.subplots(figsize=(max(5.6, 1.8 + 2.4 * len(designs)), 1.4 + 0.7 * len(varies)), dpi=150)
    ax.imshow(values, cmap="Greens", vmin=0, vmax=100, aspect="auto")
    for i, vary in enumerate(varies):
        for j, design in enumerate(designs):
            c, r = by[design, vary]
            if r is None:
                text, detail, dark = (c.why or "not yet run"), "", False
            else:
                text = f"{100 * r.held[0]:.0f} [{100 * r.held[1]:.0f}-{100 * r.held[2]:.0f}]"
                detail = f"ceiling {100 * r.ceiling[0]:.0f}" + ("" if r.learned else ": not learned, says nothing")
                dark = 100 * r.held[0] > 60
            colour = "white" if dark else "black"
            ax.text(j, i - 0.12, text, ha="center", va="center", fontsize=9, color=colour, fontweight="bold")
            ax.text(j, i + 0.22, detail, ha="center", va="center", fontsize=7, color=colour)
    ax.set_xticks(range(len(designs)), [figure_text("held out: " + " ".join(d)) for d in designs], fontsize=8)
    ax.set_yticks(range(len(varies)), [" and ".join(v) if v else f"{ALL} the rest" for v in varies], fontsize=8)
    ax.xaxis.set_ticks_position("top")
    ax.set_ylabel("training varied along", fontsize=8)
    ax.set_title(
        "held-out success (%), 95% over seeds\nceiling: the held-out ones trained on for the same steps",
        fontsize=8,
        pad=18,
    )
    return finish(plt, fig, out)
