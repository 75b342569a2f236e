from __future__ import annotations

from pathlib import Path

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.kubeconfig import kubeconfig_path_for_merge, kubeconfig_paths


def test_explicit_path_wins_and_is_alone() -> None:
    env = {"KUBECONFIG": "/a:/b", "HOME": "/h"}
    assert kubeconfig_paths("/x/config", env) == ["/x/config"]
    assert kubeconfig_path_for_merge("/x/config", env, is_file=lambda p: False) == "/x/config"


def test_kubeconfig_entries_drop_empty_and_repeated() -> None:
    assert kubeconfig_paths(None, {"KUBECONFIG": ":/a::/b:/a:", "HOME": "/h"}) == ["/a", "/b"]
    assert kubeconfig_paths(None, {"KUBECONFIG": "", "HOME": "/h"}) == ["/h/.kube/config"]
    assert kubeconfig_paths(None, {"HOME": "/h"}) == ["/h/.kube/config"]


def test_first_existing_entry_is_merged_into(tmp_path: Path) -> None:
    a, b, c = (str(tmp_path / n) for n in "abc")
    Path(b).write_text("")
    Path(c).write_text("")
    assert kubeconfig_path_for_merge(None, {"KUBECONFIG": "%s:%s:%s" % (a, b, c)}) == b


def test_a_directory_is_not_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    b = tmp_path / "b"
    b.write_text("")
    assert kubeconfig_path_for_merge(None, {"KUBECONFIG": "%s:%s" % (tmp_path / "a", b)}) == str(b)


def test_none_existing_gives_the_last_entry() -> None:
    assert kubeconfig_path_for_merge(None, {"KUBECONFIG": "/a:/b:/c"}, is_file=lambda p: False) == "/c"


def test_a_single_entry_is_used_even_when_missing() -> None:
    assert kubeconfig_path_for_merge(None, {"KUBECONFIG": "/only"}, is_file=lambda p: False) == "/only"
    assert kubeconfig_path_for_merge(None, {"HOME": "/h"}, is_file=lambda p: False) == "/h/.kube/config"
