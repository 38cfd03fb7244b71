"""The help screen: every key first, grouped (read from the app's bindings), then what the screen shows.

The key lines are made from the app's `BINDINGS` (tui/keys.py; Textual's own keys after them): a key bound,
changed or removed there shows here with no other edit, and what it does is the binding's own `tooltip`, in a few
words. `GROUPS` puts each action in a group, a few related actions on one line (train and stop, save and load)
so that every key fits the first page at 80x24 (an action in no group is listed under `more`, so none is lost).
The prose after the keys is in plain words; the grid's short labels come last. Where it names a key it names an
action (`{stage}`), and `prose` puts in the key bound to it, so a rebinding changes the prose too.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from breadth.tui.keys import key_name

HELP = """\
# What the screen shows

A tiny model that reads and writes characters has learned single-digit sums (`3+4=7`) and nothing
more. Here it learns to use a calculator: it writes a call `B23+45|`, the **calculator answers**
`68|`, and the model writes the answer `68|`. It learns from examples of two kinds of sum:
**two-digit** sums such as `23+45` (one call) and **three single digits** such as `3+4+5` (two calls;
the second uses the first answer). Eight more kinds make a grid: 2 to 4 numbers, one or two digits,
`+` or `-` (`9-4-3`, never below zero); the form sets them under *more environments* (an environment is
one kind of sum).

Taught one kind only, a model learns that kind's steps and fails the other kinds completely. A
**mix** of kinds learns both. Train a mix, watch the loss fall, then try the model on any sum.

**Colours**: your sum in bold, the model's own characters in cyan, the calculator's answers on orange
(the legend under the playground shows each).

**Shading** ({shade}): how sure the model was of each character it wrote: 90% and over plain cyan,
60% italic on grey, 30% underlined on orange, under 30% italic and underlined on red (readable without
colour); the picked character is reversed.

**Scores**: sums the model never saw while it learned, answered with its likeliest character each time.
The environments it learned from come with a bar and a 95% interval (where the true rate most likely
lies); every other environment is under *other environments*, with their mean, named as the matrix names its
columns (`add` over how many numbers, a row for each range). The runs table (percent)
lists the shipped models, the runs of the results store (dim rows kept no model: scores only) and
this session's, with `own` (the mean over the environments a run learned from) and `other` (the mean
over the rest; `-` if one was never scored). When the current mix and settings were run on several
seeds, a line gives each environment's mean and 95% interval over those seeds.

While a model trains, the scores shown are the playing model's (the panel's bottom border says so).
Models trained here are saved as soon as they finish, in the runs folder shown after training.

**Fill** (first row under *more environments*): choose all environments, all with N numbers or digits,
all add or subtract, or all but one environment, give a count and press `fill` (or `Enter` in the count):
those environments get the count, every other environment 0; a count over an environment's pool is
refused.

**Stage layout** ({stage}; `breadth-tui --demo` starts in it): the playground alone, each race lane a bordered
row named by its model with the sum in it; {stage} again for the panels.

## Short labels

Tables and the form name an environment by a short label that says where it sits in the grid: `a3x2`
**a**dds **3** numbers of **2** digits, `s3x1` **s**ubtracts 3 single digits. The two-digit sums
are `a2x2`, the three single digits `a3x1` (`2d` and `3d` still work). More in docs/app.md.
"""

FOCUSED = {  # keys of the focused widget, not of the app: (keys, what they do)
    "sum_box": ("Enter ↑/↓", "play the sum in the sum box; ↑/↓ earlier sums"),
    "focus": ("Tab", "move focus; Enter on a runs row: that model"),
}

GROUPS = (  # (group, lines in the order shown: an action, a focused key, or a few actions sharing one line)
    ("play", ("sum_box", "race", "shade", ("pick", "pick_lane"), "lie", "pace", "demo_step")),
    ("train", (("train", "stop"), "procedure", "demos", "rollouts")),
    ("models", ("focus", "next_model", ("save", "load"))),
    ("show", ("stage", "codes", "matrix", ("curve", "transfer"), "environments", "figures", ("help", "quit"))),
)

GROUP_WIDTH, KEYS_WIDTH = 7, 18  # the columns before what a key does


def joined(keys: list[str]) -> str:
    """Keys of one line, merged by modifiers: `Shift+←`, `Shift+→`, `Alt+←`, `Alt+→`, `F1` -> `Shift/Alt+←/→ F1`."""
    by_mods: dict[str, list[str]] = {}
    for key in keys:
        mods, _, last = key.rpartition("+")
        by_mods.setdefault(mods, []).append(last)
    by_lasts: dict[tuple[str, ...], list[str]] = {}  # modifiers with the same keys share them: `Shift/Alt+←/→`
    for mods, lasts in by_mods.items():
        by_lasts.setdefault((mods, *lasts) if not mods else tuple(lasts), []).append(mods)
    return " ".join(
        f"{'/'.join(mods) + '+' if mods != [''] else ''}{'/'.join(lasts[1:] if mods == [''] else lasts)}"
        for lasts, mods in by_lasts.items()
    )


def key_lines(bindings: list[Binding]) -> list[tuple[str, str, str]]:
    """(group, keys, what they do), one per line of GROUPS (actions sharing a line: their keys together, what each
    does after `; `), the actions in no group under `more`."""
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
        said.setdefault(action, binding.tooltip or binding.description)
    lines = []
    for group, names in (*GROUPS, ("more", tuple(keys))):
        rows = []
        for line in names:
            shared = [name for name in (line if isinstance(line, tuple) else (line,)) if name in keys]
            if line in FOCUSED:
                rows.append(FOCUSED[line])
            elif shared:
                bound = [key for name in shared for key in keys.pop(name)]
                rows.append((joined(bound), "; ".join(said[name] for name in shared)))
        lines += [(group if i == 0 else "", *row) for i, row in enumerate(rows)]
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


def prose(bindings: list[Binding]) -> str:
    """HELP with each `{action}` in it replaced by the first key bound to that action (`{shade}` -> `F6`)."""
    first: dict[str, str] = {}
    for binding in bindings:
        first.setdefault(binding.action.split("(")[0], key_name(binding.key.split(",")[0].strip()))
    return HELP.format_map(first)


def app_bindings(app: type[App]) -> list[Binding]:
    """The app's own bindings, then Textual's (quit)."""
    mine = [b if isinstance(b, Binding) else Binding(*b) for b in app.BINDINGS]
    bound = {b.action for b in mine}
    return [*mine, *(b for b in App.BINDINGS if isinstance(b, Binding) and b.action not in bound)]


class HelpScreen(ModalScreen):
    """Every key, then what the app shows."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown  # imports markdown_it (70 ms at start): not before the help opens

        with VerticalScroll(id="help-box") as box:
            box.border_title = "keys · F1 or Esc closes"
            box.border_subtitle = "↓ below: what the screen shows"
            bindings = app_bindings(type(self.app))
            yield Static(key_table(bindings), id="help-keys")
            yield Markdown(prose(bindings), id="help-text")
