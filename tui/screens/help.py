"""The help screen: every key first, grouped, one line a key (read from the app's bindings), then what the screen shows.

The key lines are made from the app's `BINDINGS` (and Textual's own quit key): a key bound, changed or removed
there shows here with no other edit. `DOES` says, per action, what the key does in a few words (one line at
80x24); `GROUPS` puts each action in a group (an action in none is listed under `more`, so none is lost).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from breadth.tui.keys import key_name
from breadth.tui.widgets.playground import PACES

HELP = """\
# What the screen shows

A tiny character model, pre-trained only on single-digit worksheets (`3+4=7`), is fine-tuned to
call a calculator. It writes a call `B23+45|`, the **calculator appends** `68|`, and the model
answers `68|`. The plate's two task families: **two-digit** sums `23+45` (one call) and
**three single digits** `3+4+5` (two calls; the second uses the first result). Eight more make a grid:
2 to 4 operands, one or two digits, `+` or `-` (`9-4-3`, never below zero); they are under
*more families* in the form. A family's short label is where it sits: `a3x2` **a**dds **3** numbers of
**2** digits, `s3x1` **s**ubtracts 3 single digits; the plate's are `a2x2` and `a3x1` (`2d`, `3d` still work).

Fine-tuned on one family only, a model learns that family's *procedure* and fails the others
completely. Only a **mix** learns both. Train a mix, watch the loss, then probe it with any sum.

**Colours**: prompt in bold, the model's own tokens in cyan, the calculator's results on yellow.
**Shading** (F6) by the probability the model gave each of its characters: 90% and over plain cyan,
60% italic on grey, 30% underlined on orange, under 30% italic and underlined on red (readable without
colour); the picked character is reversed.
**Scores**: held-out sums of each family (never among the demonstrations), greedy decoding;
the families of the model's mix with a bar and a 95% Wilson interval, the *other environments*
(every family outside its mix) under their mean. The runs table (percent) gives the plate's two families,
`own` (mean over the run's mix) and `other` (mean outside it; `-` if a family was never
scored) and holds the shipped models, the runs of the results store
(dim rows kept no model: scores only) and this session's; when the current mix and settings were run on
several seeds, a line gives `mix ×n: mean [95% interval]` per family and for `other`.
While a model trains, the scores shown are the playing model's (the panel's bottom border says so).
Models trained here are saved as soon as they finish, in the runs folder shown after training.
**Fill by coordinates** (first row under *more families*): choose all families, all with N operands
or digits, all add or sub, or all but one family, give a count and press `fill` (or `Enter` in the
count): those families get the count, every other family 0; a count over a family's pool is refused.
**Stage layout** (F5; `breadth-tui --demo` starts in it): the playground alone, each race lane a bordered
row named by its model with the prompt in it; F5 again for the panels.
"""

FOCUSED = {  # keys of the focused widget, not of the app: (keys, what they do)
    "enter": ("Enter", "play the sum typed in the sum box"),
    "recall": ("↑/↓", "recall the sums played before (in the sum box)"),
    "focus": ("Tab", "move focus; Enter on a runs row: that model"),
}

DOES = {  # action (without its argument) -> what its key does, in a few words (one line at 80x24)
    "train": "train the mix and settings of the form",
    "stop": "stop training (the playing model stays)",
    "pace": "pace: " + ", ".join(name for name, _ in PACES),
    "save": "save the playing model as a checkpoint",
    "load": "load a checkpoint from a path",
    "next_model": "the next model of the runs table",
    "matrix": "the transfer matrix of the results store",
    "curve": "the breadth curve of the results store",
    "environments": "the playing model on every environment",
    "procedure": "watch the procedure form, step by step",
    "figures": "figures for slides, in the figures folder",
    "race": "race 2-4 models on each sum; again: one",
    "demos": "what the form's mix learns from",
    "rollouts": "a reward run's latest sampled episodes",
    "lie": "the calculator lies: honest, +1, a number",
    "shade": "shade the model's characters by confidence",
    "pick": "while shading: pick a character",
    "pick_lane": "while shading: pick a race lane",
    "stage": "stage layout: the race alone, lanes large",
    "codes": "labels in codes (a2x2 70) or in words",
    "demo_step": "demo mode: the next or previous probe",
    "help": "this help (F1 or Esc closes it)",
    "quit": "quit",
}

GROUPS = (  # (group, actions and focused keys in the order shown)
    ("play", ("enter", "recall", "race", "shade", "pick", "pick_lane", "lie", "pace", "demo_step")),
    ("train", ("train", "stop", "procedure", "demos", "rollouts")),
    ("models", ("focus", "next_model", "save", "load")),
    ("show", ("stage", "codes", "matrix", "curve", "environments", "figures", "help", "quit")),
)

GROUP_WIDTH, KEYS_WIDTH = 7, 18  # the columns before what a key does


def joined(keys: list[str]) -> str:
    """Keys of one action, those with the same modifiers merged: `Shift+←`, `Shift+→`, `Alt+←` -> `Shift+←/→ Alt+←`."""
    by_mods: dict[str, list[str]] = {}
    for key in keys:
        mods, _, last = key.rpartition("+")
        by_mods.setdefault(mods, []).append(last)
    return " ".join(f"{mods + '+' if mods else ''}{'/'.join(lasts)}" for mods, lasts in by_mods.items())


def key_lines(bindings: list[Binding]) -> list[tuple[str, str, str]]:
    """(group, keys, what they do), one per action and focused key, grouped as GROUPS says (the rest under `more`)."""
    keys: dict[str, list[str]] = {}
    said: dict[str, str] = {}
    for binding in bindings:
        if binding.system:
            continue
        action = binding.action.split("(")[0]
        for key in binding.key.split(","):
            names = keys.setdefault(action, [])
            if key_name(key.strip()) not in names:  # f13 and shift+f1 are one key: Shift+F1
                names.append(key_name(key.strip()))
        said.setdefault(action, DOES.get(action, binding.description))
    rows = {action: (joined(names), said[action]) for action, names in keys.items()}
    rows.update(FOCUSED)
    lines = []
    for group, names in (*GROUPS, ("more", tuple(rows))):
        for i, name in enumerate(n for n in names if n in rows):
            lines.append((group if i == 0 else "", *rows.pop(name)))
    return lines


def key_table(bindings: list[Binding]) -> Text:
    """The key lines as one Text: group, keys, what they do, in columns."""
    out = Text(no_wrap=True, overflow="ellipsis")
    for i, (group, keys, does) in enumerate(key_lines(bindings)):
        if i:
            out.append("\n")
        out.append(f"{group:<{GROUP_WIDTH}}", "bold")
        out.append(f"{keys:<{KEYS_WIDTH}}", "bold cyan")
        out.append(does)
    return out


def app_bindings(app: type[App]) -> list[Binding]:
    """The app's own bindings, then Textual's (quit)."""
    mine = [b if isinstance(b, Binding) else Binding(*b) for b in app.BINDINGS]
    bound = {b.action for b in mine}
    return [*mine, *(b for b in App.BINDINGS if isinstance(b, Binding) and b.action not in bound)]


class HelpScreen(ModalScreen):
    """Every key, then what the app shows."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box") as box:
            box.border_title = "keys · F1 or Esc closes"
            yield Static(key_table(app_bindings(type(self.app))), id="help-keys")
            yield Markdown(HELP, id="help-text")
