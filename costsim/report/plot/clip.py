"""Shapes cut to a panel's plotting box (pixels), so nothing is drawn past the axes."""

from __future__ import annotations

import itertools

from costsim.report.plot.scene import Point

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 with x0 < x1, y0 < y1


def clip_segment(a: Point, b: Point, box: Box) -> tuple[Point, Point] | None:
    """The part of segment a–b inside ``box`` (Liang–Barsky), or None."""
    x0, y0, x1, y1 = box
    dx, dy = b[0] - a[0], b[1] - a[1]
    t0, t1 = 0.0, 1.0
    for p, q in ((-dx, a[0] - x0), (dx, x1 - a[0]), (-dy, a[1] - y0), (dy, y1 - a[1])):
        if p == 0:
            if q < 0:
                return None
            continue
        t = q / p
        if p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    start = a if t0 == 0 else (a[0] + t0 * dx, a[1] + t0 * dy)
    end = b if t1 == 1 else (a[0] + t1 * dx, a[1] + t1 * dy)
    return start, end


def clip_polyline(points: list[Point], box: Box) -> list[list[Point]]:
    """The runs of the polyline inside ``box``."""
    runs: list[list[Point]] = []
    current: list[Point] = []
    for a, b in itertools.pairwise(points):
        piece = clip_segment(a, b, box)
        if piece is None:
            if len(current) > 1:
                runs.append(current)
            current = []
            continue
        start, end = piece
        if current and current[-1] == start:
            current.append(end)
        else:
            if len(current) > 1:
                runs.append(current)
            current = [start, end]
    if len(current) > 1:
        runs.append(current)
    return runs


def clip_polygon(points: list[Point], box: Box) -> list[Point]:
    """The polygon cut to ``box`` (Sutherland–Hodgman)."""
    out = points
    # each edge: the coordinate (0 x, 1 y), its limit, and which side is kept (+1 above)
    for axis, limit, side in ((0, box[0], 1), (0, box[2], -1), (1, box[1], 1), (1, box[3], -1)):
        if not out:
            break
        source, out = out, []
        previous = source[-1]
        for point in source:
            now_in = side * (point[axis] - limit) >= 0
            was_in = side * (previous[axis] - limit) >= 0
            if now_in != was_in:
                out.append(_crossing(previous, point, axis, limit))
            if now_in:
                out.append(point)
            previous = point
    return out


def _crossing(a: Point, b: Point, axis: int, limit: float) -> Point:
    """Where segment a–b meets the line ``coordinate[axis] == limit``."""
    t = (limit - a[axis]) / (b[axis] - a[axis])
    x, y = a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])
    return (limit, y) if axis == 0 else (x, limit)
