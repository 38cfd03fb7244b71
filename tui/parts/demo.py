"""Demo mode (`breadth-tui --demo`): the shipped models race at the audience pace, PageDown plays the next probe."""

from __future__ import annotations

from breadth.core.world.probe import parse_sum
from breadth.tui import messages as m
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears
from breadth.tui.widgets.playground import AUDIENCE, Playground
from breadth.tui.widgets.sum_box import SumBox


class DemoMode(Part):
    """The probes to step through, the lines of the probes file that were skipped, and the probe played last."""

    def __init__(self, app, demo: tuple[list[str], list[str]] | None) -> None:
        super().__init__(app)
        self.demo = demo  # (probes to step through, probe-file lines skipped), else None: not in demo mode
        self.at = -1  # the demo probe played last

    def start(self) -> None:
        """The shipped models race at the audience pace; the probes wait for PageDown; skipped lines are named."""
        if self.demo is None:
            return
        self.app.playground.racing = True  # the play router gives the race its lanes
        self.app.playground.pace = AUDIENCE
        self._say()

    def _say(self) -> None:
        """Under the sum box: how many probes and which keys; a probes file's skipped lines, as an error line."""
        probes, skipped = self.demo
        note = f"demo: {len(probes)} probes, PageDown next, PageUp back"
        if skipped:
            more = f" (+{len(skipped) - 1} more)" if len(skipped) > 1 else ""
            note += f" · skipped {skipped[0]}{more}"
        self.app.playground.say(note, error=bool(skipped))

    @hears(m.EngineReady)
    @guarded
    def keep_keys_in_view(self, message: m.EngineReady) -> None:
        if self.demo is not None and self.at < 0:
            self._say()  # the demo's keys stay in view until the first probe

    def step(self, by: int) -> None:
        """Play the next (or previous) probe of the list, as if typed and entered in the sum box."""
        if self.demo is None:
            return
        probes, playground = self.demo[0], self.app.playground
        self.at = min(max(self.at + by, 0), len(probes) - 1)
        text = probes[self.at]
        playground.focus_sum()
        playground.query_one("#sum", SumBox).remember(text)  # Up recalls it, as if typed
        playground.say(f"probe {self.at + 1} of {len(probes)}: {text} · PageDown next, PageUp back")
        playground.post_message(Playground.PlayRequested(parse_sum(text), text))  # checked when read
