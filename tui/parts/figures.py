"""Figures for slides (Ctrl+F): the screen taken here, the files written by a worker (`tui.figures`), one line said."""

from __future__ import annotations

import time

from breadth.tui.figures import FiguresFailed, FiguresSaved, figures_dir, save_figures, saved_line
from breadth.tui.file_access import refuse_paths
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears


class Figures(Part):
    """Whether a Ctrl+F is still writing its files."""

    def __init__(self, app) -> None:
        super().__init__(app)
        self.saving = False  # a Ctrl+F is writing its files

    def save(self) -> None:
        """Save the screen (SVG now, on this thread; PNG later) and the current model's slide, in a worker."""
        app = self.app
        if refuse_paths(app, "figures"):  # served off loopback: nothing is written on the serving machine
            return
        if self.saving:
            app.playground.say("still saving the last figures; press F12 again once they are written")
            return
        svg = app.export_screenshot()  # reads the screen: the one step that must run here
        entry = app.models.entries.get(app.current)
        run, name = (entry.run, entry.title) if entry else (None, "")
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.saving = True
        app.playground.say("saving figures...")
        app.run_worker(
            lambda: app.post_message(save_figures(svg, run, name, figures_dir(), stamp)),
            thread=True,
            group="figures",
            exit_on_error=False,  # save_figures reports its own failures; this only guards against the unforeseen
        )

    @hears(FiguresSaved)
    @guarded
    def say_saved(self, message: FiguresSaved) -> None:
        self.saving = False
        self.app.playground.say(saved_line(message), error=bool(message.missing))

    @hears(FiguresFailed)
    @guarded
    def say_failed(self, message: FiguresFailed) -> None:
        self.saving = False
        self.app.playground.say(message.why, error=True)
