"""What a served page may send: textual-serve's frames (keys, a resize, a ping, focus and blur), read strictly; a
terminal size capped at MAX_COLUMNS x MAX_ROWS; anything else a FrameError that closes only its sender.
"""

from __future__ import annotations

import json

from breadth.core.world.text.shown import shown

# The largest terminal a visitor may ask for (at the start and on every resize); a larger window is drawn at the cap.
# Measured in Chromium at the page's 16 px font: 1920x1080 asks for 213x51, 2560x1440 for 284x68, 3840x2160 (at
# 100% scale) for 426x102. At 300x100 the app's largest frame was 84 kB and it held 73 MB (80x24: 13 kB, 70 MB);
# uncapped, a page asking for 4000x2000 got an app of 349 MB that used 15.6 s of CPU in its first 40 s and sent a
# 10.4 MB frame.
MAX_COLUMNS, MAX_ROWS = 300, 100


def capped_size(width: int, height: int) -> tuple[int, int]:
    """A visitor's terminal size, from 1x1 to MAX_COLUMNS x MAX_ROWS."""
    return max(1, min(width, MAX_COLUMNS)), max(1, min(height, MAX_ROWS))


class FrameError(Exception):
    """A frame from a page that is not textual-serve's protocol: its sender is closed, in one line on the server."""


def page_frame(text: str) -> tuple[str, object]:
    """A page's frame read: ("stdin", text), ("resize", (columns, rows) capped), ("ping", text), ("blur", None)
    or ("focus", None); FrameError with one line for anything else."""
    try:
        envelope = json.loads(text)
    except ValueError:
        raise FrameError("a frame that is not JSON") from None
    if not isinstance(envelope, list) or not envelope or not isinstance(envelope[0], str):
        raise FrameError("a frame that is not a [kind, data] list")
    kind, data = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind in ("stdin", "ping") and isinstance(data, str):
        return kind, data
    if kind in ("blur", "focus"):
        return kind, None
    if kind == "resize" and isinstance(data, dict):
        width, height = data.get("width"), data.get("height")
        if all(isinstance(n, int) and not isinstance(n, bool) for n in (width, height)):
            return kind, capped_size(width, height)
    raise FrameError(f"a {shown(kind[:20])!r} frame that is not the page's protocol")
