"""A small PNG reader for tests: 8-bit truecolour (RGB/RGBA) or grey, not interlaced, which is
what Chromium's screenshots are. Enough to look at the pixels of a rendered page."""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel


@dataclass
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        """The RGB of one pixel (grey repeated; alpha dropped)."""
        row = self.rows[y]
        start = x * self.channels
        if self.channels <= 2:
            return (row[start],) * 3
        return row[start], row[start + 1], row[start + 2]


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def size(data: bytes) -> tuple[int, int]:
    """(width, height) from the header alone."""
    if not data.startswith(_SIGNATURE) or data[12:16] != b"IHDR":
        raise ValueError("not a PNG file")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def read(data: bytes) -> Image:
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG file")
    pos = len(_SIGNATURE)
    header = b""
    idat = bytearray()
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    width, height, depth, colour, _compression, _filter, interlace = struct.unpack(">IIBBBBB", header)
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d" % (depth, colour, interlace))
    channels = _CHANNELS[colour]
    stride = width * channels
    raw = zlib.decompress(bytes(idat))
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            upleft = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, upleft)) & 0xFF
            elif kind != 0:
                raise ValueError("bad PNG filter type %d in row %d" % (kind, y))
        rows.append(bytes(line))
        previous = line
    return Image(width, height, channels, rows)
