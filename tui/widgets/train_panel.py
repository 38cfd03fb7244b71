"""The training panel: pick a mix and settings, press Train, watch the loss (or the reward), step and time left.

Every environment of the grid can be trained: the plate's two have their counts in view, the others sit
under *more environments* (two to a row), whose title lists the counts set there while it is folded. Environments are
named as the matrix names its columns (`add 3 0-9`), or by their codes (`a3x1`) where a person asked (Shift+F5).
That section also fills every count by coordinates: "all with 2 operands" and a count set the environments
the selector `@operands:2` names to that count and every other environment to 0. That section and "advanced" make their
inputs when first opened (`FoldedSection`); until then the form holds their values (`value`, `set_value`).
"""

from __future__ import annotations

import time

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Button, Collapsible, Input, Label, Select, Static

from breadth.core.storage.presets import DEFAULT_PRESET, PRESETS, preset_of
from breadth.core.world.environments.environment import REGISTERED
from breadth.core.world.environments.labels import column
from breadth.core.world.environments.mix import Mix, MixError, select
from breadth.core.world.episodes.scores import HELD_OUT
from breadth.core.world.runs.recipes import FINETUNE, REWARD, Recipe, mix_recipes, recipe, recipe_of
from breadth.core.world.runs.settings import held_out_from_text
from breadth.core.world.text.shown import shown
from breadth.tui.catalog import PLATE
from breadth.tui.guard import guarded
from breadth.tui.widgets.bounded_input import BoundedInput
from breadth.tui.widgets.folded import FoldedSection
from breadth.tui.widgets.loss_plot import LossPlot
from breadth.tui.widgets.reward_plot import RewardPlot, reward_line
from breadth.tui.widgets.train_form import (
    MORE,
    advanced_rows,
    count_fields,
    form_settings,
    label_width,
    more_rows,
    setting_inputs,
)

CUSTOM = "custom"

STEP_LINE_HZ = 10  # the step line's redraws a second at most


class TrainPanel(Vertical):
    """Mix presets, per-environment counts, steps, seed, advanced settings, Train/Stop, loss plot, status."""

    BORDER_TITLE = "train"

    class TrainRequested(Message):
        """The user asked to train with this mix and these settings."""

        def __init__(self, mix: Mix, settings: object, held_out: int | None = HELD_OUT) -> None:
            super().__init__()
            self.mix = mix
            self.settings = settings
            self.held_out = held_out  # held-out sums per environment for the evaluation after training

    class StopRequested(Message):
        """The user asked to stop the running job."""

    training = var(False, init=False)  # a job runs: the form's Train is off and Stop is on
    codes = var(False, init=False)  # environments named by codes, not words (the app's Shift+F5 sets it)
    rewarded = False  # the last job started learns from reward: its reward plot is shown in the loss plot's place
    reward_run: tuple[int, list[str]] = (0, [])  # that job's group size and the environments of its mix
    shown_at = 0.0  # when a step's line was last shown: it is shown at most STEP_LINE_HZ times a second
    step_line = ""  # the latest step's line, until it is shown
    before: dict | None = None  # what it measured before its first step (pass@G, ...)
    latest: dict | None = None  # its last step's metrics
    status = ""  # the status line as plain text
    status_is_error = False
    unmade: dict[str, str]  # the text of each folded field whose input is not made yet, by the input's id

    def on_mount(self) -> None:
        self.set_interval(1 / STEP_LINE_HZ, self.show_step_line)

    def compose(self) -> ComposeResult:
        options = [(preset.label, preset.name) for preset in PRESETS.values()] + [("custom counts", CUSTOM)]
        with Horizontal(classes="row"):
            yield Select(options, value=DEFAULT_PRESET, allow_blank=False, compact=True, id="preset")
            yield Button("Train F2", id="train", variant="success", compact=True)
            yield Button("Stop F3", id="stop", variant="error", compact=True, disabled=True)
        if len(mix_recipes()) > 1:  # more than one way to learn: say which (the settings below name theirs)
            with Horizontal(classes="row"):
                yield Label("learn from ", classes="lbl")
                choices = [(r.label, r.name) for r in mix_recipes()]
                yield Select(choices, value=FINETUNE, allow_blank=False, compact=True, id="recipe")
        default = dict(PRESETS[DEFAULT_PRESET].mix.counts)
        with Horizontal(classes="row"):
            yield from count_fields(PLATE, {n: str(default.get(n, 0)) for n in PLATE}, "num")
        self.unmade = {f"count-{n}": str(default.get(n, 0)) for n in MORE}
        self.unmade |= {s.label: str(s.default) for s in form_settings() if s.form == "advanced"}
        self.unmade["held-out"] = str(HELD_OUT)
        yield FoldedSection(self._make_more, title="more environments", id="more")
        with Horizontal(classes="row"):
            yield from setting_inputs("main", {})
        yield FoldedSection(self._make_advanced, title="advanced", id="advanced")
        self.loss_plot = LossPlot(id="loss")
        yield self.loss_plot
        self.reward_plot = RewardPlot(id="reward")  # in the loss plot's place while a run learns from reward
        self.reward_plot.display = False
        yield self.reward_plot
        yield Static("", id="reward-line")

    def _make_more(self) -> list[Widget]:
        return more_rows(self._take, self.codes)

    def _make_advanced(self) -> list[Widget]:
        return advanced_rows(self._take)

    def _take(self, field: str) -> str:
        """A folded field's value, handed to the input made for it (which holds it from then on)."""
        return self.unmade.pop(field)

    def value(self, field: str) -> str:
        """The text of the form's field `field` (an input's id), made or still folded."""
        if field in self.unmade:
            return self.unmade[field]
        return self.query_one(f"#{field}", Input).value  # by id: Textual caches it (a query walks the panel)

    def set_value(self, field: str, text: str) -> None:
        """Set the form's field `field` (an input's id) to `text`, made or still folded."""
        if field not in self.unmade:
            self.query_one(f"#{field}", Input).value = text
        elif self.unmade[field] != text:
            self.unmade[field] = text
            if field.startswith("count-"):  # no input to say it changed: the folded title says the count
                self._title_more()

    # the form

    @on(Select.Changed, "#preset")
    @guarded
    def fill_preset(self, event: Select.Changed) -> None:
        """Choosing a preset fills in its counts."""
        if event.value in PRESETS:
            counts = dict(PRESETS[event.value].mix.counts)
            for name in REGISTERED:
                self.set_value(f"count-{name}", str(counts.get(name, 0)))

    @on(Select.Changed, "#recipe")
    @guarded
    def fill_recipe_defaults(self, event: Select.Changed) -> None:
        """Choosing a recipe fills its settings' inputs with its defaults (settings of one name are one input)."""
        for s in recipe(str(event.value)).settings.settings():
            if s.form:
                self.set_value(s.label, s.show(s.default))

    @on(Button.Pressed, "#fill")
    @on(Input.Submitted, "#fill-count")
    @guarded
    def fill_by_coordinates(self) -> None:
        """Set the chosen selector's environments to the count and every other environment to 0, or say why not."""
        selector = str(self.query_one("#fill-by", Select).value)
        text = self.query_one("#fill-count", Input).value.strip()
        if not (text.isascii() and text.isdigit()):
            self.show_error("fill: the count must be a whole number")
            return
        n = int(text)
        bad = next((REGISTERED[name] for name in select(selector) if n > REGISTERED[name].demo_pool), None)
        if bad is not None:  # name the environment as the form does, with its own limit
            self.show_error(f"{column(bad, self.codes)}: a count from 0 to {bad.demo_pool}, not {n}")
            return
        try:
            mix = Mix.parse(f"@{selector}={n}")
        except MixError as e:  # e.g. a count of 0: no demonstrations
            self.show_error(str(e))
            return
        counts = dict(mix.counts)
        for name in REGISTERED:
            self.set_value(f"count-{name}", str(counts.get(name, 0)))
        self.show(f"filled {mix.name_for(self.codes)}")

    @on(BoundedInput.Overflow)
    @guarded
    def say_overflow(self, message: BoundedInput.Overflow) -> None:
        """A paste or keys that did not fit in a field: one red line naming the limit."""
        left_out = f"pasted text cut ({message.dropped:,} characters left out): " if message.dropped else ""
        self.show_error(f"{left_out}this field holds at most {message.box.max_length} characters")

    @on(Input.Changed, ".num")
    @guarded
    def mark_custom(self, event: Input.Changed) -> None:
        """Editing a count by hand switches the preset to 'custom' unless it matches one."""
        if not (event.input.id or "").startswith("count-"):
            return
        self._title_more()
        try:
            mix = self._mix()
        except (MixError, ValueError):
            mix = None
        preset = preset_of(mix) if mix is not None else None
        match = preset.name if preset else CUSTOM
        select = self.query_one("#preset", Select)
        if select.value != match:
            with select.prevent(Select.Changed):
                select.value = match

    def _title_more(self) -> None:
        """Folded, "more environments" names the counts set under it, so none trains unseen."""
        counts = ((n, self.value(f"count-{n}").strip()) for n in MORE)
        set_here = ", ".join(f"{column(REGISTERED[n], self.codes)} {v}" for n, v in counts if v not in ("", "0"))
        self.query_one("#more", Collapsible).title = f"more environments{': ' * bool(set_here)}{set_here}"

    def _mix(self) -> Mix:
        counts = {}
        for environment in REGISTERED.values():
            text = self.value(f"count-{environment.name}").strip() or "0"
            if not (text.isascii() and text.isdigit()):
                raise MixError(
                    f"{column(environment, self.codes)} count must be a whole number from 0 to {environment.demo_pool}"
                )
            counts[environment.name] = int(text)
        try:
            return Mix.of(**counts)
        except MixError as e:  # name the environment as the form does, with its own limit
            bad = next((f for f in REGISTERED.values() if not 0 <= counts[f.name] <= f.demo_pool), None)
            if bad is None:
                raise
            raise MixError(
                f"{column(bad, self.codes)}: a count from 0 to {bad.demo_pool}, not {counts[bad.name]}"
            ) from e

    def chosen_recipe(self) -> Recipe:
        """The recipe the form trains by: the one chosen, or the plate's when there is no other."""
        found = self.query("#recipe")
        return recipe(str(found.first(Select).value)) if found else recipe(FINETUNE)

    def request(self) -> tuple[Mix, object, int | None]:
        """The mix, settings and held-out size in the form; ValueError with one line if any is bad.

        The settings are the chosen recipe's, checked by its settings class itself, as on the command line and in
        the engine (the form's inputs for another recipe's settings are not read).
        """
        mix = self._mix()
        settings_class = self.chosen_recipe().settings
        texts = {s.name: self.value(s.label) for s in settings_class.settings() if s.form}
        settings = settings_class.from_text(**texts)
        held_out = held_out_from_text(self.value("held-out"))
        return mix, settings, held_out

    @on(Button.Pressed, "#train")
    @guarded
    def ask_train(self) -> None:
        """Validate the form and ask the app to train."""
        try:
            mix, settings, held_out = self.request()
        except ValueError as e:
            self.show_error(str(e))
            return
        self.post_message(self.TrainRequested(mix, settings, held_out))

    @on(Button.Pressed, "#stop")
    @guarded
    def ask_stop(self) -> None:
        """Ask the app to stop training."""
        self.post_message(self.StopRequested())

    # what the app tells the panel

    def watch_codes(self, codes: bool) -> None:
        """Name each count's environment in words (`add 3 0-9`), or by its code (`a3x1`) where a person asked; the
        reward line's key too."""
        for made in self.query(".count-lbl").results(Label):  # a folded one is made named as `codes` says then
            name = (made.id or "").removeprefix("label-")
            made.update(column(REGISTERED[name], codes))
            made.styles.width = label_width(MORE if name in MORE else (name,), codes)
        self._title_more()
        if self.rewarded:  # the reward line's colour key names the run's environments too
            line = reward_line(self.before, self.latest, *self.reward_run, self._line_width(), codes)
            self.query_one("#reward-line", Static).update(line)

    def watch_training(self, training: bool) -> None:
        """Disable Train and enable Stop while a job runs (and the reverse)."""
        self.query_one("#train", Button).disabled = training
        self.query_one("#stop", Button).disabled = not training

    def started(self, mix: Mix, settings: object) -> None:
        """A job on `mix` began: clear the live curve (the reward's, for a run that learns from reward) and say so."""
        self.rewarded = recipe_of(settings).name == REWARD
        self.loss_plot.display = not self.rewarded
        self.reward_plot.display = self.rewarded
        line = self.query_one("#reward-line", Static)
        line.display = self.rewarded
        if self.rewarded:
            self.reward_run = (settings.group, [name for name, _ in mix.counts])
            self.before, self.latest = None, None
            self.reward_plot.start(settings.steps, self.reward_run[1])
            line.update(reward_line(None, None, *self.reward_run, self._line_width(), self.codes))
        else:
            self.loss_plot.start(settings.steps)
        self.show(f"starting {mix.spec()}...")

    def measured(self, before: dict) -> None:
        """What the reward run measured before its first step (pass@G), on the line under the plot."""
        if self.rewarded:
            self.before = before
            self.query_one("#reward-line", Static).update(
                reward_line(before, self.latest, *self.reward_run, self._line_width(), self.codes)
            )

    def _line_width(self) -> int:
        """Columns the reward line has (the panel's inside)."""
        return self.content_region.width or self.size.width

    def step(self, step: int, steps: int, loss: float, elapsed: float, metrics: dict | None = None) -> None:
        """Plot one step (its loss, or its rewards in a reward run) and show the step, the value and the time left."""
        left = elapsed / step * (steps - step)
        if self.rewarded and metrics:
            self.reward_plot.add(step, metrics)
            self.latest = metrics
            self.query_one("#reward-line", Static).update(
                reward_line(self.before, metrics, *self.reward_run, self._line_width(), self.codes)
            )
            reward = metrics.get("reward")
            said = f"reward {reward:.2f}" if isinstance(reward, (int, float)) else f"loss {loss:+.3f}"
            self.show(f"{step}/{steps} {said} {elapsed:.0f}s, {left:.0f}s left")
            return
        self.loss_plot.add(loss)
        self.step_line = f"{step}/{steps} loss {loss:.3f} {elapsed:.0f}s, {left:.0f}s left"
        if step == steps or time.monotonic() - self.shown_at >= 1 / STEP_LINE_HZ:
            self.show_step_line()

    def show_step_line(self) -> None:
        """Show the latest step's line now if it is not shown yet (a timer does this STEP_LINE_HZ times a second:
        a redraw per step cost the app a quarter of a core at ~100 steps a second, beside the engine's own)."""
        if self.step_line:
            self.shown_at = time.monotonic()
            self.show(self.step_line)

    def show_reference(self, losses: list[float], label: str) -> None:
        """Draw `losses` (the current model's own training curve) in grey behind the live curve."""
        self.loss_plot.set_reference(losses, label)

    def show(self, text: str) -> None:
        """Show a neutral status line (in the panel's bottom border, where it costs no row)."""
        self.step_line = ""  # a step's line still to show is older than this one
        self.status, self.status_is_error = text, False
        self.border_subtitle = Content(shown(text))  # text, never markup: it may quote a path or an engine's words

    def show_error(self, text: str) -> None:
        """Show a one-line error inline, in red."""
        self.step_line = ""
        self.status, self.status_is_error = text, True
        self.border_subtitle = Content.from_markup("[b $error]$text[/]", text=shown(text))  # $text is never parsed
