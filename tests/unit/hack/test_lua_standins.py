"""The ingress-nginx image's Lua stand-ins (round robin, hash, their shared node table) under
LuaJIT, as ingress-nginx's balancer calls them (new, find, reinit, .nodes). On kind they serve
every request of make test-kind; this checks them without a cluster where LuaJIT is installed."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
LUA_DIR = ROOT / "hack" / "kind-images" / "ingress-nginx" / "lua"
LUAJIT = shutil.which("luajit")


@pytest.mark.skipif(LUAJIT is None, reason="NOT TESTED here: no luajit (Debian's luajit package); make test-kind runs them")
def test_the_balancer_stand_ins_behave_as_ingress_nginx_uses_them() -> None:
    script = Path(__file__).parent / "lua" / "standins_test.lua"
    res = subprocess.run([str(LUAJIT), str(script)], cwd=LUA_DIR, capture_output=True, text=True, timeout=30, check=False)
    assert res.returncode == 0 and "lua stand-ins ok" in res.stdout, res.stderr
