"""Which files a command line's inputs mean: files as given, folders searched for documents Qiao reads.

A folder search skips what is not the user's own document: hidden folders and files (a progress file or a
temporary result is hidden), and earlier results (names the result template makes for the target language, such
as report.zh.docx, and incomplete ones such as report.zh.partial.docx), so translating a folder twice does not
translate its translations.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Iterable
from pathlib import Path

from engine.documents import registry
from engine.documents.job import PARTIAL_MARK
from engine.documents.model import DocumentError
from engine.documents.progress_file import SUFFIX as PARTIAL_SUFFIX


def expand(
    inputs: Iterable[Path], target_lang: str, name_template: str = "{stem}.{lang}{suffix}", format: str = "auto"
) -> list[Path]:
    """The documents `inputs` name, each once, in the order given (a folder's documents sorted by path).

    A file given by name is taken whatever its extension: the job then explains one it cannot read (a PDF, say).
    A folder gives the files under it whose extension a supported format claims (with `format`, that format's
    extensions). DocumentError for a path that does not exist, before anything is done.
    """
    inputs = check_inputs(inputs)
    wanted = _extensions(format)
    is_result = _result_matcher(name_template, target_lang)
    found: list[Path] = []
    seen: set[Path] = set()
    for path in inputs:
        batch = [path] if not path.is_dir() else _search(path, wanted, is_result)
        for file in batch:
            key = file.resolve()
            if key not in seen:
                seen.add(key)
                found.append(file)
    return found


def check_inputs(inputs: Iterable[Path]) -> list[Path]:
    """`inputs` as paths; DocumentError naming the first that does not exist."""
    paths = [Path(p) for p in inputs]
    for path in paths:
        if not path.exists():
            raise DocumentError(f"{path}: no such file or folder")
    return paths


def _extensions(format: str) -> tuple[str, ...]:
    if format != "auto":
        return registry.get(format).extensions
    return registry.extensions()


def _search(folder: Path, extensions: tuple[str, ...], is_result) -> list[Path]:
    """Supported, visible, non-result files under `folder` (symlinked folders are not followed: no loops)."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.startswith(".") or name.endswith(PARTIAL_SUFFIX):
                continue
            if Path(name).suffix.lower() not in extensions or is_result(name):
                continue
            found.append(Path(root) / name)
    return sorted(found, key=lambda p: p.as_posix())


def _result_matcher(template: str, lang: str):
    """A test for names the template makes for `lang` from some input ("x.zh.docx" for {stem}.{lang}{suffix})."""
    parts = _parse(template)
    if not any(literal for literal, *_ in parts) and all(field != "lang" for _, field, *_ in parts):
        return lambda name: False  # "{stem}{suffix}" (into another folder): a result looks like any input
    pattern = ""
    for literal, field, _, _ in parts:
        pattern += re.escape(literal)
        if field == "stem":
            pattern += ".+"
        elif field == "lang":
            pattern += re.escape(lang)
        elif field == "suffix":
            pattern += r"(?P<suffix>\.[^./\\]+)?"
        elif field is not None:
            return lambda name: False  # not a template a job can use either: the job says so
    compiled = re.compile(pattern, re.IGNORECASE)

    def is_result(name: str) -> bool:
        return matches(name) or matches(_without_partial(name))

    def matches(name: str) -> bool:
        match = compiled.fullmatch(name)
        if match is None:
            return False
        suffix = match.groupdict().get("suffix")
        return suffix is None or suffix.lower() == Path(name).suffix.lower()

    return is_result


def _without_partial(name: str) -> str:
    """`report.zh.partial.docx` → `report.zh.docx`: an incomplete result (engine.documents.job.partial_name) is a
    result too."""
    suffix = Path(name).suffix
    stem = name[: len(name) - len(suffix)] if suffix else name
    return stem.removesuffix(PARTIAL_MARK) + suffix if stem.endswith(PARTIAL_MARK) else name


def _parse(template: str):
    try:
        return list(string.Formatter().parse(template))
    except ValueError:
        return [(template, None, None, None)]
