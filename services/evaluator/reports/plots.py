"""The reports' charts, drawn by matplotlib as inline SVG: no script, no remote asset.

Figures are made with matplotlib's object API (`matplotlib.figure.Figure`, no
pyplot), so no global figure state is shared between the server's threads and
no GUI backend is ever chosen; matplotlib is imported on first use, not when
the evaluator starts. Text stays text in the SVG (`svg.fonttype: none`) and
mathtext is off, so a `$` in a run key prints as a `$`; matplotlib's XML writer
escapes every label. The SVG is then trimmed for embedding in a page: no XML
prolog, no stylesheet of its own (it would apply to the whole report), no
element ids but those its clip paths need, and a `<title>` for screen readers.
"""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence

from markupsafe import Markup

PALETTE = ("#2b6cb0", "#dd6b20", "#38a169", "#805ad5", "#d53f8c", "#319795", "#b7791f", "#4a5568")
SVG = "http://www.w3.org/2000/svg"
XLINK = "http://www.w3.org/1999/xlink"
STYLE = {
    "svg.fonttype": "none",
    "svg.hashsalt": "chunklab",  # the same report twice is the same file
    "text.parse_math": False,
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
WIDTH_INCHES = 8.5
LABEL_CHARS = 52


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fmt_default(value: float) -> str:
    return f"{value:.3g}"


def _svg(figure, title: str) -> Markup:
    """The figure as an SVG element ready to sit inside an HTML page."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    ET.register_namespace("", SVG)
    ET.register_namespace("xlink", XLINK)
    root = ET.fromstring(buffer.getvalue())  # the prolog and doctype go with the parse
    for parent in list(root.iter()):
        for child in list(parent):
            if child.tag == f"{{{SVG}}}style":
                parent.remove(child)
    for element in root.iter(f"{{{SVG}}}g"):
        element.attrib.pop("id", None)
    heading = ET.Element(f"{{{SVG}}}title")
    heading.text = title
    root.insert(0, heading)
    root.set("role", "img")
    root.set("class", "plot")
    return Markup(ET.tostring(root, encoding="unicode"))


LABEL_GAP_PT = 12  # a label's height at 9 pt, with a little air
LABEL_REACH_PT = 130  # how far a label runs beside its point


def label_shifts(at: Sequence[tuple[float, float]], lefts: Sequence[bool]) -> list[float]:
    """How far (in points, up positive) to move each point's label so that no two labels on the same
    side overlap: labels are placed from the top down, each at its point's height unless that is
    within LABEL_GAP_PT of a label already placed on its side and within LABEL_REACH_PT across;
    then just below the lowest such label."""
    placed: list[tuple[float, float, bool]] = []  # (x, label height, side)
    shifts = [0.0] * len(at)
    for i in sorted(range(len(at)), key=lambda i: (-at[i][1], at[i][0])):
        x, y = at[i]
        height = y
        for px, ph, side in sorted(placed, key=lambda p: -p[1]):
            if side == lefts[i] and abs(px - x) < LABEL_REACH_PT and abs(ph - height) < LABEL_GAP_PT:
                height = ph - LABEL_GAP_PT
        placed.append((x, height, lefts[i]))
        shifts[i] = height - y
    return shifts


def scatter(
    title: str,
    points: Sequence[tuple[str, float, float]],
    x_label: str,
    y_label: str,
    fmt_x: Callable[[float], str] = _fmt_default,
    fmt_y: Callable[[float], str] = _fmt_default,
) -> Markup:
    """Labelled points (label, x, y): e.g. tokens sent against a quality measure."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(STYLE):
        figure = Figure(figsize=(WIDTH_INCHES, 3.8), layout="constrained")
        axes = figure.subplots()
        x_max = max([x for _, x, _ in points] or [0.0]) * 1.1 or 1.0
        y_max = max([y for _, _, y in points] or [0.0]) * 1.1 or 1.0
        # Where each point sits, roughly in points of the chart, to keep their labels apart.
        at = [(x / x_max * WIDTH_INCHES * 72 * 0.85, y / y_max * 3.8 * 72 * 0.75) for _, x, y in points]
        lefts = [x > x_max / 2 for _, x, _ in points]
        shifts = label_shifts(at, lefts)
        for i, (label, x, y) in enumerate(points):
            axes.scatter([x], [y], s=45, color=PALETTE[i % len(PALETTE)], zorder=3)
            # Labels of points in the right half go to their left, so none runs off the chart;
            # a label moved off its point's height keeps a thin line to it.
            axes.annotate(
                _short(label),
                (x, y),
                xytext=(-8 if lefts[i] else 8, shifts[i]),
                textcoords="offset points",
                ha="right" if lefts[i] else "left",
                va="center",
                arrowprops={"arrowstyle": "-", "lw": 0.5, "color": "#a0aec0"} if shifts[i] else None,
            )
        axes.set_xlim(0, x_max)
        axes.set_ylim(0, y_max)
        axes.xaxis.set_major_formatter(lambda value, _: fmt_x(value))
        axes.yaxis.set_major_formatter(lambda value, _: fmt_y(value))
        axes.set_xlabel(x_label)
        axes.set_ylabel(y_label)
        axes.grid(alpha=0.3)
        axes.set_title(title, loc="left", fontweight="bold")
        return _svg(figure, title)
