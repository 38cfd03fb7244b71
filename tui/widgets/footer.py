"""The main screen's footer: Textual's Footer, without the leak of every key it ever showed.

Footer recomposes its keys whenever the screen's bindings change (a view opened or closed, the focus moved),
and each new FooterKey binds to the footer's `compact`. Textual 8.2 prunes those bindings only when
`compact` changes, so the footer kept every key it had drawn (Textualize/textual#6666): 48 a round of
Ctrl+W, Ctrl+D, Ctrl+G, never released. Nudging `compact` after each recompose prunes them.
"""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    """A Footer that lets go of the keys it no longer shows."""

    async def recompose(self) -> None:
        await super().recompose()
        self.mutate_reactive(Footer.compact)  # runs the watchers, dropping those of removed keys
