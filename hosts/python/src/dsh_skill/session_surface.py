"""The model-visible surface of a session (spec §5.2): the fold of the
``surfaceOp`` markers, a replace resolved by position first and by seq range
when its ends are not both on the surface in order."""

from __future__ import annotations

Replace = tuple[int, int]  # (start, end) of a replace marker
SurfaceOp = str | Replace  # "append" or a replace


class SurfaceFold:
    """The model-visible surface: a replace is positional; ends that are not
    both on the surface in order hide the nodes whose seqs lie in the range."""

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.positions: dict[int, int] = {}

    def clone(self) -> SurfaceFold:
        copy = SurfaceFold()
        copy.nodes = list(self.nodes)
        copy.positions = dict(self.positions)
        return copy

    def __contains__(self, seq: int) -> bool:
        return seq in self.positions

    def shadowed_by(self, start: int, end: int) -> list[int] | None:
        first, last = self.positions.get(start), self.positions.get(end)
        if first is None or last is None or first > last:
            return None
        return self.nodes[first : last + 1]

    def whole_range(self) -> Replace | None:
        return (self.nodes[0], self.nodes[-1]) if self.nodes else None

    def apply(self, seq: int, op: SurfaceOp) -> str | None:
        """Folds in event ``seq`` with marker ``op``; returns a warning when it fell back."""
        if op == "append":
            self.positions[seq] = len(self.nodes)
            self.nodes.append(seq)
            return None
        assert isinstance(op, tuple)
        start, end = op
        first, last = self.positions.get(start), self.positions.get(end)
        warning = None
        if first is not None and last is not None and first <= last:
            hidden = self.nodes[first : last + 1]
            self.nodes[first : last + 1] = [seq]
        else:
            in_range = [node for node in self.nodes if start <= node <= end]
            if not in_range:
                self.positions[seq] = len(self.nodes)
                self.nodes.append(seq)
                return f"seq {seq} replaces {start}..={end}, but no surface node lies in that range; appended it at the end"
            at = next(i for i, node in enumerate(self.nodes) if start <= node <= end)
            hidden = in_range
            self.nodes = [node for node in self.nodes if not start <= node <= end]
            self.nodes.insert(at, seq)
            warning = (
                f"seq {seq} replaces {start}..={end}, whose ends are not both on the surface in that order; "
                f"hid the {len(hidden)} surface node(s) with seqs in that range instead"
            )
        for node in hidden:
            self.positions.pop(node, None)
        self.positions = {node: position for position, node in enumerate(self.nodes)}
        return warning


def range_problem(surface: SurfaceFold, op: Replace) -> str:
    """Why a replace this host writes does not fit the surface (DeepSeek
    Harness would refuse to load it)."""
    start, end = op
    if start not in surface:
        return f"seq {start} is not on the surface"
    if end not in surface:
        return f"seq {end} is not on the surface"
    return f"seq {start} comes after seq {end} on the surface"
