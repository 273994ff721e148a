"""Which installed model translates a direction: the user's choice, else the best published quality, else the first.

The choice is kept per direction in the shared settings file (engine.paths.settings_file(), `qiao.ini`), under
`[models]` with the pair key as the key (`en-zh=firefox-base-memory-en-zh`): the window writes it through its
settings layer (gui.settings, Key.MODEL_EN_ZH / MODEL_ZH_EN) and every command reads it here, so `qiao translate`
uses the model the window was told to use. The file is read with a small parser of its own (QSettings writes it;
configparser would choke on some of what QSettings writes and the engine never imports Qt). A name that is not
installed, or not usable, is ignored: the default applies.

Without a choice, the usable model with the best published score on the reference benchmark (engine.store.quality)
is used; models without one rank below, in search order (so opus-mt is used when it is the only one).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, TypeVar

from engine.paths import settings_file
from engine.store.quality import Published, Quality, best_published, rank

SECTION = "models"
MAX_SETTINGS_BYTES = 1 << 20
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_PAIR = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")


class Candidate(Protocol):
    """What choosing needs of an installed model (engine.store.installed.InstalledModel)."""

    @property
    def name(self) -> str: ...
    @property
    def model_id(self) -> str: ...
    @property
    def pair_key(self) -> str | None: ...
    @property
    def problem(self) -> str | None: ...
    @property
    def quality(self) -> Quality | None: ...


C = TypeVar("C", bound=Candidate)


def read_choices(path: Path | None = None) -> dict[str, str]:
    """{pair key: bundle name} from the settings file's [models] section; {} when it is missing or unreadable."""
    path = path if path is not None else settings_file()
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_SETTINGS_BYTES + 1)
    except OSError:
        return {}
    if len(data) > MAX_SETTINGS_BYTES:
        return {}
    text = data.decode("utf-8", errors="replace")
    section = ""
    found: dict[str, str] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith((";", "#")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip().lower()
            continue
        if section != SECTION or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        if _PAIR.fullmatch(key) and _NAME.fullmatch(value):
            found[key] = value
    return found


def chosen_for(pair_key: str, path: Path | None = None) -> str | None:
    """The bundle name chosen for `pair_key`, or None."""
    return read_choices(path).get(pair_key)


def usable_for(models: Sequence[C], pair_key: str) -> list[C]:
    """The models that load (as far as their manifests say) and translate `pair_key`, in search order."""
    return [m for m in models if m.problem is None and m.pair_key == pair_key]


def by_quality(models: Sequence[C]) -> list[C]:
    """Best published quality first; equal or unknown quality keeps the given (search) order."""
    return sorted(models, key=lambda m: -rank(m.quality))


def pick(models: Sequence[C], pair_key: str, chosen: str | None = None) -> C | None:
    """The model for `pair_key`: the one named `chosen` (a bundle name, or a model id) when it is usable, else the
    best published quality, else the first in search order; None when none is usable."""
    usable = usable_for(models, pair_key)
    if not usable:
        return None
    if chosen:
        for match in (lambda m: m.name == chosen, lambda m: m.model_id == chosen):
            named = [m for m in usable if match(m)]
            if named:
                return named[0]
    return by_quality(usable)[0]


def better_available(models: Sequence[Candidate], pair_key: str) -> Published | None:
    """The best model Qiao knows of for `pair_key` when the direction's installed models all have a published score
    (opus-mt, say: a model of the user's own is left alone), the known one is not installed, and it scores higher
    than every installed one (the window offers it once); None otherwise."""
    usable = usable_for(models, pair_key)
    best = best_published(pair_key)
    if not usable or best is None:
        return None
    if any(
        (m.model_id == best.model_id and m.pair_key in (pair_key, None)) or m.name == best.catalogue_id for m in models
    ):  # installed already (a bundle of another pair under its id, `qiao model build --model-id`, is another model)
        return None
    scores = [rank(m.quality) for m in usable]
    if -math.inf in scores:
        return None
    return best if rank(best.quality) > max(scores) else None
