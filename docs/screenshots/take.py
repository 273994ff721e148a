"""Take the README screenshots of the real app on a virtual X display, driving it as a user would.

    apt-get install -y xvfb xdotool imagemagick fonts-noto-cjk
    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    openbox &   # a window manager: focus and shortcuts behave as on a desktop
    DISPLAY=:99 python docs/screenshots/take.py --model tests/fixtures/tiny_marian/bundle \
        --reverse tests/fixtures/tiny_marian_zh_en/bundle

Each shot starts `python -m gui.app` with a private settings folder, types English with xdotool, presses
Ctrl+Enter, waits for the translation and captures the window with ImageMagick's `import`. The tiny test models only
know ~120 sentences, so the text below is made of those. The direction shots install both bundles in a private
models folder (QIAO_DATA_DIR), translate English, press Ctrl+Shift+S (swap: the Chinese becomes the source) and
capture the window right after the swap, then type Chinese and capture its English translation.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# Typed after the swap: Chinese the zh→en fixture knows, new to this window.
CHINESE = ["现在几点了？我需要买一些蔬菜。", "", "我忘记了密码。请把信息发给我。", "我们的航班延误了2个小时。"]
TEXT = [
    "Good morning, everyone! The weather is very nice. We are going to Beijing next week.",
    "",
    "This is my first time in China. I am learning Chinese.",
    "Where is the train station? Please speak more slowly.",
    "",
    "Thanks for your help, see you soon!",
]


def sh(*cmd: str) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip()


@contextlib.contextmanager
def running_app(name: str, ini: str, args: list[str], models: list[str] = ()) -> Iterator[str]:
    """`python -m gui.app` with a private home (settings `ini`, `models` installed side by side); yields its window
    id once the model has had time to load, and quits it (Ctrl+Q) or, failing that, terminates it."""
    home = Path(tempfile.mkdtemp(prefix=f"qiao-shot-{name}-"))
    for model in models:
        shutil.copytree(model, home / "data" / "models" / Path(model).parent.name)
    (home / "config").mkdir()
    (home / "config" / "qiao.ini").write_text(ini, encoding="utf-8")
    app = subprocess.Popen([sys.executable, "-m", "gui.app", *args], cwd=ROOT, env=_env(home))
    try:
        wid = _window()
        time.sleep(2.0)  # model load
        yield wid
        sh("xdotool", "key", "ctrl+q")
        app.wait(10)
    finally:
        if app.poll() is None:
            app.terminate()
            app.wait(10)
        shutil.rmtree(home, ignore_errors=True)


def direction_shots(models: list[str]) -> list[Path]:
    """en→zh, just after the swap, and zh→en: one app run with both bundles installed side by side."""
    ini = "[interface]\ntheme=light\nlanguage=en\n[editor]\nfont_size=14\n[engine]\ndirection=en-zh\n"
    shots = []
    with running_app("directions", ini, [], models) as wid:
        _type_source()
        sh("xdotool", "key", "ctrl+Return")
        time.sleep(4.0)
        shots.append(_grab(wid, "en-zh"))
        sh("xdotool", "key", "ctrl+shift+s")
        time.sleep(0.3)
        shots.append(_grab(wid, "swap"))
        time.sleep(2.0)
        sh("xdotool", "key", "ctrl+a")
        _type_source(CHINESE, delay_ms=80)  # xdotool remaps a spare key per CJK character: slower, or some are lost
        sh("xdotool", "key", "ctrl+Return")
        time.sleep(4.0)
        shots.append(_grab(wid, "zh-en"))
    return shots


def documents_shot(model: str) -> Path:
    """The Documents panel after two files were opened with File → Open document… (Ctrl+O, names typed into the
    file dialog) and translated."""
    docs = Path(tempfile.mkdtemp(prefix="qiao-shot-docs-"))
    (docs / "Travel notes.md").write_text("# Good morning, everyone!\n\n" + "\n".join(TEXT) + "\n", encoding="utf-8")
    (docs / "letter.txt").write_text("\n\n".join(line for line in TEXT * 40 if line) + "\n", encoding="utf-8")
    ini = "[interface]\ntheme=light\nlanguage=en\n[editor]\nfont_size=14\n"
    with running_app("documents", ini, ["--model", model]) as wid:
        _type_source(TEXT[:1])
        sh("xdotool", "key", "ctrl+Return")
        time.sleep(1.0)
        sh("xdotool", "key", "ctrl+o")
        time.sleep(1.5)
        sh("xdotool", "type", "--delay", "4", f'"{docs / "Travel notes.md"}" "{docs / "letter.txt"}"')
        sh("xdotool", "key", "Return")
        time.sleep(6.0)
        out = _grab(wid, "documents")
    shutil.rmtree(docs, ignore_errors=True)
    return out


def _env(home: Path) -> dict[str, str]:
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="xcb",
        QIAO_CONFIG_DIR=str(home / "config"),
        QIAO_STATE_DIR=str(home / "state"),
        QIAO_CACHE_DIR=str(home / "cache"),
        QIAO_DATA_DIR=str(home / "data"),
        XDG_DATA_HOME=str(home / "data"),
    )
    env.pop("QIAO_MODEL_DIR", None)
    return env


def _window() -> str:
    wid = sh("xdotool", "search", "--sync", "--onlyvisible", "--class", "qiao").split()[0]
    sh("xdotool", "windowsize", wid, "1100", "640")
    sh("xdotool", "windowfocus", "--sync", wid)
    return wid


def _type_source(lines: list[str] = TEXT, delay_ms: int = 4) -> None:
    for i, line in enumerate(lines):
        if line:
            sh("xdotool", "type", "--delay", str(delay_ms), line)
        if i < len(lines) - 1:
            sh("xdotool", "key", "Return")


def _grab(wid: str, name: str) -> Path:
    out = HERE / f"{name}.png"
    sh("import", "-window", wid, str(out))
    return out


def shot(name: str, model: str | None, theme: str, language: str, *, type_text: bool) -> Path:
    ini = f"[interface]\ntheme={theme}\nlanguage={language}\n[editor]\nfont_size=14\n"
    with running_app(name, ini, ["--model", model] if model else []) as wid:
        if type_text:
            _type_source()
            sh("xdotool", "key", "ctrl+Return")
            time.sleep(4.0)
        else:
            time.sleep(1.0)
        out = _grab(wid, name)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True, help="the en→zh bundle")
    parser.add_argument("--reverse", help="a zh→en bundle: also take the en-zh, swap and zh-en shots")
    parser.add_argument("--only-directions", action="store_true", help="take only the direction shots")
    parser.add_argument("--only-documents", action="store_true", help="take only the Documents panel shot")
    args = parser.parse_args()
    model = str(Path(args.model).resolve())
    paths: list[Path] = []
    if args.only_documents:
        paths.append(documents_shot(model))
    elif not args.only_directions:
        paths += [
            shot("light", model, "light", "en", type_text=True),
            shot("dark", model, "dark", "zh_CN", type_text=True),
            shot("no-model", None, "light", "en", type_text=True),
        ]
        paths.append(documents_shot(model))
    if args.reverse and not args.only_documents:
        paths += direction_shots([model, str(Path(args.reverse).resolve())])
    for path in paths:
        print(path, path.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
