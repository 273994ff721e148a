"""Stream assembly: finished sentences and committed tokens → text deltas in reading order, with the source layout.

The output plan is fixed up front: layout text (newlines and indentation verbatim, the gap between two sentences of
a line replaced by the target's joiner: " " for English, "" for Chinese) and sentence chunks. A chunk in progress is
emitted only up to its last non-space character (a later token may end in whitespace that the final strip removes),
and, when punctuation is normalised, only up to what no later character can change (the target's
`TargetRules.stable_prefix`), so every delta is final and the deltas concatenate to the result.

The assembler also records where each finished sentence's text went (`span`, `text_of`): the punctuation rules
applied, or the text verbatim for a sentence given as the user wrote it (translation memory).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from engine.pipeline.planning import Sentence
from engine.text.punctuation import TargetRules
from engine.text.segment import Segment


class PieceDecoder(Protocol):
    """The part of engine.families.marian.tokenizer.MarianTokenizer assembly needs."""

    @property
    def cleans_up(self) -> bool: ...
    def pieces_text(self, ids: Iterable[int]) -> str: ...


class Assembler:
    """The output of one text, as it is decoded (see the module docstring)."""

    def __init__(
        self,
        tokenizer: PieceDecoder,
        segments: Sequence[Segment],
        sentences: Sequence[Sentence],
        joiner: str,
        rules: TargetRules | None = None,
    ) -> None:
        self.tokenizer = tokenizer
        # clean_up_tokenization rewrites spaces around punctuation once the text is whole: no partial text then
        self.streamable = not tokenizer.cleans_up
        self.rules = rules
        chunks: dict[int, list[int]] = {}
        for i, sentence in enumerate(sentences):
            chunks.setdefault(sentence.index, []).append(i)
        plan: list[tuple[str, str | int]] = []
        for si, seg in enumerate(segments):
            if seg.translate:
                for n, i in enumerate(chunks.get(si, [])):
                    if n:
                        plan.append(("text", joiner))  # the pieces of a split long sentence
                    plan.append(("chunk", i))
            else:
                plan.append(("text", joiner if seg.inline_gap else seg.text))
        self.plan = plan
        self.pos = 0
        self.final: list[str | None] = [None] * len(sentences)  # decoded text, as the model wrote it
        self.partial: list[list[int]] = [[] for _ in sentences]
        self.emitted = ""  # text of the chunk in progress already emitted
        self.sentences_done = 0
        self.length = 0  # characters drained so far
        self.verbatim = [False] * len(sentences)  # shown as given, the punctuation rules not applied
        self.spans: list[tuple[int, int] | None] = [None] * len(sentences)  # in the drained text, once drained
        self.shown: list[str | None] = [None] * len(sentences)  # each sentence's text as drained
        self._stable: tuple[int, tuple[int, ...], str] | None = None  # (chunk, its tokens, their stable text)

    def finish(self, i: int, text: str, *, verbatim: bool = False) -> None:
        """Sentence i's final text (as decoded; `verbatim`: shown exactly so, e.g. the user's own translation)."""
        if self.final[i] is None:
            self.final[i] = text
            self.verbatim[i] = verbatim

    def span(self, i: int) -> tuple[int, int] | None:
        """Where sentence i's text is in the drained text; None until it is drained."""
        return self.spans[i]

    def text_of(self, i: int) -> str | None:
        """Sentence i's text as it appears in the output (normalised unless verbatim); None until drained."""
        return self.shown[i]

    def progress(self, i: int, tokens: list[int]) -> None:
        if self.final[i] is None:
            self.partial[i] = tokens

    def shows(self, i: int) -> bool:
        """Whether sentence i's progress can add text now: it is the chunk in progress (a later one waits for it)
        and partial text is shown at all. Drained after a step of any other sentence, nothing comes out."""
        return self.streamable and self.pos < len(self.plan) and self.plan[self.pos] == ("chunk", i)

    def drain(self) -> str:
        """The text that became final since the last call."""
        out = []
        rules = self.rules
        while self.pos < len(self.plan):
            _, value = self.plan[self.pos]
            if isinstance(value, str):  # ("text", the text between chunks); ("chunk", its sentence index)
                out.append(value)
                self.length += len(value)
                self.pos += 1
                continue
            final = self.final[value]
            if final is not None:
                if rules is not None and not self.verbatim[value]:
                    final = rules.normalize(final)
                start = self.length - len(self.emitted)  # the part already emitted is this text's start
                rest = final[len(self.emitted) :]
                out.append(rest)
                self.length += len(rest)
                self.spans[value] = (start, self.length)
                self.shown[value] = final
                self.emitted = ""
                self.pos += 1
                self.sentences_done += 1
                continue
            if self.streamable:
                safe = self._stable_text(value)
                if len(safe) > len(self.emitted):
                    out.append(safe[len(self.emitted) :])
                    self.length += len(safe) - len(self.emitted)
                    self.emitted = safe
            break
        return "".join(out)

    def _stable_text(self, i: int) -> str:
        """The final part of chunk i's text so far. Recomputed only when its tokens changed: drain runs after every
        sentence's step, and beam search commits a sentence's tokens only now and then (a paragraph of 5 sentences
        at beam 4 drained ~400 times for ~85 steps, re-decoding and re-normalising the same tokens)."""
        tokens = tuple(self.partial[i])
        if self._stable is not None and self._stable[:2] == (i, tokens):
            return self._stable[2]
        safe = self.tokenizer.pieces_text(tokens).strip()
        if self.rules is not None:
            safe = self.rules.normalize(self.rules.stable_prefix(safe))
        self._stable = (i, tokens, safe)
        return safe
