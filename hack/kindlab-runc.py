"""kindlab-runc: an OCI runtime for the lab's Docker engine that drops, before runc sees them,
the capabilities this machine cannot grant.

Why: Docker gives a `--privileged` container every capability it knows, whatever the
host's capability bounding set holds. On a machine whose bounding set lacks one of them
(CAP_SYS_RESOURCE on the development machines) runc then fails with "unable to apply
caps: operation not permitted". A capability outside the bounding set cannot be held by
any process here anyway, so removing it from the spec changes nothing else.

What: for `create` and `run` it edits the bundle's config.json, for `exec` the file named
by `--process`/`-p`; every capability whose bit is absent from this process's CapBnd
(/proc/self/status) is removed from the process's bounding, effective, inheritable,
permitted and ambient lists. Then it replaces itself with the real runc, with the
arguments unchanged. Every other call (state, start, kill, delete, features, ...) goes
straight to runc. If a file cannot be read or parsed it is left alone and runc decides.

hack/kind-engine.sh installs this file as /run/kindlab-docker/kindlab-runc, with a
`#!/usr/bin/python3` line in front (Debian's Python: the shim runs it with dockerd's PATH),
and registers it with `dockerd --add-runtime kindlab-caps=PATH --default-runtime
kindlab-caps`, only when the bounding set lacks CAP_SYS_RESOURCE. Standard library only.
The real runc is $KINDLAB_RUNC if set, else the first `runc` on PATH, else /usr/sbin/runc.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any

# Capability numbers from the Linux kernel's uapi header (linux/capability.h).
CAP_NUMBERS = {
    "CAP_CHOWN": 0, "CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3,
    "CAP_FSETID": 4, "CAP_KILL": 5, "CAP_SETGID": 6, "CAP_SETUID": 7, "CAP_SETPCAP": 8,
    "CAP_LINUX_IMMUTABLE": 9, "CAP_NET_BIND_SERVICE": 10, "CAP_NET_BROADCAST": 11,
    "CAP_NET_ADMIN": 12, "CAP_NET_RAW": 13, "CAP_IPC_LOCK": 14, "CAP_IPC_OWNER": 15,
    "CAP_SYS_MODULE": 16, "CAP_SYS_RAWIO": 17, "CAP_SYS_CHROOT": 18, "CAP_SYS_PTRACE": 19,
    "CAP_SYS_PACCT": 20, "CAP_SYS_ADMIN": 21, "CAP_SYS_BOOT": 22, "CAP_SYS_NICE": 23,
    "CAP_SYS_RESOURCE": 24, "CAP_SYS_TIME": 25, "CAP_SYS_TTY_CONFIG": 26, "CAP_MKNOD": 27,
    "CAP_LEASE": 28, "CAP_AUDIT_WRITE": 29, "CAP_AUDIT_CONTROL": 30, "CAP_SETFCAP": 31,
    "CAP_MAC_OVERRIDE": 32, "CAP_MAC_ADMIN": 33, "CAP_SYSLOG": 34, "CAP_WAKE_ALARM": 35,
    "CAP_BLOCK_SUSPEND": 36, "CAP_AUDIT_READ": 37, "CAP_PERFMON": 38, "CAP_BPF": 39,
    "CAP_CHECKPOINT_RESTORE": 40,
}
CAP_SETS = ("bounding", "effective", "inheritable", "permitted", "ambient")
# runc's global options that take a value (`--root DIR` as well as `--root=DIR`).
GLOBAL_OPTIONS_WITH_VALUE = {"--log", "--log-format", "--root", "--criu", "--rootless"}


def bounding_set() -> int:
    """This process's capability bounding set as a bit mask."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("CapBnd:"):
                return int(line.split()[1], 16)
    return -1  # unknown: treat every capability as available


def missing_capabilities(mask: int) -> set[str]:
    return {name for name, bit in CAP_NUMBERS.items() if not mask >> bit & 1}


def split_command(argv: list[str]) -> tuple[str | None, list[str]]:
    """Return runc's subcommand and the arguments after it."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if not arg.startswith("-"):
            return arg, argv[i + 1:]
        i += 2 if arg in GLOBAL_OPTIONS_WITH_VALUE else 1
    return None, []


def option_value(args: list[str], long: str, short: str) -> str | None:
    """The value of `--long V`, `--long=V`, `-s V` or `-s=V` among a subcommand's arguments."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        for flag in (long, short):
            if arg == flag and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith(flag + "="):
                return arg[len(flag) + 1:]
    return None


def drop_from_process(process: dict[str, Any], drop: set[str]) -> bool:
    """Remove the dropped capabilities from an OCI process object; True when it changed."""
    caps = process.get("capabilities")
    if not isinstance(caps, dict):
        return False
    changed = False
    for key in CAP_SETS:
        names = caps.get(key)
        if isinstance(names, list):
            kept = [name for name in names if name not in drop]
            if len(kept) != len(names):
                caps[key] = kept
                changed = True
    return changed


def rewrite(path: str, drop: set[str], whole_spec: bool) -> None:
    """Edit a config.json (whole_spec) or an exec process file in place, atomically."""
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except (OSError, ValueError):
        return
    process = doc.get("process") if whole_spec else doc
    if not isinstance(process, dict) or not drop_from_process(process, drop):
        return
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kindlab-runc.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(doc, handle)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def real_runc() -> str:
    return os.environ.get("KINDLAB_RUNC") or shutil.which("runc") or "/usr/sbin/runc"


def main(argv: list[str]) -> None:
    drop = missing_capabilities(bounding_set())
    command, args = split_command(argv[1:])
    if drop and command in ("create", "run"):
        bundle = option_value(args, "--bundle", "-b") or os.getcwd()
        rewrite(os.path.join(bundle, "config.json"), drop, whole_spec=True)
    elif drop and command == "exec":
        process_file = option_value(args, "--process", "-p")
        if process_file:
            rewrite(process_file, drop, whole_spec=False)
    runc = real_runc()
    os.execv(runc, [runc, *argv[1:]])


if __name__ == "__main__":
    main(sys.argv)
