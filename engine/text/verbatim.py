"""Text with nothing to translate: kept verbatim and never sent to the model.

A sentence or a document paragraph that is only a URL, an e-mail address, a number, a placeholder or code has no
words for the model to translate, and the model, which has seen only sentences, makes one up (a .docx paragraph
`https://example.org/path?q=1` came back as an invented Chinese sentence). Both the text pipeline
(engine.text.segment, one sentence at a time) and every document format (engine.documents.model.Unit, one unit at a
time) ask `nothing_to_translate`, so the rule is the same wherever text reaches the engine.

The rule is deliberately narrow: text is kept only when no token of it reads as a word. Any word of prose in it
("See example.org", "Call foo_bar()", a single "Introduction") sends the whole text to the model as before, with
its URLs and code protected there by the glossary's automatic do-not-translate spans (engine.pipeline.glossary_match).
"""

from __future__ import annotations

import re
import unicodedata

from engine.text.protected import protected_matches

# A token that reads as code, not as a word (ASCII only: a token with Chinese in it is always text):
_CODE = re.compile(
    r"""
      [_=\\{}<>$@|~^`]              # snake_case, x=1, C:\path, {x}, <tag>, $HOME, @handle, a|b
    | \w\(                          # a call: print(x), main()
    | ::|->                         # std::vector, a->b
    | \A(?:\.{0,2}|~)/\w            # a path: /usr/bin, ./run.sh, ../up, ~/notes
    | \A[\w.-]+/[\w./-]*\.[A-Za-z0-9]{1,5}\Z   # a relative path to a file: images/pic.png (an EPUB's alt text)
    | \A--?[A-Za-z]                 # a command-line flag: -v, --verbose
    | \A[a-z][a-z0-9]*[A-Z]         # lowerCamelCase: getElementById
    """,
    re.VERBOSE,
)
# Dotted names: os.path.join, file.txt, example.org (at least two parts of two or more characters, so "e.g.",
# "U.S." and "Ph.D." stay words).
_DOTTED = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)+")
# A plain English word between spaces ("the", "Hello,"): a word by the full rule too, whenever the text has none of
# the characters that start a protected span it could be part of (`code`, {placeholders}, %s).
_PLAIN_WORD = re.compile(r"(?<!\S)(?:[A-Z]?[a-z]+|[A-Z]+)(?<=[A-Za-z]{2})[.,;:!?]?(?!\S)")
_MAY_PROTECT = re.compile(r"[`{%]")
_EDGE = "\"'“”‘’«»「」『』()[]（）【】《》,.;:!?，。；：！？、…"


def nothing_to_translate(text: str) -> bool:
    """True when `text` has no word to translate: blank, digits and symbols only, or URLs, e-mail addresses,
    placeholders ({name}, %s) and code only (see the module docstring)."""
    if _PLAIN_WORD.search(text) and not _MAY_PROTECT.search(text):  # the usual sentence, 10× faster
        return False
    rest = _without_protected(text)
    return not any(_is_word(token) for token in rest.split())


def _without_protected(text: str) -> str:
    """`text` with its URLs, e-mail addresses, placeholders and `code` replaced by spaces."""
    spans = protected_matches(text)
    if not spans:
        return text
    parts, at = [], 0
    for span in spans:
        parts.append(text[at : span.start])
        parts.append(" ")
        at = span.end
    parts.append(text[at:])
    return "".join(parts)


def _is_word(token: str) -> bool:
    """A token of prose: it has a letter and does not read as code. One Latin letter alone ("x = 1", a list's "A")
    is not a word here: it is translated only with a longer word beside it."""
    letters = sum(unicodedata.category(ch).startswith("L") for ch in token)
    if not letters:
        return False
    if not token.isascii():
        return True
    if letters < 2:
        return False
    if _CODE.search(token):
        return False
    bare = token.strip(_EDGE)
    if _DOTTED.fullmatch(bare):
        return sum(len(part) >= 2 for part in bare.split(".")) < 2
    return True
