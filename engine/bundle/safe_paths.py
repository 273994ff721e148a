"""Where a bundle-relative path really leads, checked before the file is opened.

The manifest's paths were already checked as text (engine.bundle.schema.path_problem: no absolute paths, no
`..`); here the disk is asked: a symlinked file, or a symlinked folder such as `int8/`, must not lead outside the
bundle, and what is opened must be a regular file (not /dev/zero, a FIFO that would block, or a folder).
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

from engine.bundle.schema import path_problem
from engine.errors import FileProblem


def inside(bundle: Path, rel: str) -> tuple[Path | None, FileProblem | None]:
    """(the real path, None) when `rel` is a regular file inside `bundle`, else (None, the problem)."""
    lexical = path_problem(rel, "the path")
    if lexical is not None:
        return None, lexical
    root = bundle.resolve()
    target = root / rel
    try:
        real = target.resolve(strict=True)
    except FileNotFoundError:
        return None, FileProblem("missing", rel, f"{rel}: missing")
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
        return None, FileProblem("unreadable", rel, f"{rel}: unreadable ({exc})")
    if not real.is_relative_to(root):
        return None, FileProblem("outside", rel, f"{rel}: leads outside the model folder (to {real})")
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return None, FileProblem("unreadable", rel, f"{rel}: unreadable ({exc.strerror or exc})")
    if not stat.S_ISREG(mode):
        what = "a folder" if stat.S_ISDIR(mode) else "a device, pipe or socket"
        return None, FileProblem("not-file", rel, f"{rel}: is {what}, not a regular file")
    return real, None


def beside(graph_rel: str, location: str) -> tuple[str | None, FileProblem | None]:
    """The bundle-relative path of an ONNX external-data `location` (relative to the graph's folder)."""
    problem = path_problem(location, f"external data of {graph_rel}")
    if problem is not None:
        if problem.kind == "outside":
            problem = FileProblem(
                "outside", graph_rel, f"{graph_rel}: its weights location {location!r} points outside the model folder"
            )
        return None, problem
    return posixpath.join(posixpath.dirname(graph_rel), location), None
