"""engine.documents.formats.html: only the visible text (and the attributes people read) changes."""

from __future__ import annotations

import codecs
import html as stdlib_html
import random

import pytest

from engine.documents import registry
from engine.documents.formats import html
from engine.documents.model import DocumentError
from tests.engine.documents.markup_helpers import made_up, markup, translate

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Travel notes &amp; phrases</title>
  <meta name="description" content="Useful sentences for a trip">
  <link rel="stylesheet" href="site.css">
  <style>p > b { color: #c00; } /* Thank you very much. */</style>
  <script>var greeting = "<p>Good morning, everyone!</p>"; if (a < b && c) { run(); }</script>
</head>
<body>
  <nav class="top"><ul>
    <li><a href="/">Home</a></li>
    <li><a href="/about" title="About this site">About</a>
  </ul></nav>
  <!-- Main content starts here: Thank you very much. -->
  <article>
    <h1>Good morning, everyone!</h1>
    <p>
      Please <b>open the window</b>. Where is the
      <a href="/station.html">train station</a>?
    </p>
    <p>Run <code>qiao --help</code> to see <em>more</em> options &mdash; <span translate="no">Qiao</span> works
       offline.</p>
    <p class="notranslate">See you tomorrow.</p>
    <img src="tea.jpg" alt="I like green tea.">
    <pre>  See you tomorrow.
    &lt;kept&gt;   as is</pre>
    <table>
      <tr><th>Question</th><th>Answer</th></tr>
      <tr><td>Can you help me?</td><td>Thank you very much.</td></tr>
    </table>
    <div>It is raining today.<div>The weather is very nice.</div></div>
    <form action="/search">
      <label>Name <input type="text" name="q" placeholder="What time is it now?"></label>
      <button type="submit">Thank you very much.</button>
      <input type=submit value='See you tomorrow.'>
      <select><option value="1">I like green tea.</option></select>
    </form>
  </article>
  <footer>&copy; 2024 Travel notes &ndash; <a href="mailto:x@example.org">x@example.org</a></footer>
</body>
</html>
"""


def sources(document) -> list[str]:
    return [unit.source for unit in document.units]


def test_units_are_the_visible_text_in_reading_order():
    document = html.read(PAGE.encode())
    assert sources(document) == [
        "Travel notes & phrases",
        "Useful sentences for a trip",
        "Home",
        "About this site",
        "About",
        "Good morning, everyone!",
        "Please open the window. Where is the train station?",
        "Run qiao --help to see more options — Qiao works offline.",
        "I like green tea.",
        "Question",
        "Answer",
        "Can you help me?",
        "Thank you very much.",
        "It is raining today.",
        "The weather is very nice.",
        "Name",
        "What time is it now?",
        "Thank you very much.",
        "See you tomorrow.",
        "I like green tea.",
        "© 2024 Travel notes – x@example.org",
    ]


def test_inline_markup_cuts_a_sentence_into_runs():
    document = html.read(PAGE.encode())
    sentence = next(u for u in document.units if u.source.startswith("Please"))
    assert [run.text for run in sentence.runs] == [
        "Please ",
        "open the window",
        ". Where is the ",
        "train station",
        "?",
    ]
    assert not any(run.fixed for run in sentence.runs)
    footer = document.units[-1]
    assert [(r.text, r.fixed) for r in footer.runs] == [("© 2024 Travel notes – ", False), ("x@example.org", True)]
    code = next(u for u in document.units if u.source.startswith("Run"))
    assert [(run.text, run.fixed) for run in code.runs] == [
        ("Run ", False),
        ("qiao --help", True),
        (" to see ", False),
        ("more", False),
        (" options — ", False),
        ("Qiao", True),
        (" works offline.", False),
    ]


@pytest.mark.parametrize("target", ["zh", "en"])
def test_identity_round_trip_gives_identical_bytes(target):
    data = PAGE.encode()
    document = html.read(data)
    assert document.render([None] * len(document.units), target=target) == data
    # The same texts back (the page's language as the target): nothing to change, not even an escape.
    same = [[run.text for run in unit.runs] for unit in document.units]
    assert document.render(same, target="en") == data


def test_translated_page_keeps_every_tag_and_untouched_text():
    data = PAGE.encode()
    document = html.read(data)
    out = document.render(made_up(document), target="zh").decode()
    assert markup(out) == markup(PAGE)
    assert '<html lang="zh">' in out
    # Escaped where it must be, and the page says what the translation says.
    assert "«PLEASE»&lt;&amp;&gt;<b>«OPEN THE WINDOW»&lt;&amp;&gt;</b>" in out
    assert stdlib_html.unescape("«HOME»&lt;&amp;&gt;") in stdlib_html.unescape(out)
    assert 'alt="«I LIKE GREEN TEA.»&lt;&amp;&gt;"' in out
    assert "value='«SEE YOU TOMORROW.»&lt;&amp;&gt;'" in out  # its own quotes kept
    assert 'content="«USEFUL SENTENCES FOR A TRIP»&lt;&amp;&gt;"' in out
    # Never touched: script, style, comment, pre, code, translate="no", class="notranslate", original entities.
    for kept in (
        '<script>var greeting = "<p>Good morning, everyone!</p>"; if (a < b && c) { run(); }</script>',
        "/* Thank you very much. */",
        "<!-- Main content starts here: Thank you very much. -->",
        "<pre>  See you tomorrow.\n    &lt;kept&gt;   as is</pre>",
        "<code>qiao --help</code>",
        '<span translate="no">Qiao</span>',
        '<p class="notranslate">See you tomorrow.</p>',
        '<a href="/station.html">',
    ):
        assert kept in out


def test_whitespace_around_text_is_kept():
    data = b"<ul>\n  <li>\n      I like green tea.\n  </li>\n</ul>\n"
    document = html.read(data)
    assert sources(document) == ["I like green tea."]
    out = document.render([["我喜欢绿茶。"]], target="zh")
    assert out == "<ul>\n  <li>\n      我喜欢绿茶。\n  </li>\n</ul>\n".encode()


def test_line_breaks_inside_a_paragraph_read_as_one_space():
    document = html.read(b"<p>It is\n   raining&nbsp;today.</p>")
    assert sources(document) == ["It is raining\xa0today."]


def test_lang_and_xml_lang_follow_the_target():
    data = b'<html xmlns="http://www.w3.org/1999/xhtml" lang="en" xml:lang=\'en\'><body><p>Hello</p></body></html>'
    out = html.read(data).render([["你好"]], target="zh")
    assert (
        out
        == (
            '<html xmlns="http://www.w3.org/1999/xhtml" lang="zh" xml:lang=\'zh\'><body><p>你好</p></body></html>'
        ).encode()
    )


def test_windows_1252_page_keeps_its_encoding_and_bytes():
    data = '<meta charset="windows-1252"><p>Café</p><p>Thank you very much.</p><pre>naïve</pre>'.encode("cp1252")
    document = html.read(data)
    assert sources(document) == ["Café", "Thank you very much."]
    out = document.render([None, ["非常感谢。"]], target="zh")
    assert out.startswith('<meta charset="windows-1252"><p>Café</p>'.encode("cp1252"))
    assert b"&#38750;&#24120;" in out  # characters the page's encoding cannot hold become references
    assert out.endswith("<pre>naïve</pre>".encode("cp1252"))
    assert stdlib_html.unescape(out.decode("cp1252")).count("非常感谢。") == 1


@pytest.mark.parametrize("bom, codec", [(codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le")])
def test_byte_order_mark_kept(bom, codec):
    data = bom + "<p>See you tomorrow.</p>".encode(codec)
    document = html.read(data)
    assert sources(document) == ["See you tomorrow."]
    assert document.render([["明天见。"]], target="zh") == bom + "<p>明天见。</p>".encode(codec)


def test_latin_1_label_reads_as_windows_1252_like_a_browser():
    head = b'<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">'
    data = head + "<p>“Thank you very much.” – 5 €</p>".encode("cp1252")
    document = html.read(data)
    assert sources(document) == ["“Thank you very much.” – 5 €"]
    assert document.render([["“非常感谢。” – 5 €"]], target="zh").startswith(head + b"<p>\x93&#38750;")


def test_gbk_page_from_chinese():
    data = '<meta charset="gbk"><p>我喜欢绿茶。</p><pre>保留</pre>'.encode("gbk")
    document = html.read(data)
    assert sources(document) == ["我喜欢绿茶。"]
    assert document.render([["I like green tea."]], target="en") == (
        '<meta charset="gbk"><p>I like green tea.</p><pre>保留</pre>'.encode("gbk")
    )


def test_stateful_encoding_is_refused():
    with pytest.raises(DocumentError, match="re-save"):
        html.read('<meta charset="iso-2022-jp"><p>日本</p>'.encode("iso-2022-jp"))


def test_xml_declaration_names_the_encoding():
    data = '<?xml version="1.0" encoding="ISO-8859-1"?><html><body><p>Ça va</p></body></html>'.encode("latin-1")
    document = html.read(data)
    assert sources(document) == ["Ça va"]


def test_undeclared_legacy_encoding_is_guessed():
    data = "<html><body><p>Le café est très bon, merci beaucoup à vous.</p></body></html>".encode("cp1252")
    document = html.read(data)
    assert sources(document) == ["Le café est très bon, merci beaucoup à vous."]


def test_declared_encoding_that_does_not_fit_is_refused():
    with pytest.raises(DocumentError, match="not valid"):
        html.read(b'<meta charset="utf-8"><p>caf\xe9</p>')


def test_binary_data_is_refused():
    with pytest.raises(DocumentError, match="binary"):
        html.read(b"<p>x</p>\x00\x00\x00")


def test_tag_soup_units():
    data = b"<p>One<p>Two</b> three<li>Four<li>Five</div></i><td>Six"
    document = html.read(data)
    assert sources(document) == ["One", "Two three", "Four", "Five", "Six"]
    out = document.render(made_up(document), target="zh")
    assert markup(out.decode()) == markup(data.decode())


def test_unclosed_skip_region_leaves_the_rest_untouched():
    data = b"<p>Hello</p><pre>never <b>translated</b> <p>nor this"
    document = html.read(data)
    assert sources(document) == ["Hello"]


def test_text_without_letters_is_not_a_unit():
    assert sources(html.read(b"<p>2024</p><td> | </td><p>&copy; &ndash; 42</p><p>Hi</p>")) == ["Hi"]


def test_attribute_entities_are_decoded_for_translation():
    document = html.read(b'<img alt="Tom &amp; Jerry&#39;s &quot;show&quot;">')
    assert sources(document) == ['Tom & Jerry\'s "show"']
    assert document.render([['猫"和"老鼠']], target="zh") == '<img alt="猫&quot;和&quot;老鼠">'.encode()


def test_unquoted_attribute_gets_quotes():
    document = html.read(b"<input type=submit value=Send><img alt=Tea src=t.png>")
    assert sources(document) == ["Send", "Tea"]
    out = document.render([["发送 它"], ["茶"]], target="zh")
    assert out == '<input type=submit value="发送 它"><img alt="茶" src=t.png>'.encode()


def test_wrong_number_of_translations_is_refused():
    document = html.read(b"<p>Hello</p><p>World</p>")
    with pytest.raises(DocumentError):
        document.render([None], target="zh")
    with pytest.raises(DocumentError):
        document.render([["a", "b"], None], target="zh")


def test_registry_knows_the_format(tmp_path):
    for name in ("page.html", "page.HTM", "book.xhtml"):
        assert registry.for_path(tmp_path / name).name == "html"


def test_broken_character_references_do_not_turn_markup_into_text():
    # html.parser stops at a `&#` that is no reference; fed carelessly, what follows a second one comes back as text.
    data = b"<p>AT&#T and <b>bold</b>; &#x;</p><p>World <b>peace</b></p><p>Good morning, everyone!</p>"
    document = html.read(data)
    assert sources(document)[-2:] == ["World peace", "Good morning, everyone!"]
    out = document.render(made_up(document), target="zh").decode()
    assert markup(out) == markup(data.decode())
    assert "<p>«WORLD»&lt;&amp;&gt;<b>«PEACE»&lt;&amp;&gt;</b></p>" in out


def test_unfinished_markup_at_the_end_is_left_alone():
    data = b"<p>Hello</p><!-- never closed <p>Thank you very much.</p>"
    document = html.read(data)
    assert sources(document) == ["Hello"]
    data = b'<p>Hello</p><a href="x'
    assert sources(html.read(data)) == ["Hello"]


def test_malformed_tag_is_left_alone_and_the_rest_read():
    data = b"<p>Hello <a b='c' ^> there</p><p>Thank you very much.</p>"
    document = html.read(data)
    assert sources(document) == ["Hello  there", "Thank you very much."]
    out = document.render(made_up(document), target="zh")
    assert b"<a b='c' ^>" in out


_RANDOM_TAGS = ["p", "div", "b", "i", "a", "span", "code", "pre", "li", "td", "h1", "em", "script", "style", "textarea"]


def _random_page(rng: random.Random, depth: int = 0) -> str:
    out = []
    for _ in range(rng.randint(0, 5)):
        roll = rng.random()
        if roll < 0.35 or depth > 5:
            texts = [
                "Hello",
                "world",
                " ",
                "\n  ",
                "tea &amp; cake",
                "a &lt; b",
                "&#169; 2024",
                "&copy;",
                "café",
                "世界",
            ]
            out.append(rng.choice(texts))
        elif roll < 0.45:
            out.append(rng.choice(['<img src="a.png" alt="A cup">', "<br>", "<!-- note -->", "<input placeholder=Hi>"]))
        else:
            tag = rng.choice(_RANDOM_TAGS)
            attrs = rng.choice(["", ' class="x"', ' title="Tip &amp; trick"', ' translate="no"', " class=notranslate"])
            inner = "var a = 1 < 2;" if tag in ("script", "style") else _random_page(rng, depth + 1)
            out.append(f"<{tag}{attrs}>{inner}</{tag}>")
    return "".join(out)


@pytest.mark.parametrize("seed", range(150))
def test_random_pages_keep_their_markup(seed):
    page = '<!DOCTYPE html><html lang="en"><head><title>T</title></head><body>' + _random_page(random.Random(seed))
    data = (page + "</body></html>").encode()
    document = html.read(data)
    assert document.render([None] * len(document.units), target="zh") == data
    out = document.render(made_up(document), target="zh").decode()
    assert markup(out) == markup(data.decode())


# -- fuzz: never a traceback ------------------------------------------------------------------------------------


def _survives(data: bytes) -> None:
    """Reading gives a DocumentError or a page that renders (made-up translations) into one that still parses."""
    try:
        document = html.read(data)
    except DocumentError:
        return
    out = document.render(made_up(document), target="zh")
    assert isinstance(out, bytes)
    assert document.render([None] * len(document.units), target="zh") == data


@pytest.mark.parametrize("seed", range(40))
def test_fuzz_random_bytes(seed):
    rng = random.Random(seed)
    _survives(bytes(rng.randrange(256) for _ in range(rng.randint(0, 400))))


@pytest.mark.parametrize("seed", range(40))
def test_fuzz_random_markup(seed):
    rng = random.Random(seed)
    pieces = "<p> </p> <b> </b> < > & &amp &# &#x ; <!-- --> <![CDATA[ ]]> <script> </script> <pre> \" ' = <! <?"
    pieces += " <img/alt="
    pieces = [*pieces.split(), " ", "\n", "Hello", "世界", "/>"]
    _survives("".join(rng.choice(pieces) for _ in range(rng.randint(0, 200))).encode())


def test_fuzz_truncations():
    data = PAGE.encode()
    for end in range(0, len(data), 7):
        _survives(data[:end])


def test_deep_nesting():
    depth = 10_000
    data = ("<div><span>" * depth + "Hello" + "</span></div>" * depth).encode()
    document = html.read(data)
    assert sources(document) == ["Hello"]
    assert document.render([["你好"]], target="zh") == data.replace(b"Hello", "你好".encode())
    _survives(("<b>" * depth + "x" + "</i>" * depth).encode())  # never closed, thousands of stray end tags


# -- end to end with the tiny en→zh model -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def translator(bundle_dir):
    from engine.pipeline.translator import Translator

    return Translator(bundle_dir)


def test_end_to_end_with_the_tiny_model(translator):
    data = PAGE.encode()
    document = html.read(data)
    out = document.render(translate(document, translator), target="zh").decode()
    assert markup(out) == markup(PAGE)
    for known in ("大家早上好！", "非常感谢。", "你能帮我吗？", "今天在下雨。", "天气很好。"):
        assert known in out
    assert '<html lang="zh">' in out
    assert 'alt="我喜欢绿茶。"' in out
