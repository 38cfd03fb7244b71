"""The help screen: what the playground shows and every key, the app's keys read from its bindings.

The key table is made from the app's `BINDINGS` (and Textual's own quit key): a key bound, changed or
removed there shows here with no other edit. `DOES` says, per action, what the key does; an action it
lacks falls back to its binding's description (a test checks that every action has its line).
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from breadth.tui.widgets.playground import PACES

HELP = """\
# breadth

A tiny character model, pre-trained only on single-digit worksheets (`3+4=7`), is fine-tuned to
call a calculator. It writes a call `B23+45|`, the **calculator appends** `68|`, and the model
answers `68|`. The plate's two task families: **two-digit** sums `23+45` (one call) and
**three-digit** sums `3+4+5` (two calls; the second uses the first result). Eight more make a grid:
2 to 4 operands, one or two digits, `+` or `-` (`9-4-3`, never below zero); they are under
*more families* in the form.

Fine-tuned on one family only, a model learns that family's *procedure* and fails the others
completely. Only a **mix** learns both. Train a mix, watch the loss, then probe it with any sum.

{keys}

**Colours**: prompt in bold, the model's own tokens in cyan, the calculator's results on yellow.
**Scores**: held-out sums of each family (never among the demonstrations), greedy decoding;
the families of the model's mix with a bar and a 95% Wilson interval, the *other environments*
(every family outside its mix) under their mean. The runs table (percent) gives the plate's `2d`
and `3d`, `own` (mean over the run's mix) and `other` (mean outside it; `-` if a family was never
scored) and holds the shipped models, the runs of the results store
(dim rows kept no model: scores only) and this session's; when the current mix and settings were run on
several seeds, a line gives `mix ×n: 2d mean [95% interval] 3d mean [interval] other mean [interval]`.
Models trained here are saved as soon as they finish, in the runs folder shown after training.
**Fill by coordinates** (first row under *more families*): choose all families, all with N operands
or digits, all add or sub, or all but one family, give a count and press `fill` (or `Enter` in the
count): those families get the count, every other family 0; a count over a family's pool is refused.
"""


FOCUSED_KEYS = """\
| key | does |
|---|---|
| `Enter` (in the sum box) | play the sum, token by token |
| `Up` / `Down` (in the sum box) | recall the sums played before |
| `Tab` / `Shift+Tab` | move focus; `Enter` on a runs-table row switches model (racing: adds it or takes it out) |
"""  # keys of the focused widget, not of the app

DOES = {  # action (without its argument) -> what its key does
    "train": "train with the mix and settings on the left",
    "stop": "stop training (the previous model stays loaded)",
    "pace": "streaming pace: " + ", ".join(name for name, _ in PACES),
    "save": "save the loaded model as a checkpoint",
    "load": "load a checkpoint from a path",
    "next_model": "switch to the next model in the runs table",
    "matrix": "the transfer matrix of the results store (fills in as runs finish; `Esc` closes)",
    "procedure": "watch the procedure form: each family's probe replayed at a kept step (`←`/`→`), scores by step",
    "figures": "figures for slides, in the breadth folder's `figures/`: the screen, the model's scores and loss",
    "race": "race: two to four models play each sum side by side; again for single play",
    "demos": "the demonstrations of the form's mix: characters with loss underlined, the rest dim (`Esc` closes)",
    "lie": "the calculator lies: honest, off by one, always a number you type; lied results show in red",
    "shade": "shade the model's characters by confidence",
    "pick": "picks one to see its alternatives",
    "pick_lane": "lane",
    "demo_step": "demo mode (`breadth-tui --demo [--probes FILE]`): the next or previous probe",
    "help": "this help",
    "quit": "quit",
}

PART_OF = {"pick": "shade", "pick_lane": "shade"}  # actions said within another action's row

NAMED_KEYS = {"left": "←", "right": "→", "up": "↑", "down": "↓", "pagedown": "PageDown", "pageup": "PageUp"}


def key_name(key: str) -> str:
    """`ctrl+t` -> `Ctrl+T`, `alt+left` -> `Alt+←`, `pagedown` -> `PageDown`, `f1` -> `F1`."""
    *mods, last = key.split("+")
    name = NAMED_KEYS.get(last, last.upper() if len(last) == 1 or last[0] == "f" else last.title())
    return "+".join([*(mod.title() for mod in mods), name])


def key_rows(bindings: list[Binding]) -> str:
    """One table row per action, its keys joined (`PageDown` / `PageUp`), in the order they are bound."""
    keys: dict[str, list[str]] = {}
    said: dict[str, str] = {}
    for binding in bindings:
        if binding.system:
            continue
        action = binding.action.split("(")[0]
        for key in binding.key.split(","):
            keys.setdefault(action, []).append(f"`{key_name(key.strip())}`")
        said.setdefault(action, DOES.get(action, binding.description))
    for action, row in PART_OF.items():
        if action in keys and row in said:
            said[row] += f"; {'/'.join(keys.pop(action))} {said[action]}"
    return "\n".join(f"| {' / '.join(keys[action])} | {said[action]} |" for action in keys)


def app_bindings(app: type[App]) -> list[Binding]:
    """The app's own bindings, then Textual's (quit)."""
    mine = [b if isinstance(b, Binding) else Binding(*b) for b in app.BINDINGS]
    bound = {b.action for b in mine}
    return [*mine, *(b for b in App.BINDINGS if isinstance(b, Binding) and b.action not in bound)]


class HelpScreen(ModalScreen):
    """What the app shows and how to drive it."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP.replace("{keys}", FOCUSED_KEYS + key_rows(app_bindings(type(self.app)))))
