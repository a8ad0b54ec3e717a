"""A footer that never cuts a key mid-word: at 60 columns Home's footer read "s Slee" and
Review's "space Line". Keys that would not fit whole are left out, from the first that
does not fit on (bindings are listed most important first); `?` and the command palette
still list every key of the screen. A screen can `keep` a key whatever the width (Review's
`A Adopt`, on a phone): its room is set aside first, and it stays in its place.

It composes again only when the keys it would show change. Textual's footer rebuilds every
key widget whenever the screen says its bindings changed, which it says on every focus
move and binding refresh, even when nothing the footer shows is different: about 80
rebuilds in a Review test, a tenth of the app's CPU (bench/suite_cpu.py)."""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PALETTE = "-command-palette"
# as the compact footer draws a key: "k description" (TEXT_EXTRA: the space between),
# then a blank cell and a one-cell margin, which the next key or the palette key (docked
# right, with its left border) may cover
TEXT_EXTRA, KEY_EXTRA, PALETTE_EXTRA = 1, 3, 4


def _cells(key: FooterKey) -> int:
    return cell_len(key.key_display) + cell_len(key.description)


def _shown_bindings(screen: Screen) -> tuple:
    """What the footer's keys are made of: each active binding with its state."""
    return tuple(
        (binding, enabled, tooltip)
        for _, binding, enabled, tooltip in screen.active_bindings.values()
    )


class FittingFooter(Footer):
    def __init__(self, *args, keep: frozenset[str] = frozenset(), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.keep = keep  # keys (as bound, e.g. "A") shown at any width
        self._composed_for: tuple | None = None  # the bindings the shown keys came from

    def compose(self) -> ComposeResult:
        self._composed_for = _shown_bindings(self.screen) if self._bindings_ready else None
        yield from self._fitting(list(super().compose()))

    def bindings_changed(self, screen: Screen) -> None:
        unchanged = (
            self._composed_for is not None
            and self.is_attached
            and screen is self.screen
            and _shown_bindings(screen) == self._composed_for
        )
        if not unchanged:
            super().bindings_changed(screen)

    def _fitting(self, items: list) -> list:
        """The keys that fit whole, in order, then the palette key. The footer spans the
        screen, so before its first layout the screen's width stands for its own."""
        width = self.size.width or self.app.size.width
        if not all(isinstance(item, FooterKey) for item in items):
            return items  # grouped keys: left as Textual lays them out
        palette = [k for k in items if k.has_class(PALETTE)]
        kept = [k for k in items if k.key in self.keep and k not in palette]
        room = width - sum(_cells(k) + PALETTE_EXTRA for k in palette)
        room -= sum(_cells(k) + KEY_EXTRA for k in kept)
        shown, full = [], False
        for key in items:
            if key in palette:
                continue
            if key in kept:
                shown.append(key)
                continue
            full = full or room < _cells(key) + TEXT_EXTRA
            if not full:
                room -= _cells(key) + KEY_EXTRA
                shown.append(key)
        return shown + palette

    def on_resize(self) -> None:
        """Composes again only when a different number of keys fits."""
        shown = len(self.query(FooterKey))
        if not self._bindings_ready or not shown:
            return  # the footer's own first compose is on its way
        if len(self._fitting(list(super().compose()))) != shown:
            self.call_after_refresh(self.recompose)
