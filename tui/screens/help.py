"""The help screen: what the playground shows and every key."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

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

| key | does |
|---|---|
| `Enter` (in the sum box) | play the sum, token by token |
| `Up` / `Down` (in the sum box) | recall the sums played before |
| `Ctrl+T` | train with the mix and settings on the left |
| `Ctrl+X` | stop training (the previous model stays loaded) |
| `Ctrl+O` | streaming pace: instant, fast, normal, slow |
| `Ctrl+S` | save the loaded model as a checkpoint |
| `Ctrl+L` | load a checkpoint from a path |
| `Ctrl+N` | switch to the next model in the runs table |
| `Tab` / `Shift+Tab` | move focus; `Enter` on a runs-table row switches model (racing: adds it or takes it out) |
| `Ctrl+G` | the transfer matrix of the results store (fills in as runs finish; `Esc` closes) |
| `Ctrl+R` | race: two to four models play each sum side by side; again for single play |
| `Ctrl+D` | the demonstrations of the form's mix: characters with loss underlined, the rest dim (`Esc` closes) |
| `Ctrl+F` | figures for slides, in the breadth folder's `figures/`: the screen, the model's scores and loss |
| `Ctrl+W` | watch the procedure form: each family's probe replayed at a kept step (`←`/`→`), scores by step |
| `Ctrl+Y` | the calculator lies: honest, off by one, always a number you type; lied results show in red |
| `Ctrl+K` | shade the model's characters by confidence; `Alt+←/→` picks one to see its alternatives (`Alt+↑/↓`: lane) |
| `PageDown` / `PageUp` | demo mode (`breadth-tui --demo [--probes FILE]`): the next or previous probe |
| `F1` | this help |
| `Ctrl+Q` | quit |

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


class HelpScreen(ModalScreen):
    """What the app shows and how to drive it."""

    BINDINGS = [Binding("escape,f1,q", "app.pop_screen", "Close")]

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-box"):
            yield Markdown(HELP)
