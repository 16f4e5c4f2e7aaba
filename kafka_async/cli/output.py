"""Terminal output for the ``kafka-async`` command: tables, messages and progress bars.

``rich`` (the optional ``cli`` extra) draws tables and progress bars when it is installed
and the stream is a terminal. Otherwise everything degrades to plain, pipe-friendly text:
tables become aligned columns, progress bars disappear. Colours follow the usual
conventions: only on a terminal, never when ``NO_COLOR`` is set, always with
``FORCE_COLOR``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

__all__ = ["Output", "Progress"]


def _colour_wanted(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


class Progress:
    """A progress bar handle; ``advance(n)`` is cheap and a no-op without a terminal."""

    def __init__(self, bar: Any = None, task: Any = None) -> None:
        self._bar = bar
        self._task = task
        self.completed = 0

    def advance(self, n: int = 1) -> None:
        self.completed += n
        if self._bar is not None:
            self._bar.advance(self._task, n)


class Output:
    """Where the command line writes: data to ``out``, diagnostics to ``err``."""

    def __init__(
        self,
        out: TextIO | None = None,
        err: TextIO | None = None,
        *,
        use_rich: bool | None = None,
    ) -> None:
        self.out = out if out is not None else sys.stdout
        self.err = err if err is not None else sys.stderr
        self.colour = _colour_wanted(self.out)
        self.err_colour = _colour_wanted(self.err)
        if use_rich is None:
            use_rich = _rich_available()
        self.rich = use_rich
        self._console: Any = None
        self._err_console: Any = None

    # -- rich consoles, created on first use so plain runs never import rich ----------------

    def _rich_console(self, stream: TextIO, colour: bool) -> Any:
        from rich.console import Console

        return Console(
            file=stream,
            no_color=not colour,
            color_system="auto" if colour else None,
            highlight=False,
            soft_wrap=True,
            force_terminal=colour or None,
        )

    @property
    def console(self) -> Any:
        if self._console is None:
            self._console = self._rich_console(self.out, self.colour)
        return self._console

    @property
    def err_console(self) -> Any:
        if self._err_console is None:
            self._err_console = self._rich_console(self.err, self.err_colour)
        return self._err_console

    # -- plain text ------------------------------------------------------------------------

    def line(self, text: str = "") -> None:
        """One line of data on stdout."""
        self.out.write(text + "\n")

    def write_raw(self, text: str) -> None:
        self.out.write(text)

    def flush(self) -> None:
        self.out.flush()

    def info(self, text: str) -> None:
        """A diagnostic line on stderr (progress notes, summaries)."""
        if self.rich and self.err_colour:
            self.err_console.print(text, style="dim", markup=False)
        else:
            self.err.write(text + "\n")
            self.err.flush()

    def success(self, text: str) -> None:
        if self.rich and self.err_colour:
            self.err_console.print(text, style="green", markup=False)
        else:
            self.err.write(text + "\n")
            self.err.flush()

    def error(self, text: str) -> None:
        """The one-line error a failing command ends with."""
        text = f"kafka-async: error: {text}"
        if self.rich and self.err_colour:
            self.err_console.print(text, style="bold red", markup=False)
        else:
            self.err.write(text + "\n")
            self.err.flush()

    # -- tables ----------------------------------------------------------------------------

    def table(
        self,
        headers: Sequence[str],
        rows: Sequence[Sequence[object]],
        *,
        title: str | None = None,
    ) -> None:
        """A table on stdout: rich on a terminal, aligned plain columns otherwise."""
        cells = [["" if v is None else str(v) for v in row] for row in rows]
        if self.rich and self.colour:
            from rich.table import Table

            table = Table(title=title, header_style="bold cyan", show_edge=False)
            for h in headers:
                table.add_column(h, overflow="fold")
            for row in cells:
                table.add_row(*row)
            self.console.print(table)
            return
        if title:
            self.line(title)
        widths = [len(h) for h in headers]
        for row in cells:
            for i, v in enumerate(row):
                widths[i] = max(widths[i], len(v))
        self.line(_plain_row(headers, widths))
        for row in cells:
            self.line(_plain_row(row, widths))

    # -- progress --------------------------------------------------------------------------

    @contextmanager
    def progress(self, description: str, total: int | None) -> Iterator[Progress]:
        """A progress bar on stderr while the block runs (only on a terminal with rich)."""
        if not (self.rich and self.err_colour):
            yield Progress()
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as RichProgress

        bar = RichProgress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.err_console,
            transient=True,
        )
        with bar:
            task = bar.add_task(description, total=total)
            yield Progress(bar, task)


def _plain_row(values: Sequence[str], widths: Sequence[int]) -> str:
    parts = [v.ljust(w) for v, w in zip(values, widths, strict=False)]
    return "  ".join(parts).rstrip()
