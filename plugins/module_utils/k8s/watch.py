# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watch and list requests that end: their timeouts, and a watch response's lines as events."""
from __future__ import annotations

import json
from typing import Iterable, Iterator

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj

# A watch (or the list it starts from) connects within WATCH_CONNECT_TIMEOUT and waits for
# each next byte at most its server-side timeout plus WATCH_READ_SLACK: a server that answers
# sends at least the end of the stream by then, so a read timeout means the server stopped
# answering (a frozen kube-apiserver), not that nothing changed. Requests go through a
# connection pool without urllib3's retries (which would repeat each timeout three more times):
# the caller retries, within its own time.
WATCH_CONNECT_TIMEOUT = 5.0
WATCH_READ_SLACK = 5.0
# Server-side timeout of a watch opened without one, and the longest a list may take.
WATCH_DEFAULT_SECONDS = 300
LIST_READ_TIMEOUT = 30.0


def watch_lines(chunks: Iterable[bytes | str]) -> Iterator[str]:
    """The lines of a watch response (one JSON event each) from its chunks, which need not
    end at a line."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk.encode() if isinstance(chunk, str) else chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                yield line.decode("utf-8", errors="replace")
    if buffer.strip():
        yield buffer.decode("utf-8", errors="replace")


def parse_watch_line(line: str) -> tuple[str, Obj] | None:
    """One watch event line `{"type": .., "object": {..}}` as (type, object); None if it is not one."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or not event.get("type"):
        return None
    obj = event.get("object")
    return str(event["type"]), dict(obj) if isinstance(obj, dict) else {}
