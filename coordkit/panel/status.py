"""`StatusLine`: one line under a panel's controls that says what the last run did ("done in 12 ms", "error: …"),
with a progress bar beside it for a run that reports its progress."""

import html

import ipywidgets as widgets

GREY, RED = "#666666", "#b00020"


class StatusLine:
    """The status text (``text``) and, if ``progress_bar``, a progress bar (``progress``, hidden between runs), in
    one row (``box``)."""

    def __init__(self, progress_bar: bool = False) -> None:
        self.text = widgets.HTML()
        self.text.add_class("coordkit-panel-status")
        self.progress = widgets.FloatProgress(min=0.0, max=1.0, layout=widgets.Layout(visibility="hidden"))
        self.box = widgets.HBox([self.text, self.progress] if progress_bar else [self.text])

    def say(self, text: str, color: str = GREY) -> None:
        """Show ``text``, in ``color``."""
        self.text.value = f'<span style="color:{color}">{html.escape(text)}</span>'

    def show_progress(self, fraction: float) -> None:
        """Show the bar at ``fraction`` (0 to 1) of the run."""
        self.progress.layout.visibility = "visible"
        self.progress.value = round(min(max(fraction, 0.0), 1.0), 2)  # rounded: at most ~100 updates to send

    def hide_progress(self) -> None:
        self.progress.layout.visibility = "hidden"
