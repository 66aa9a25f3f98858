"""Small inline SVG charts (no script, no network): stacked day bars, day lines, ranked bars.

Example:
    >>> svg = ranked_bars("cited", [("a.md", 3), ("b.md", 1)])
    >>> svg.count("<rect class=\\"bar\\""), "a.md" in svg
    (2, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

WIDTH, HEIGHT = 720, 190
PAD_L, PAD_R, PAD_T, PAD_B = 64, 12, 12, 36
PALETTE = ("#2f6fdf", "#7fb2ff", "#f2a93b", "#d9534f", "#5cb85c", "#8e6bd1")


def _fmt(value: float) -> str:
    if abs(value) >= 10 or abs(value - round(value)) < 1e-9:
        return f"{value:.0f}"
    return f"{value:.2f}"


def _units(ch: str) -> int:
    return 2 if ord(ch) > 0x2E80 else 1  # a CJK character is two Latin ones wide


def _wrapped(text: str, width: int, most: int = 3) -> list[str]:
    """``text`` in lines of about ``width`` Latin characters, broken after a ``/``, space, ``-``
    or ``_`` where one is near; at most ``most`` lines (the last one cut with "…").

    Example:
        >>> _wrapped("kubernetes/networking/ingress-returns-502-bad-gateway.md", 30)
        ['kubernetes/networking/ingress-', 'returns-502-bad-gateway.md']
        >>> _wrapped("x" * 100, 30, most=2)[-1][-1]
        '…'
    """
    lines: list[str] = []
    rest = text
    while rest and len(lines) < most:
        used, cut, soft = 0, len(rest), 0
        for i, ch in enumerate(rest):
            used += _units(ch)
            if used > width:
                cut = soft if soft > width // 3 else i
                break
            if ch in "/ -_":
                soft = i + 1
        lines.append(rest[:cut])
        rest = rest[cut:]
    if rest:
        lines[-1] = lines[-1][:-1] + "…"
    return lines


def _frame(name: str, label: str, body: str, height: int = HEIGHT) -> str:
    return (
        f'<svg class="chart" data-chart="{escape(name)}" viewBox="0 0 {WIDTH} {height}" '
        f'width="100%" role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">'
        f"<title>{escape(label)}</title>{body}</svg>"
    )


def _axes(days: Sequence[str], top: float, unit: str = "") -> str:
    plot_h = HEIGHT - PAD_T - PAD_B
    parts = []
    for i in range(5):
        value = top * i / 4
        y = PAD_T + plot_h - plot_h * i / 4
        parts.append(
            f'<line class="grid" x1="{PAD_L}" x2="{WIDTH - PAD_R}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<text class="tick" x="{PAD_L - 6}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_fmt(value)}{unit}</text>"
        )
    step = max(1, len(days) // 8)
    slot = (WIDTH - PAD_L - PAD_R) / max(len(days), 1)
    for i, day in enumerate(days):
        if i % step == 0:
            x = PAD_L + slot * (i + 0.5)
            parts.append(
                f'<text class="tick" x="{x:.1f}" y="{HEIGHT - PAD_B + 16}" '
                f'text-anchor="middle">{escape(day[5:])}</text>'
            )
    return "".join(parts)


def _legend(names: Sequence[str]) -> str:
    parts = []
    for i, name in enumerate(names):
        x = PAD_L + i * 130
        parts.append(
            f'<rect x="{x}" y="{HEIGHT - 14}" width="10" height="10" fill="{PALETTE[i]}"/>'
            f'<text class="legend" x="{x + 14}" y="{HEIGHT - 5}">{escape(name)}</text>'
        )
    return "".join(parts)


def stacked_day_bars(
    name: str, label: str, days: Sequence[str], series: dict[str, Sequence[float]]
) -> str:
    """One bar per day, stacked by series (e.g. relevance high/medium/low/no evidence)."""
    totals = [sum(values[i] for values in series.values()) for i in range(len(days))]
    top: float = max(totals, default=0) or 1
    if top >= 4:  # counts: whole-number ticks
        top = float(math.ceil(top / 4) * 4)
    plot_h = HEIGHT - PAD_T - PAD_B
    slot = (WIDTH - PAD_L - PAD_R) / max(len(days), 1)
    bar_w = min(max(2.0, slot * 0.7), 48.0)
    bars = []
    for i, day in enumerate(days):
        y: float = PAD_T + plot_h
        for k, (series_name, values) in enumerate(series.items()):
            h = plot_h * values[i] / top
            if h <= 0:
                continue
            y -= h
            x = PAD_L + slot * i + (slot - bar_w) / 2
            bars.append(
                f'<rect class="bar" x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" '
                f'height="{h:.1f}" fill="{PALETTE[k]}"><title>{escape(day)} '
                f"{escape(series_name)}: {_fmt(values[i])}</title></rect>"
            )
    return _frame(name, label, _axes(days, top) + "".join(bars) + _legend(list(series)))


def day_lines(
    name: str,
    label: str,
    days: Sequence[str],
    series: dict[str, Sequence[float | None]],
    *,
    unit: str = "",
    top: float | None = None,
) -> str:
    """One line per series over the days (gaps where a value is missing), with points."""
    values = [v for line in series.values() for v in line if v is not None]
    top = top or (max(values, default=0) or 1)
    plot_h = HEIGHT - PAD_T - PAD_B
    slot = (WIDTH - PAD_L - PAD_R) / max(len(days), 1)
    parts = []
    for k, (series_name, line) in enumerate(series.items()):
        points = [
            (PAD_L + slot * (i + 0.5), PAD_T + plot_h - plot_h * v / top)
            for i, v in enumerate(line)
            if v is not None
        ]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(
                f'<polyline class="line" points="{path}" fill="none" stroke="{PALETTE[k]}" '
                'stroke-width="2"/>'
            )
        for (x, y), v in zip(points, [v for v in line if v is not None], strict=True):
            parts.append(
                f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{PALETTE[k]}">'
                f"<title>{escape(series_name)}: {_fmt(v)}{escape(unit)}</title></circle>"
            )
    return _frame(name, label, _axes(days, top, unit) + "".join(parts) + _legend(list(series)))


def ranked_bars(name: str, items: Sequence[tuple[str, float]], label: str = "") -> str:
    """Horizontal bars, largest first (labels on the left, wrapped whole, values on the right)."""
    line_h, label_w = 15, 300
    rows = [(_wrapped(item, 46), item, float(value)) for item, value in items]
    height = max(sum(line_h * len(lines) + 7 for lines, _, _ in rows) + 8, 30)
    top = max((v for _, _, v in rows), default=0) or 1
    parts = []
    y = 4
    for lines, item, value in rows:
        w = (WIDTH - label_w - 60) * value / top
        middle = y + (line_h * len(lines) + 7) / 2
        text = "".join(
            f'<tspan x="{label_w - 6}" y="{y + 15 + k * line_h}">{escape(line)}</tspan>'
            for k, line in enumerate(lines)
        )
        parts.append(
            f'<text class="label" text-anchor="end">{text}</text>'
            f'<rect class="bar" x="{label_w}" y="{middle - 7.5:.1f}" width="{max(w, 1):.1f}" '
            f'height="15" fill="{PALETTE[0]}"><title>{escape(item)}: {_fmt(value)}</title></rect>'
            f'<text class="value" x="{label_w + w + 6:.1f}" y="{middle + 4.5:.1f}">'
            f"{_fmt(value)}</text>"
        )
        y += line_h * len(lines) + 7
    return _frame(name, label or name, "".join(parts), height)
