"""_time: one format for every time the results write, one reader for the times they read."""
from __future__ import annotations

import datetime as dt

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso, parse_time

UTC = dt.timezone.utc


def test_iso_writes_utc_with_milliseconds_and_a_z() -> None:
    when = dt.datetime(2024, 7, 8, 19, 29, 48, 123456, tzinfo=UTC)
    assert iso(when) == "2024-07-08T19:29:48.123Z"
    assert iso(when.astimezone(dt.timezone(dt.timedelta(hours=2)))) == "2024-07-08T19:29:48.123Z"
    assert iso(when.timestamp()) == "2024-07-08T19:29:48.123Z"


@pytest.mark.parametrize("text, expected", [
    ("2024-07-08T19:29:48Z", dt.datetime(2024, 7, 8, 19, 29, 48, tzinfo=UTC)),
    ("2024-07-08T19:29:48.123Z", dt.datetime(2024, 7, 8, 19, 29, 48, 123000, tzinfo=UTC)),
    ("2024-07-08T21:29:48+02:00", dt.datetime(2024, 7, 8, 19, 29, 48, tzinfo=UTC)),
    ("2024-07-08T19:29:48", dt.datetime(2024, 7, 8, 19, 29, 48, tzinfo=UTC)),  # naive: UTC
])
def test_parse_time_reads_z_offsets_and_naive_times(text: str, expected: dt.datetime) -> None:
    assert parse_time(text) == expected


@pytest.mark.parametrize("value", [None, "", "yesterday", 17, "None"])
def test_parse_time_gives_none_for_what_is_not_a_time(value: object) -> None:
    assert parse_time(value) is None


def test_a_written_time_reads_back() -> None:
    when = dt.datetime(2026, 11, 26, 14, 0, 0, 250000, tzinfo=UTC)
    assert parse_time(iso(when)) == when
