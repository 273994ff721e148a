"""The frozen app switches onnxruntime's telemetry off before its own code runs (runtime hook + launcher), and the
strace audit that proves it offline (packaging/offline_trace.py) reads traces and HOME folders correctly."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from offline_trace import OPTED_IN, QIAO_HOME_DIRS, fresh_home_env, network_calls, stray_files

from engine import paths
from engine.privacy import TELEMETRY_OFF

from .conftest import ROOT, SCRIPTS

# Runs a packaging script as the frozen app would run it first, then reports the switches and what got loaded.
LOAD = """
import os, runpy, sys
sys.path.insert(0, {root!r})
runpy.run_path({path!r}, run_name="not_main")
print(sorted((k, os.environ.get(k)) for k in {keys!r}))
print("onnxruntime" in sys.modules)
"""


@pytest.mark.parametrize("script", ["pyi_rth_qiao_privacy.py", "qiao_launcher.py"])
def test_frozen_entry_switches_telemetry_off_before_onnxruntime(tmp_path, script):
    code = LOAD.format(root=str(ROOT), path=str(SCRIPTS / script), keys=sorted(TELEMETRY_OFF))
    env = {**os.environ, **OPTED_IN}  # a user's "0" does not win
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    switches, ort_loaded = proc.stdout.strip().splitlines()
    assert switches == repr(sorted(TELEMETRY_OFF.items()))
    assert ort_loaded == "False"


def test_spec_installs_the_runtime_hook():
    spec = (SCRIPTS / "qiao.spec").read_text(encoding="utf-8")
    assert 'runtime_hooks=[str(ROOT / "packaging" / "pyi_rth_qiao_privacy.py")]' in spec


def test_the_watch_opts_in_to_every_switch_qiao_turns_off():
    assert set(OPTED_IN) == set(TELEMETRY_OFF) and set(OPTED_IN.values()) == {"0"}


TRACE = """\
101 socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC, 0) = 3
101 connect(3, {sa_family=AF_UNIX, sun_path="/tmp/.X11-unix/X91"}, 20) = 0
102 socket(AF_NETLINK, SOCK_RAW|SOCK_CLOEXEC, NETLINK_ROUTE) = 4
103 socket(AF_INET6, SOCK_DGRAM, IPPROTO_IP) = 8
104 socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC|SOCK_NONBLOCK, IPPROTO_IP <unfinished ...>
105 connect(9, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16) = 0
106 sendto(5, "x", 1, 0, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=0}, 28) = 1
107 sendto(3, "\\1\\0", 2, MSG_NOSIGNAL, NULL, 0) = 2
"""


def test_network_calls_are_inet_sockets_and_addresses_only():
    found = network_calls(TRACE)
    assert [line.split()[0] for line in found] == ["103", "104", "105", "106"]  # Unix, netlink and NULL are local


def test_stray_files_are_everything_outside_qiaos_folders(tmp_path):
    for rel in (".config/Qiao/qiao.ini", ".cache/Qiao/verified-files.json", ".local/state/Qiao/source.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert stray_files(tmp_path) == []  # Qiao's own files and the folders above them are fine
    (tmp_path / ".cache/Microsoft/DeveloperTools/.onnxruntime").mkdir(parents=True)
    (tmp_path / ".cache/Microsoft/DeveloperTools/.onnxruntime/deviceid").write_text("x")
    (tmp_path / ".config/QiaoEvil").mkdir()  # a prefix of an allowed name is not inside it
    (tmp_path / ":memory:.ses").write_text("x")
    assert stray_files(tmp_path) == [
        ".cache/Microsoft/",
        ".cache/Microsoft/DeveloperTools/",
        ".cache/Microsoft/DeveloperTools/.onnxruntime/",
        ".cache/Microsoft/DeveloperTools/.onnxruntime/deviceid",
        ".config/QiaoEvil/",
        ":memory:.ses",
    ]


def test_fresh_home_env_moves_every_per_user_folder_into_home(tmp_path):
    base = {"HOME": "/root", "XDG_CACHE_HOME": "/c", "XDG_CONFIG_HOME": "/x", "QIAO_CACHE_DIR": "/q", "PATH": "/bin"}
    assert fresh_home_env(base, tmp_path) == {"HOME": str(tmp_path), "PATH": "/bin"}
    assert all(not Path(d).is_absolute() for d in QIAO_HOME_DIRS)


def test_the_audit_knows_engine_paths_folders_and_overrides(tmp_path, monkeypatch):
    """offline_trace spells Qiao's folders and their overrides out (it must not import engine): they match."""
    monkeypatch.setenv("HOME", str(tmp_path))
    xdg = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME")
    for var in (*xdg, *(v.name for v in paths.ENV_VARS)):
        monkeypatch.delenv(var, raising=False)
    if sys.platform.startswith("linux"):
        folders = (paths.config_dir(), paths.state_dir(), paths.cache_dir(), paths.data_dir())
        assert tuple(f.relative_to(tmp_path).as_posix() for f in folders) == QIAO_HOME_DIRS
    every = {v.name: "x" for v in paths.ENV_VARS}
    kept = set(fresh_home_env(every, tmp_path)) - {"HOME"}
    assert kept == set(every) - {v.name for v in paths.FOLDER_OVERRIDES}
