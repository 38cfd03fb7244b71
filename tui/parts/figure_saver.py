"""Figures for slides (F12): the screen taken here, the files written by a worker (`tui.figure_files`), one line said.

On the main screen the slide is the current model's; a view with a picture of its own (the matrix) asks with
FiguresAsked, and the line saying where the files went is shown on that view, not behind it.
"""

from __future__ import annotations

import time

from breadth.tui.figure_files import (
    FiguresAsked,
    FiguresFailed,
    FiguresSaved,
    Slide,
    figures_dir,
    save_figures,
    saved_line,
)
from breadth.tui.file_access import files_allowed, refusal
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears


class Figures(Part):
    """Whether an F12 is still writing its files, and the view that asked (its line goes there)."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.saving = False  # an F12 is writing its files
        self.asked_by = None  # the view that asked for its own figures, if one did (a Screen with say())

    def save(self, slide: Slide | None = None, view=None) -> None:
        """Save the screen (SVG now, on this thread; PNG later) and the current model's slide (or the view's own
        `slide`), in a worker."""
        app = self.app
        if not files_allowed():  # served (no --allow-files): nothing is written on the serving machine
            self._say(view, refusal("figures"), error=True)
            return
        if self.saving:
            self._say(view, "still saving the last figures; press F12 again once they are written")
            return
        svg = app.export_screenshot()  # reads the screen: the one step that must run here
        entry = app.catalogue.entries.get(app.current)
        run, name = (entry.run, entry.title) if entry and slide is None else (None, "")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.saving, self.asked_by = True, view
        self._say(view, "saving figures...")
        app.run_worker(
            lambda: app.post_message(save_figures(svg, run, name, figures_dir(), stamp, slide)),
            thread=True,
            group="figures",
            exit_on_error=False,  # save_figures reports its own failures; this only guards against the unforeseen
        )

    @hears(FiguresAsked)
    @guarded
    def save_view_figures(self, message: FiguresAsked) -> None:
        """A view's F12: its screen and its own picture."""
        self.save(message.slide, message.view)

    @hears(FiguresSaved)
    @guarded
    def say_saved(self, message: FiguresSaved) -> None:
        self.saving = False
        self._say(self.asked_by, saved_line(message), error=bool(message.missing))

    @hears(FiguresFailed)
    @guarded
    def say_failed(self, message: FiguresFailed) -> None:
        self.saving = False
        self._say(self.asked_by, message.why, error=True)

    def _say(self, view, line: str, error: bool = False) -> None:
        """`line` on the view that asked while it is still open, else under the sum box."""
        if view is not None and view in self.app.screen_stack:
            view.say(line, error=error)
        else:
            self.app.playground.say(line, error=error)
