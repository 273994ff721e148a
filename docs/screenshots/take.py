"""Take the README screenshots of the real app on a virtual X display, driving it as a user would.

    apt-get install -y xvfb xdotool imagemagick fonts-noto-cjk
    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    DISPLAY=:99 python docs/screenshots/take.py --model tests/fixtures/tiny_marian/bundle

Each shot starts `python -m gui.app` with a private settings folder, types English with xdotool, presses
Ctrl+Enter, waits for the translation and captures the window with ImageMagick's `import`. The tiny test model only
knows ~120 sentences, so the text below is made of those.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
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


def shot(name: str, model: str | None, theme: str, language: str, *, type_text: bool) -> Path:
    home = Path(tempfile.mkdtemp(prefix=f"qiao-shot-{name}-"))
    (home / "config").mkdir()
    (home / "config" / "qiao.ini").write_text(
        f"[interface]\ntheme={theme}\nlanguage={language}\n[editor]\nfont_size=14\n", encoding="utf-8"
    )
    env = dict(
        os.environ,
        QT_QPA_PLATFORM="xcb",
        QIAO_CONFIG_DIR=str(home / "config"),
        QIAO_STATE_DIR=str(home / "state"),
        XDG_DATA_HOME=str(home / "data"),
    )
    env.pop("QIAO_MODEL_DIR", None)
    cmd = [sys.executable, "-m", "gui.app"] + (["--model", model] if model else [])
    app = subprocess.Popen(cmd, cwd=ROOT, env=env)
    try:
        wid = sh("xdotool", "search", "--sync", "--onlyvisible", "--class", "qiao").split()[0]
        sh("xdotool", "windowsize", wid, "1100", "640")
        sh("xdotool", "windowfocus", "--sync", wid)
        time.sleep(2.0)  # model load
        if type_text:
            for i, line in enumerate(TEXT):
                if line:
                    sh("xdotool", "type", "--delay", "4", line)
                if i < len(TEXT) - 1:
                    sh("xdotool", "key", "Return")
            sh("xdotool", "key", "ctrl+Return")
            time.sleep(4.0)
        else:
            time.sleep(1.0)
        out = HERE / f"{name}.png"
        sh("import", "-window", wid, str(out))
        sh("xdotool", "key", "ctrl+q")
        app.wait(10)
        return out
    finally:
        if app.poll() is None:
            app.terminate()
            app.wait(10)
        shutil.rmtree(home, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    args = parser.parse_args()
    model = str(Path(args.model).resolve())
    for path in (
        shot("light", model, "light", "en", type_text=True),
        shot("dark", model, "dark", "zh_CN", type_text=True),
        shot("no-model", None, "light", "en", type_text=True),
    ):
        print(path, path.stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
