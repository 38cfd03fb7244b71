"""Demo mode (`breadth-tui --demo`): a talk's story, told with PageDown (a presenter's clicker sends it) and PageUp.

The story (tui.story) is acts of probes with the presenter's captions. PageDown takes the next step:
an act's opening (its title and caption; its view opened, its calculator set), then each of its probes,
raced by the shipped models at the audience pace, then the next act. The caption line (tui.widgets.caption)
says what the presenter says; the line under the sum box says where the story is and which keys step it,
and the first time a verdict's failure kind shows (`malformed call`), what it means in plain words.
A probe stepped to before the engine is ready waits, named, and plays once it is; past the last step the
story says it has ended rather than playing the last probe again. An act whose view this app cannot show
(a view a newer story names) is left out; an act whose view does not open (the procedure with no snapshots to
show) is stepped over. An act may name the curve its curve view shows by its pool's words (`# curve: operands=3`),
so a talk can show both where breadth does not transfer and where it does. A procedure act with moments opens
on its first moment's snapshot (where the calls appear, not the babble before them) and PageDown steps to the
next moment's, each with its caption; the act before a curve act reads that curve ahead (in a thread, once
per process), so the curve act opens on its curve rather than seconds of loading.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from breadth.core.engine import protocol as p
from breadth.core.world.arithmetic.calculator import OFF_BY_ONE, Lie
from breadth.core.world.environments.probe import parse_sum
from breadth.core.world.episodes.verdict import Failure
from breadth.tui.guard import guarded
from breadth.tui.parts import Part, hears
from breadth.tui.screens.curve_store import read_ahead
from breadth.tui.screens.curve_view import CurveView
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.procedure_view import ProcedureView
from breadth.tui.screens.transfer_view import TransferView
from breadth.tui.story import IN_PLAIN_WORDS, Step, Story
from breadth.tui.widgets.caption import Caption
from breadth.tui.widgets.playground import AUDIENCE, LIES, Playground
from breadth.tui.widgets.sum_box import SumBox

KEYS = "PageDown next, PageUp back"
END = "end of the story"


class View:
    """A view an act can open: the screen it is, how to open it (the app's own action, as its key would), and an
    action of the view's own to run once it is open (the procedure starts at its first snapshot, to form)."""

    def __init__(self, screen: type, open_it: Callable[[object], None], start: str = "") -> None:
        self.screen = screen
        self.open = open_it  # app -> None; the view is open if the app's screen is then a `screen`
        self.start = start  # an action of the screen, as its key binding names it ('' for none)

    def opened(self, app) -> bool:
        """Open the view; False if it did not open (it has nothing to show yet, and the app said why)."""
        self.open(app)
        return isinstance(app.screen, self.screen)


VIEWS = {  # the story's views this app can open
    "procedure": View(ProcedureView, lambda app: app.action_procedure(), start="step(-1000)"),  # its Home key
    "matrix": View(MatrixView, lambda app: app.action_matrix()),
    "curve": View(CurveView, lambda app: app.action_curve()),
    "transfer": View(TransferView, lambda app: app.action_transfer()),
}


class DemoMode(Part):
    """The story, the step shown last, and a probe waiting for the engine."""

    def __init__(self, app, demo: Story | None) -> None:
        super().__init__(app)
        self.demo = demo if demo is None else demo.showing(frozenset(VIEWS))  # None: not in demo mode
        self.steps: list[Step] = self.demo.steps() if demo is not None else []
        self.at = -1  # index into `steps` of the step shown last; len(steps): past the end
        self.waiting: Step | None = None  # a probe stepped to before the engine was ready
        self.caption: Caption | None = None  # the main screen's caption line
        self.explained: set[str] = set()  # failure kinds already said in plain words in this talk
        self.said = ""  # the line under the sum box for the step shown last (said again if something cleared it)
        self.place = ""  # where the story is, short, before a failure kind's plain words: `act 1 · probe 2 of 4 · `

    def start(self) -> None:
        """The shipped models race at the audience pace; the story waits for PageDown; skipped lines are named."""
        if self.demo is None:
            return
        self.app.playground.racing = True
        self.app.play_router.show_race()  # the lanes in the first frame (the router hears of racing frames later)
        self.app.playground.pace = AUDIENCE
        self.caption = self.app.query_one(Caption)
        self._say()

    def _say(self) -> None:
        """Under the sum box: how long the story is and which keys; a probes file's skipped lines, as an error line."""
        acts, probes, skipped = len(self.demo.acts), len(self.demo.probes), self.demo.skipped
        parts = [f"{acts} acts" if acts > 1 else "", f"{probes} probes" if probes else ""]
        note = f"demo: {', '.join(p for p in parts if p) or 'a story'}, {KEYS}"
        if skipped:
            more = f" (+{len(skipped) - 1} more)" if len(skipped) > 1 else ""
            note += f" · skipped {skipped[0]}{more}"
        self.app.playground.say(note, error=bool(skipped))

    @hears(p.Ready)
    @guarded
    def play_waiting(self, ev: p.Ready) -> None:
        """The engine is ready: play the probe that waited for it, or keep the story's keys in view."""
        if self.demo is None:
            return
        if self.waiting is not None:
            step, self.waiting = self.waiting, None
            self._play(step)
        elif self.at < 0:
            self._say()  # the demo's keys stay in view until the first step
        else:
            self._note(self.said)  # the engine's readiness cleared the line: the story's place stays in view

    @hears(p.ProbeFinished)
    @guarded
    def explain_verdict(self, event: p.ProbeFinished) -> None:
        """The first time a failure kind ends a lane in a talk, the line under the sum box says it in plain words
        after where the story is (unless the caption on screen says it already); one kind at a time, the others when
        they show again. A copy of the lie after the right calls shows no kind; one after wrong calls shows both.
        A view's replays (the procedure act's snapshots) are not the race: their verdicts are the view's."""
        kind, playground = event.failure, self.app.playground
        shown = not (event.copied and kind == Failure.ANSWER_DIFFERS.value)
        if self.demo is None or event.solved or not shown or kind not in IN_PLAIN_WORDS or kind in self.explained:
            return
        if event.id not in playground.race.by_probe and event.id not in playground.probes:
            return  # not a lane's, nor a single play's: the line would name the last probe's place under it
        self.explained.add(kind)
        if self.caption is None or f'"{kind}"' not in self.caption.plain():
            self._note(f'{self.place}"{kind}": {IN_PLAIN_WORDS[kind]}')

    def step(self, by: int) -> None:
        """Take the next (or previous) step of the story: an act's opening or one of its probes. An act whose view
        does not open (nothing to show yet) is stepped over, in the same direction."""
        if self.demo is None:
            return
        before = self.steps[self.at].act if 0 <= self.at < len(self.steps) else None
        at = self.at + by
        while 0 <= at < len(self.steps):
            self.at = at
            if self._show(self.steps[at], entering=self.steps[at].act != before):
                return
            at += by
        if at < 0:
            self.at = -1
            self._note(f"the start of the story · {KEYS}")
        else:
            self.at = len(self.steps)
            self._end()

    def _show(self, step: Step, entering: bool) -> bool:
        """Set the act's calculator if the act is new, then show its opening or play the probe; False if the act's
        view did not open."""
        act = self.demo.acts[step.act]
        view = VIEWS.get(act.view) if step.probe is None else None
        moment = act.moments[step.moment if step.moment is not None else 0] if act.moments else None
        if view is None:
            self._main_screen()
        elif not view.opened(self.app):
            return False
        elif act.curve and isinstance(self.app.screen, CurveView):
            self.app.screen.show_curve(act.curve)  # the act's curve, by its pool's words
        if entering:
            self._set_lie(act.lie)
            self._read_ahead(step.act)
        self.waiting = None
        if step.probe is not None:
            self._play(step)
            return True
        say = act.say if step.moment is None else moment.say
        if view is not None:
            start = view.start if moment is None else f"at_step({moment.step})"  # the moment's snapshot
            self.app.call_after_refresh(self._on_view, view, self._where(step.act), say, start)
        self._caption(self._where(step.act), say)
        where = self._where(step.act)
        if step.moment is not None:
            of = f"{step.moment + 1} of {len(act.moments)}"
            where = f"{self._where(step.act, title=False)}moment {of}: step {moment.step}"
        self._note(f"{where} · {KEYS}")
        return True

    def _read_ahead(self, index: int) -> None:
        """Read the shipped curves of this act and the next, if they are curve acts, in a thread (each once per
        process; this act's first): a curve act then opens on its chart, not on seconds of "loading"."""
        words = [act.curve for act in self.demo.acts[index : index + 2] if act.view == "curve"]
        if words:
            self.app.run_worker(partial(read_ahead, words), thread=True, group="curve-ahead", exclusive=True)

    def _play(self, step: Step) -> None:
        """Race the step's probe, as if typed and entered in the sum box (or name it and wait for the engine)."""
        act, playground, supervisor = self.demo.acts[step.act], self.app.playground, self.app.supervisor
        probe = act.probes[step.probe]
        self._caption("", probe.say)
        where = f"{self._where(step.act, title=False)}probe {step.probe + 1} of {len(act.probes)}: {probe.text}"
        self.place = f"{self._where(step.act, title=False, of=False)}probe {step.probe + 1} of {len(act.probes)} · "
        if not supervisor.ready and not supervisor.gave_up:
            self.waiting = step
            self._note(f"{where} · waits for the model to start")
            return
        playground.focus_sum()
        playground.query_one("#sum", SumBox).remember(probe.text)  # Up recalls it, as if typed
        self._note(f"{where} · {KEYS}")
        playground.post_message(Playground.PlayRequested(parse_sum(probe.text), probe.text))  # checked when read

    def _note(self, line: str) -> None:
        """Say where the story is under the sum box (kept, to be said again once the engine is ready)."""
        self.said = line
        self.app.playground.say(line)

    def _end(self) -> None:
        self.waiting = None
        self._main_screen()
        self._caption(END, "")
        self._note(f"{END} · PageUp goes back")

    def _where(self, index: int, title: bool = True, of: bool = True) -> str:
        """`act 2 of 5: The lie` (or `act 2 of 5 · ` before a probe, `act 2 · ` without `of`); '' for a story of one
        untitled act."""
        acts = self.demo.acts
        if len(acts) == 1 and not acts[0].title:
            return ""
        head = f"act {index + 1} of {len(acts)}" if of else f"act {index + 1}"
        if not title:
            return head + " · "
        return f"{head}: {acts[index].title}" if acts[index].title else head

    def _caption(self, where: str, say: str) -> None:
        if self.caption is not None:
            self.caption.show(where, say)

    @guarded
    async def _on_view(self, view: View, where: str, say: str, start: str) -> None:
        """On the view the act opened (a screen of its own, over the main one): the caption, the view's `start`."""
        screen = self.app.screen
        if not isinstance(screen, view.screen):
            return
        if not screen.query(Caption):
            screen.add_class("talk")  # the view as a talk shows it (the matrix: rows, not a cell's detail)
            await screen.mount(Caption())
        screen.query_one(Caption).show(where, say)
        if start:
            await screen.run_action(start)

    def _main_screen(self) -> None:
        """Close any view or prompt over the main screen: the race shows."""
        while len(self.app.screen_stack) > 1:
            self.app.pop_screen()

    def _set_lie(self, spec: str) -> None:
        """The act's calculator: honest, off by one, or always a number (Lie.parse reads what the file said)."""
        playground, lie = self.app.playground, Lie.parse(spec)
        if lie is not None and lie.kind != OFF_BY_ONE:
            playground.lie_value = lie.value
        playground.lie = 0 if lie is None else LIES.index(OFF_BY_ONE if lie.kind == OFF_BY_ONE else "value")
