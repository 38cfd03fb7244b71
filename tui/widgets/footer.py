"""The main screen's footer: Textual's Footer, with its keys in the first frame and without the leak of every key
it ever showed.

Textual's Footer composes nothing until the screen first publishes its bindings, then recomposes after the next
refresh: the app's first frame had no keys, and the frames after it wait on whatever the event loop does next
(on a loaded machine the keys came seconds later, with the engine's start). The app's keys are known when the
footer mounts, so it draws them at once.

Footer recomposes its keys whenever the screen's bindings change (a view opened or closed, the focus moved),
and each new FooterKey binds to the footer's `compact`. Textual 8.2 prunes those bindings only when
`compact` changes, so the footer would keep every key it had drawn (Textualize/textual#6666), one set per view
opened. Nudging `compact` after each recompose prunes them. And the footer composes its keys again only when
what they show changed (the bindings change with every move of the focus, mostly to the same keys).
"""

from __future__ import annotations

from textual.widgets import Footer


class KeysFooter(Footer):
    """A Footer that shows its keys from the first frame and lets go of the keys it no longer shows."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.set_reactive(Footer._bindings_ready, True)  # compose the keys when mounted, not after a refresh

    drawn: tuple | None = None  # what the keys were last composed from

    def _keys_shown(self) -> tuple:
        """Everything `Footer.compose` draws from: the screen's shown bindings, enabled or not, with their
        tooltips and how each key is displayed."""
        return tuple(
            (binding, enabled, tooltip, self.app.get_key_display(binding))
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        ) + (self._bindings_ready, self.show_command_palette, self.app.ENABLE_COMMAND_PALETTE)

    def compose(self):
        self.drawn = self._keys_shown()
        yield from super().compose()

    async def recompose(self) -> None:
        """Compose the keys again only if what they show changed: the screen's bindings change with every move
        of the focus, and recomposing identical keys made 36 of them at each start, 9 at a time."""
        if not self.is_attached:
            return
        shown = self._keys_shown()
        if shown == self.drawn:
            return
        self.drawn = shown
        await super().recompose()
        self.mutate_reactive(Footer.compact)  # runs the watchers, dropping those of removed keys
