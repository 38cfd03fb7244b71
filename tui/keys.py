"""The app's keys: function keys for everything a talk needs, so no key of the app takes a text box's editing key.

Readline gives Ctrl+A/B/D/E/F/H/K/L/N/P/R/T/U/W/X/Y to editing and history, and Textual's Input binds several
(Ctrl+A/E/D/W/U/K/X/C/V), so an app key on any of them took it from the sum box. Function keys are neither, and a
clicker or a stage keyboard has them. Ctrl+G (readline's abort), Ctrl+S and Ctrl+O edit nothing. Terminals send
F13-F24 for Shift+F1-F12, except that Shift+F3 reaches no app: xterm and tmux send it as `CSI 1;2R`, the
cursor position report's shape, and Textual reads it as one. Shift+arrows pick while shading, beside Alt+arrows
(often the terminal's own).

Each binding carries what its key does, in a few words (its `tooltip`, which the footer shows on hover): the help
screen's key lines are made from these bindings and nothing else, so a key bound, changed or removed here shows
there with no other edit.
"""

from __future__ import annotations

from textual.binding import Binding

from breadth.tui.widgets.playground import PACES

PACE = "pace: " + ", ".join(name for name, _ in PACES)  # the pace key's words name every pace it cycles through


def key(keys: str, action: str, name: str, does: str, *, show: bool = True, priority: bool = True) -> Binding:
    """One app key: `name` in the footer (where `show`), `does` in the help and the footer's tooltip."""
    return Binding(keys, action, name, show=show, priority=priority, tooltip=does)


APP_KEYS = [
    key("f1", "help", "Help", "this help (Esc closes it)"),
    key("f2", "train", "Train", "train the form's mix"),
    key("f3", "stop", "Stop", "stop (keeps the old model)"),
    key("f4", "race", "Race", "race 2-4 models on each sum (again: one)"),
    key("f5", "stage", "Stage", "stage layout: the race alone, lanes large"),
    key("f17,shift+f5", "codes", "Codes", "labels in codes (a2x2 70) or in words", show=False),
    key("f6", "shade", "Shade", "shade the model's characters by confidence"),
    key("f7", "lie", "Lie", "the calculator lies: honest, +1, a number", show=False),
    key("f8", "pace", "Pace", PACE, show=False),
    # the procedure view, as docs/app.md names it; "Procedure" would cut F11 Curve off the footer at 80 columns
    key("f9", "procedure", "Proc", "watch the procedure form, step by step"),
    key("f10,ctrl+g", "matrix", "Matrix", "the transfer matrix of the results store"),
    # Shift+F11 too: a terminal may take F11
    key("f11,f23,shift+f11", "curve", "Curve", "the breadth curve of the store"),
    key("f22,shift+f10", "transfer", "Map", "the transfer map", show=False),
    # not priority: a view with figures of its own binds F12
    key("f12", "figures", "Figures", "figures for slides, in the figures folder", show=False, priority=False),
    # Shift+F1 (textual 8 names it shift+f1 in tmux, f13 elsewhere); a slip to F1 opens only the help. Each
    # Shift+F-key is bound under both names.
    key("f13,shift+f1", "rollouts", "Rollouts", "a reward run's latest sampled episodes", show=False),
    key("f14,shift+f2", "demos", "Demos", "what the form's mix learns from", show=False),
    # Shift+F4, not Shift+F3: xterm and tmux send Shift+F3 as CSI 1;2R, which Textual reads as a cursor position
    key("f16,shift+f4", "environments", "Environments", "the playing model on every environment", show=False),
    key("f21,shift+f9", "next_model", "Next model", "the next model of the runs table", show=False),
    key("ctrl+s", "save", "Save", "save the playing model", show=False),
    key("ctrl+o", "load", "Load", "load a model from a path", show=False),
    key("shift+left,alt+left", "pick(-1)", "Earlier character", "while shading: pick a character", show=False),
    key("shift+right,alt+right", "pick(1)", "Later character", "while shading: pick a character", show=False),
    key("shift+up,alt+up", "pick_lane(-1)", "Lane above", "a race lane", show=False),
    key("shift+down,alt+down", "pick_lane(1)", "Lane below", "a race lane", show=False),
    # demo mode: a clicker's keys (over any view)
    key("pagedown", "demo_step(1)", "Next probe", "demo mode: the next or previous probe", show=False),
    key("pageup", "demo_step(-1)", "Previous probe", "demo mode: the next or previous probe", show=False),
    key("ctrl+q", "quit", "Quit", "quit", show=False),  # Textual's own key, in the help's words
]

NAMED_KEYS = {"left": "←", "right": "→", "up": "↑", "down": "↓", "pagedown": "PageDown", "pageup": "PageUp"}


def key_name(key: str) -> str:
    """`ctrl+g` -> `Ctrl+G`, `shift+left` -> `Shift+←`, `pagedown` -> `PageDown`, `f1` -> `F1`, `f14` -> `Shift+F2`
    (what terminals send for Shift+F1-F12 is F13-F24)."""
    *mods, last = key.split("+")
    if last[0] == "f" and last[1:].isdigit() and 13 <= int(last[1:]) <= 24:
        mods, last = [*mods, "shift"], f"f{int(last[1:]) - 12}"
    name = NAMED_KEYS.get(last, last.upper() if len(last) == 1 or last[0] == "f" else last.title())
    return "+".join([*(mod.title() for mod in mods), name])
