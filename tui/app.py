"""BreadthApp: the training panel, the score panel and the playground, wired to the engine process by its parts.

The app never imports torch: checkpoints' metadata fills the screen at once, the engine process
starts after the first frame (`tui.supervisor`), and everything it does arrives as one message per
event (`tui.messages`). The app is an assembly: its parts (`tui.parts`: the models catalogue, the
training controller, the play router, demo mode, figures, the engine's life) each hear the messages of
their concern, which the app delivers to them in a fixed order; views and widgets post messages, they do
not call the app. What the panels show (the model being trained, the current model, the engine's state)
is reactive here: setting it updates them. Every handler and action is `guarded`: an error in one is
logged to `app.log` and shown in one line, and the app runs on; anything that still escapes is logged
there before Textual ends the app.
"""

from __future__ import annotations

from collections.abc import Callable

from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import var
from textual.screen import ModalScreen, Screen

from breadth.core.world.text.shown import shown
from breadth.tui import messages as m
from breadth.tui.engine import EngineProcess, engine_log
from breadth.tui.guard import guarded, log_error
from breadth.tui.keys import APP_KEYS, key_name
from breadth.tui.parts.catalogue import DEFAULT_MODEL, Catalogue
from breadth.tui.parts.demo import DemoMode
from breadth.tui.parts.engine_watch import EngineWatch
from breadth.tui.parts.environments import Board
from breadth.tui.parts.figure_saver import Figures
from breadth.tui.parts.play import PlayRouter
from breadth.tui.parts.training import TrainingJobs
from breadth.tui.screens.curve_view import CurveView
from breadth.tui.screens.demos_view import DemosView
from breadth.tui.screens.help import HelpScreen
from breadth.tui.screens.matrix_view import MatrixView
from breadth.tui.screens.transfer_view import TransferView
from breadth.tui.story import Story
from breadth.tui.supervisor import Supervisor
from breadth.tui.widgets.bounded_input import BoundedInput
from breadth.tui.widgets.caption import Caption
from breadth.tui.widgets.footer import KeysFooter
from breadth.tui.widgets.playground import Playground
from breadth.tui.widgets.score_panel import ScorePanel
from breadth.tui.widgets.train_panel import TrainPanel

__all__ = ["DEFAULT_MODEL", "BreadthApp"]


class BreadthApp(App):
    """Choose a mix, watch it train, probe it token by token."""

    TITLE = "breadth"
    ENABLE_COMMAND_PALETTE = False
    SUB_TITLE = "breadth of training environments is what transfers"
    CSS_PATH = "breadth.tcss"
    BINDINGS = APP_KEYS  # tui.keys: function keys, none a readline or text-box editing key

    training: var[int | None] = var(None, init=False)  # the job being trained, if any
    current: var[str | None] = var(None, init=False, always_update=True)  # the model that plays and shows scores
    engine_status = var("", init=False)  # what the engine is doing, in the playground's bottom border
    stage = var(False, init=False)  # the stage layout: the playground alone on the screen, lanes large (F5)
    codes = var(False, init=False)  # labels in coordinate codes (`a2x2 70`), not words, as a person asked (Shift+F5)

    def __init__(self, engine_factory=None, start_engine: bool = True, demo: Story | None = None) -> None:
        super().__init__()
        factory = engine_factory or (lambda: EngineProcess(engine_log()))
        self.auto_start = start_engine
        self.catalogue = Catalogue(self)  # the models catalogue: the runs table's models and the current one
        self.engine_watch = EngineWatch(self)  # the engine's status, what it holds, its restarts
        self.training_jobs = TrainingJobs(self)  # the training job and every run's snapshots
        self.play_router = PlayRouter(self)  # single play, races and the procedure view's replays
        self.demo_mode = DemoMode(self, demo)  # `breadth-tui --demo`
        self.figures = Figures(self)  # F12
        self.board = Board(self)  # Shift+F4: every environment's score of the playing model, kept per model
        self.supervisor = Supervisor(self, factory, on_start=self.engine_watch.started)
        self.hearers: dict[object, list[Callable]] = {}  # what is heard (`hears`) -> its parts' handlers, in order
        for part in (
            self.catalogue,
            self.engine_watch,
            self.training_jobs,
            self.play_router,
            self.demo_mode,
            self.figures,
            self.board,
        ):
            for kind, handler in part.handlers():
                self.hearers.setdefault(kind, []).append(handler)

    def compose(self) -> ComposeResult:
        # kept as attributes: a modal screen on top would hide them from query_one
        self.train_panel = TrainPanel(id="train-panel")
        self.score_panel = ScorePanel(id="score-panel")
        self.playground = Playground(id="playground")
        with Horizontal(id="top"):
            yield self.train_panel
            yield self.score_panel
        yield self.playground
        yield Caption(id="caption")  # a talk's captions (demo mode); hidden otherwise
        yield KeysFooter(compact=True, show_command_palette=False)

    @guarded
    def on_mount(self) -> None:
        self.catalogue.start()
        self.playground.focus_sum()
        if self.auto_start:  # the first frame says the model is starting; torch loads after it
            self.engine_watch.starting()
        self.demo_mode.start()
        self.stage = self.demo_mode.demo is not None  # `--demo` starts in the stage layout
        self.call_after_refresh(self.catalogue.read_store)

    @on(Message)
    def deliver(self, message: Message) -> None:
        """Hand a message that reached the app to each part that hears its type (each handler is guarded); an
        engine event itself to each part that hears the event (`m.heard_as`)."""
        if isinstance(message, m.FromEngine):
            for handler in self.hearers.get(m.heard_as(message.event), ()):
                handler(message.event)
            return
        for handler in self.hearers.get(type(message), ()):
            handler(message)

    # what the parts share, shown by the panels

    @property
    def entries(self):
        """The models catalogue's entries by key (the runs table's rows)."""
        return self.catalogue.entries

    def watch_training(self, job: int | None) -> None:
        self.train_panel.training = job is not None
        self.score_panel.training = job is not None
        self.refresh_bindings()  # the footer dims Train or Stop

    def watch_stage(self, stage: bool) -> None:
        """The stage layout: the training form and the tables hidden, the playground (and each lane) large."""
        self.playground.screen.set_class(stage, "stage")
        self.playground.stage = stage

    def watch_current(self, key: str | None) -> None:
        self.score_panel.show_model(self.entries.get(key))
        self.score_panel.set_runs(list(self.entries.values()), key)

    def watch_engine_status(self, text: str) -> None:
        self.playground.border_subtitle = text

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Train and Stop are dimmed when they would do nothing; picking keys reach the app only while shading on
        the main screen (otherwise Shift+arrows are the focused text box's, which selects with them)."""
        if action in ("train", "stop"):
            return True if (self.training is None) == (action == "train") else None
        if action == "demo_step":  # the story's keys in demo mode; otherwise they scroll what has the focus
            return self.demo_mode.demo is not None
        if action in ("pick", "pick_lane"):
            return self.playground.shaded and self.screen is self.playground.screen
        return True

    @guarded
    def action_train(self) -> None:
        self.train_panel.ask_train()

    @guarded
    def action_stop(self) -> None:
        self.train_panel.ask_stop()

    @guarded
    def action_next_model(self) -> None:
        self.catalogue.next_model()

    action_save = guarded(lambda self: self.catalogue.save())  # Ctrl+S
    action_load = guarded(lambda self: self.catalogue.load())  # Ctrl+O
    action_codes = guarded(lambda self: setattr(self, "codes", not self.codes))  # Shift+F5: codes, or words again
    watch_codes = guarded(lambda self: self.catalogue.relabel())

    @guarded
    def action_race(self) -> None:
        """Toggle between racing the sum on several models and playing it on the current one."""
        self.playground.racing = not self.playground.racing  # the play router hears it and gives the lanes

    @guarded
    def action_procedure(self) -> None:
        self.training_jobs.watch_procedure()

    action_rollouts = guarded(lambda self: self.training_jobs.watch_rollouts())  # Shift+F1
    action_environments = guarded(lambda self: self.board.open())  # Shift+F4

    @guarded
    def action_demo_step(self, by: int) -> None:
        self.demo_mode.step(by)

    @guarded
    def action_lie(self) -> None:
        self.notify(f"calculator: {self.playground.cycle_lie()}", timeout=2)  # honest, off by one, or a typed number

    @guarded
    def action_shade(self) -> None:
        self.playground.shaded = not self.playground.shaded  # characters by their probability; a pick's alternatives

    @guarded
    def action_stage(self) -> None:
        self.stage = not self.stage  # the stage layout (the race large, nothing else), or back to the normal one

    @guarded
    def action_pick(self, by: int) -> None:
        self.playground.pick(by)

    @guarded
    def action_pick_lane(self, by: int) -> None:
        self.playground.pick_lane(by)

    @guarded
    def action_pace(self) -> None:
        self.notify(f"streaming pace: {self.playground.cycle_pace()}", timeout=1.5)

    action_matrix = guarded(lambda self: self.open_screen(MatrixView, lambda: MatrixView(self.codes)))

    @guarded
    def action_curve(self) -> None:
        self.open_screen(CurveView, CurveView)

    @guarded
    def action_transfer(self) -> None:
        self.open_screen(TransferView, TransferView)

    action_figures = guarded(lambda self: self.figures.save())

    @guarded
    def action_demos(self) -> None:
        """What the model would learn from: the form's mix's demonstrations, loss-carrying characters marked."""
        self.open_screen(DemosView, lambda: DemosView(self.train_panel.request))

    @guarded
    def action_help(self) -> None:
        """Open the help, or close it if it is on top (F1 again, as its own keys say)."""
        if isinstance(self.screen, HelpScreen):
            self.pop_screen()
        else:
            self.open_screen(HelpScreen, HelpScreen)

    # screens over the main one: at most one view, and one modal (help, a prompt) over it

    def open_screen(self, kind: type[Screen], make: Callable[[], Screen], callback: Callable | None = None) -> None:
        """Bring back the open screen of `kind` (closing what is over it), else open `make()` in its layer's place.

        The stack holds at most the main screen, one full-screen view (matrix, procedure, demos) and one modal
        (help, a path prompt) over it: a view key replaces the view and modal open, a modal replaces the
        modal open. A view key never stacks a copy of its view.
        """
        stack = self.screen_stack
        same = next((i for i, screen in enumerate(stack) if isinstance(screen, kind)), None)
        if same is not None:
            keep = same + 1
        elif issubclass(kind, ModalScreen):
            keep = 2 if len(stack) > 1 and not isinstance(stack[1], ModalScreen) else 1  # over the view, if any
        else:
            keep = 1  # a view sits on the main screen
        if same is None and callback is None and len(stack) > keep:  # a view in a view's place: the main screen
            for _ in range(len(stack) - keep - 1):  # stays suspended (it would redraw, its footer recompose)
                self.pop_screen()
            self.switch_screen(self._made(make))
            return
        for _ in range(len(stack) - keep):
            self.pop_screen()
        if same is None:
            self.push_screen(self._made(make), callback)

    def _made(self, make: Callable[[], Screen]) -> Screen:
        """`make()`, told to name environments and runs by codes if a person asked for them (a view never reads the
        app)."""
        screen = make()
        if hasattr(screen, "show_codes"):
            screen.codes = self.codes
        return screen

    async def on_event(self, event: events.Event) -> None:
        """Drop a typed character a full text box would refuse before Textual routes it (bindings, the box's queue).

        A terminal without bracketed paste types a paste as keys: 100 kB into the sum box took 14.5 s in tmux,
        4.5 s of it the bell Input rang for each refused key and most of the rest routing. Keys come faster than
        the box takes them, so it counts those on their way. No binding of the app is a printable character:
        the key would have gone to the box.
        """
        if isinstance(event, events.Key) and not event.is_forwarded and event.is_printable:
            box = self.focused
            if isinstance(box, BoundedInput):
                if box.full():
                    box.refuse_key()
                    return
                box.incoming += 1  # routed to it below: no binding takes a printable key
        await super().on_event(event)

    def get_key_display(self, binding: Binding) -> str:
        """A key as the help names it (`F2`, `Shift+F9`), in the footer too."""
        return binding.key_display or key_name(binding.key.split(",")[0].strip())

    def action_help_quit(self) -> None:
        """Ctrl+C (copy in a text box) does not quit: say which key does, in plain words (Textual's own line showed
        its markup, `Press [b]ctrl+q[/b]`, through this app's plain-text notify)."""
        self.notify("Ctrl+C does not quit: press Ctrl+Q to quit", timeout=3)

    def notify(self, message: str, *, markup: bool = False, **kwargs) -> None:
        """Notify in plain text by default: paths and error messages may hold '[' and '[/]', which are not markup,
        and escape sequences, which are written out (core.world.text.shown.shown), never sent to the terminal."""
        super().notify(message if markup else shown(message, newlines=True), markup=markup, **kwargs)

    @guarded
    async def action_quit(self) -> None:
        self.supervisor.close()
        self.exit()

    @guarded
    def on_unmount(self) -> None:
        self.supervisor.close()

    def _handle_exception(self, error: Exception) -> None:
        """Textual's last resort, which ends the app (return code 1): the traceback goes to app.log first."""
        log_error(error, "the app stopped")
        super()._handle_exception(error)
