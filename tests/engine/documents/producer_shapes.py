"""Documents in the shapes pandoc 2.17 and LibreOffice 7.4 write, built by hand so the tests need neither program.

Each shape copies what those programs wrote for the same Markdown (`pandoc t.md -o t.docx`, `soffice --convert-to
docx/odt/epub` of pandoc's HTML): their style names, style definitions and run structure (pandoc: every space its
own w:r, `<w:bCs /><w:b />` bold, "Source Code" paragraphs of *Tok runs; LibreOffice: `<w:rPr></w:rPr>` on plain
runs, "Preformatted Text" paragraphs and "Source Text" runs in a Menlo;Monaco;… font, CSS classes in its EPUB).
"""

from __future__ import annotations

import io
import zipfile

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
PIC = "http://schemas.openxmlformats.org/drawingml/2006/picture"

_DOCX_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    '<Override PartName="/word/styles.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>'
    "</Types>"
)
_DOCX_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="word/document.xml"/></Relationships>'
)
_DOCUMENT_RELS = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId20" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'hyperlink" Target="https://example.com/docs" TargetMode="External"/></Relationships>'
)

# pandoc's reference.docx styles that matter here (copied from pandoc 2.17's output).
PANDOC_STYLES = (
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal" /><w:qFormat /></w:style>'
    '<w:style w:type="paragraph" w:customStyle="1" w:styleId="FirstParagraph"><w:name w:val="First Paragraph" />'
    '<w:basedOn w:val="BodyText" /></w:style>'
    '<w:style w:customStyle="1" w:styleId="VerbatimChar" w:type="character"><w:name w:val="Verbatim Char" />'
    '<w:basedOn w:val="BodyTextChar" /><w:rPr><w:rFonts w:ascii="Consolas" w:hAnsi="Consolas" /><w:sz w:val="22" />'
    "</w:rPr></w:style>"
    '<w:style w:type="paragraph" w:customStyle="1" w:styleId="SourceCode"><w:name w:val="Source Code" />'
    '<w:basedOn w:val="Normal" /><w:link w:val="VerbatimChar" /><w:pPr><w:wordWrap w:val="off" /></w:pPr></w:style>'
    '<w:style w:type="character" w:customStyle="1" w:styleId="KeywordTok"><w:name w:val="KeywordTok" />'
    '<w:basedOn w:val="VerbatimChar" /><w:rPr><w:color w:val="007020" /><w:b /></w:rPr></w:style>'
    '<w:style w:type="character" w:customStyle="1" w:styleId="NormalTok"><w:name w:val="NormalTok" />'
    '<w:basedOn w:val="VerbatimChar" /><w:rPr /></w:style>'
    '<w:style w:type="character" w:customStyle="1" w:styleId="Hyperlink"><w:name w:val="Hyperlink" />'
    '<w:basedOn w:val="BodyTextChar" /><w:rPr><w:color w:val="4F81BD" /></w:rPr></w:style>'
)
# LibreOffice 7.4's, from its .docx export of a page with <pre> and <code>.
LIBREOFFICE_STYLES = (
    '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:qFormat/><w:rPr>'
    '<w:rFonts w:ascii="Liberation Serif" w:hAnsi="Liberation Serif"/></w:rPr></w:style>'
    '<w:style w:type="character" w:styleId="SourceText"><w:name w:val="Source Text"/><w:qFormat/><w:rPr>'
    '<w:rFonts w:ascii="Menlo;Monaco;Lucida Console;Consolas;monospace" '
    'w:hAnsi="Menlo;Monaco;Lucida Console;Consolas;monospace"/></w:rPr></w:style>'
    '<w:style w:type="paragraph" w:styleId="PreformattedText"><w:name w:val="Preformatted Text"/>'
    '<w:basedOn w:val="Normal"/><w:qFormat/><w:pPr><w:spacing w:before="0" w:after="0"/></w:pPr><w:rPr>'
    '<w:rFonts w:ascii="DejaVu Sans Mono" w:hAnsi="DejaVu Sans Mono"/><w:sz w:val="20"/></w:rPr></w:style>'
    '<w:style w:type="paragraph" w:styleId="TextBody"><w:name w:val="Body Text"/><w:basedOn w:val="Normal"/>'
    "</w:style>"
)


def pandoc_run(text: str, props: str = "") -> str:
    """One w:r as pandoc writes it (every text with xml:space="preserve")."""
    rpr = f"<w:rPr>{props}</w:rPr>" if props else ""
    return f'<w:r>{rpr}<w:t xml:space="preserve">{text}</w:t></w:r>'


def pandoc_words(text: str, props: str = "") -> str:
    """Words and the spaces between them, as pandoc writes them: each space a w:r of its own."""
    pieces = []
    for k, word in enumerate(text.split(" ")):
        if k:
            pieces.append(pandoc_run(" ", props))
        if word:
            pieces.append(pandoc_run(word, props))
    return "".join(pieces)


BOLD = "<w:bCs /><w:b />"
ITALIC = "<w:iCs /><w:i />"


def pandoc_paragraph(runs: str, style: str = "FirstParagraph") -> str:
    return f'<w:p><w:pPr><w:pStyle w:val="{style}" /></w:pPr>{runs}</w:p>'


def pandoc_link(text: str) -> str:
    return f'<w:hyperlink r:id="rId20">{pandoc_words(text, """<w:rStyle w:val="Hyperlink" />""")}</w:hyperlink>'


def pandoc_image(descr: str, title: str) -> str:
    """An inline picture as pandoc writes `![descr](cat.png "title")`: the alt text in wp:docPr, the file name in
    pic:cNvPr."""
    return (
        '<w:r><w:drawing><wp:inline><wp:extent cx="12700" cy="12700" />'
        f'<wp:docPr descr="{descr}" title="{title}" id="22" name="Picture" />'
        f'<a:graphic><a:graphicData uri="{PIC}"><pic:pic><pic:nvPicPr><pic:cNvPr descr="cat.png" id="23" '
        'name="Picture" /><pic:cNvPicPr /></pic:nvPicPr><pic:blipFill><a:blip r:embed="rId21" /></pic:blipFill>'
        "<pic:spPr /></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>"
    )


def make_docx(body: str, styles: str = PANDOC_STYLES) -> bytes:
    """A .docx whose body is `body` (w:p elements) and whose styles part holds `styles`."""
    document = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{W}" xmlns:r="{R}" xmlns:wp="{WP}" '
        f'xmlns:a="{A}" xmlns:pic="{PIC}"><w:body>{body}<w:sectPr /></w:body></w:document>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("[Content_Types].xml", _DOCX_TYPES)
        out.writestr("_rels/.rels", _DOCX_RELS)
        out.writestr("word/document.xml", document)
        out.writestr("word/_rels/document.xml.rels", _DOCUMENT_RELS)
        out.writestr(
            "word/styles.xml", f'<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="{W}">{styles}</w:styles>'
        )
    return buffer.getvalue()


ODF_NS = (
    'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
    'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
    'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
    'xmlns:xlink="http://www.w3.org/1999/xlink" office:version="1.3"'
)
# pandoc 2.17's styles.xml for code (its .odt reference): Courier New, a fixed-pitch font-face.
PANDOC_ODF_STYLES = (
    '<office:font-face-decls><style:font-face style:name="Courier New" svg:font-family="&apos;Courier New&apos;" '
    'style:font-family-generic="modern" style:font-pitch="fixed" /></office:font-face-decls><office:styles>'
    '<style:style style:name="Standard" style:family="paragraph" style:class="text" />'
    '<style:style style:name="Preformatted_20_Text" style:display-name="Preformatted Text" style:family="paragraph" '
    'style:parent-style-name="Standard" style:class="html"><style:text-properties style:font-name="Courier New" '
    'fo:font-size="10pt" /></style:style>'
    '<style:style style:name="Source_Text" style:family="text"><style:text-properties style:font-name="Courier New" '
    'fo:font-size="10pt" /></style:style></office:styles>'
)
PANDOC_ODF_AUTOMATIC = (
    '<style:style style:name="T1" style:family="text"><style:text-properties fo:font-weight="bold" /></style:style>'
    '<style:style style:name="T2" style:family="text"><style:text-properties fo:font-style="italic" /></style:style>'
    '<style:style style:name="P1" style:family="paragraph" style:parent-style-name="Preformatted_20_Text" />'
)


def make_odt(body: str, automatic: str = PANDOC_ODF_AUTOMATIC, styles: str = PANDOC_ODF_STYLES) -> bytes:
    """An .odt whose office:text holds `body`, with `automatic` styles in content.xml and `styles` in styles.xml."""
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS}><office:automatic-styles>'
        f"{automatic}</office:automatic-styles><office:body><office:text>{body}</office:text></office:body>"
        "</office:document-content>"
    )
    styles_xml = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-styles {ODF_NS}>{styles}</office:document-styles>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(zipfile.ZipInfo("mimetype"), "application/vnd.oasis.opendocument.text")
        out.writestr("content.xml", content)
        out.writestr("styles.xml", styles_xml)
        out.writestr(
            "META-INF/manifest.xml",
            '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest '
            'xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3">'
            '<manifest:file-entry manifest:full-path="/" '
            'manifest:media-type="application/vnd.oasis.opendocument.text"/>'
            '<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/>'
            '<manifest:file-entry manifest:full-path="styles.xml" manifest:media-type="text/xml"/>'
            "</manifest:manifest>",
        )
    return buffer.getvalue()
