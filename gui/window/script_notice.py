"""The notice that the model in use cannot write the Chinese script the settings ask for.

Firefox's en→zh models write Simplified only: a user whose script setting is Traditional gets Simplified from them
(the request asks for what the model writes, and that is what is recorded: gui.pair_text.chosen_variant). So that
this never happens without a word, the window says it once per model and script (remembered in
Key.SCRIPT_NOTICES), with one action: "Use <model>" when another installed model of the direction writes that
script (chosen as the model indicator chooses: saved per direction, loaded at once), otherwise "Models…" with a hint
on getting one. Its strings are in the "MainWindow" translation context, as the model indicator's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Slot

from engine.languages import written_variants
from gui import pair_text
from gui.notice_bar import NoticeBar
from gui.settings import Key, Settings
from gui.window.request_controller import RequestController

MAX_REMEMBERED = 64  # Key.SCRIPT_NOTICES holds at most this many "bundle/variant" entries (the oldest go first)


class ScriptNotice(QObject):
    """Checks the loaded model against the script setting (`check`) and says a mismatch once, with its action."""

    def __init__(
        self,
        parent: QObject,
        requests: RequestController,
        settings: Settings,
        notice: NoticeBar,
        *,
        models: Callable[[str], list[Any]],
        loaded: Callable[[], Any | None],
        choose: Callable[[Any], None],
        open_models: Callable[[str], object],
    ) -> None:
        """`models(pair_key)`: the direction's usable installed models, best first; `loaded()`: the loaded one as
        listed (None before the list has it); `choose(model)`: use it for its direction; `open_models(hint)`: the
        Models dialog with a hint."""
        super().__init__(parent)
        self.requests, self.settings, self.notice = requests, settings, notice
        self._models, self._loaded, self._choose, self._open_models = models, loaded, choose, open_models
        self.shown = ""  # the last notice said ("" when none)
        settings.changed.connect(self._setting_changed)

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key is Key.VARIANT:
            self.check()

    def check(self) -> None:
        """Say it when the loaded model cannot write the chosen script, once per model and script; nothing before
        the installed models are listed with the loaded one among them (the action needs the list)."""
        info = self.requests.model
        pair = info.pair if info is not None else None
        model = self._loaded()
        if pair is None or model is None:
            return
        wanted = self.settings.get(Key.VARIANT)
        name = model.name or Path(info.bundle_dir).name
        limit = pair_text.script_limit(name, pair, wanted)
        if not limit:
            return
        seen = self.settings.get(Key.SCRIPT_NOTICES).split()
        token = f"{name}/{wanted}"
        if token in seen:
            return
        wanted_name = pair_text.variant_name(pair, wanted)
        written = pair_text.variant_name(pair, pair_text.chosen_variant(pair, wanted) or "")
        said = QCoreApplication.translate(
            "MainWindow", "Chinese script is set to {wanted}, but {limit}: this translation is in {written}."
        ).format(wanted=wanted_name, limit=limit, written=written)
        writer = next(
            (m for m in self._models(pair.key) if m is not model and wanted in written_variants(m.pair)), None
        )
        if writer is not None:
            text = QCoreApplication.translate("MainWindow", "{said} {other} writes {wanted}.").format(
                said=said, other=writer.name, wanted=wanted_name
            )
            action = (
                QCoreApplication.translate("MainWindow", "Use {model}").format(model=writer.name),
                lambda m=writer: self._choose(m),
            )
        else:
            text = QCoreApplication.translate(
                "MainWindow", "{said} No installed {languages} model writes {wanted}; get one in Models."
            ).format(said=said, languages=pair_text.arrow(pair.key), wanted=wanted_name)
            hint = QCoreApplication.translate(
                "MainWindow",
                "Click “Check for models”, then download a model for {languages} that writes {wanted}, such as {name}.",
            ).format(languages=pair_text.arrow(pair.key), wanted=wanted_name, name=f"opus-mt-{pair.key}")
            action = (QCoreApplication.translate("MainWindow", "Models…"), lambda h=hint: self._open_models(h))
        self.notice.show_message(text, action)
        self.shown = text
        seen = [*seen[-(MAX_REMEMBERED - 1) :], token]
        self.settings.set(Key.SCRIPT_NOTICES, " ".join(seen))
