"""The app's keys: function keys for everything a talk needs, so no key of the app takes a text box's editing key.

Readline gives Ctrl+A/B/D/E/F/H/K/L/N/P/R/T/U/W/X/Y to editing and history, and Textual's Input binds several
(Ctrl+A/E/D/W/U/K/X/C/V), so an app key on any of them took it from the sum box. Function keys are neither, and a
clicker or a stage keyboard has them. Ctrl+G (readline's abort), Ctrl+S and Ctrl+O edit nothing. Terminals send
F13-F24 for Shift+F1-F12, except that Shift+F3 reaches no app: xterm and tmux send it as `CSI 1;2R`, the
cursor position report's shape, and Textual reads it as one. Shift+arrows pick while shading, beside Alt+arrows
(often the terminal's own).
"""

from __future__ import annotations

from textual.binding import Binding

APP_KEYS = [
    Binding("f1", "help", "Help", priority=True),
    Binding("f2", "train", "Train", priority=True),
    Binding("f3", "stop", "Stop", priority=True),
    Binding("f4", "race", "Race", priority=True),
    Binding("f5", "stage", "Stage", priority=True),
    Binding("f17,shift+f5", "codes", "labels in codes (a2x2 70) or in words", priority=True, show=False),
    Binding("f6", "shade", "Shade", priority=True),
    Binding("f7", "lie", "Lie", priority=True, show=False),
    Binding("f8", "pace", "Pace", priority=True, show=False),
    Binding("f9", "procedure", "Watch", priority=True),
    Binding("f10,ctrl+g", "matrix", "Matrix", priority=True),
    Binding("f11,f23,shift+f11", "curve", "Curve", priority=True),  # Shift+F11 too: a terminal may take F11
    Binding("f12", "figures", "Figures", show=False),  # not priority: a view with figures of its own binds F12
    # Shift+F1 (textual 8 names it shift+f1 in tmux, f13 elsewhere); a slip to F1 opens only the help
    Binding("f13,shift+f1", "rollouts", "Rollouts", priority=True, show=False),
    Binding("f14,shift+f2", "demos", "Demos", priority=True, show=False),  # each Shift+F-key under both names
    # Shift+F4, not Shift+F3: xterm and tmux send Shift+F3 as CSI 1;2R, which Textual reads as a cursor position
    Binding("f16,shift+f4", "environments", "Environments", priority=True, show=False),
    Binding("f21,shift+f9", "next_model", "Next model", priority=True, show=False),
    Binding("ctrl+s", "save", "Save", priority=True, show=False),
    Binding("ctrl+o", "load", "Load", priority=True, show=False),
    Binding("shift+left,alt+left", "pick(-1)", "Earlier character", priority=True, show=False),
    Binding("shift+right,alt+right", "pick(1)", "Later character", priority=True, show=False),
    Binding("shift+up,alt+up", "pick_lane(-1)", "Lane above", priority=True, show=False),
    Binding("shift+down,alt+down", "pick_lane(1)", "Lane below", priority=True, show=False),
    Binding("pagedown", "demo_step(1)", "Next probe", priority=True, show=False),  # demo mode: a clicker's key
    Binding("pageup", "demo_step(-1)", "Previous probe", priority=True, show=False),  # (over any view)
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
