"""The collection's controller types as the test machinery asks about them, so that no hack/
script names a type or repeats what the registry knows (plugins/module_utils/controllers/):

    python -m kindlab_twin.controller_types kind-only SCENARIO.yml
        exit 0, printing why, when the twin does not run the scenario: the types it does not emulate
        (ControllerType.on_twin), and lab_actions when it has timed actions (lab_definition refuses
        both on the twin); exit 1 when the twin runs it
    python -m kindlab_twin.controller_types offline-vars
        lab_images and lab_charts of every type for the offline kind lab (JSON): the images
        hack/kind-images.sh builds and the local charts (ControllerType.offline: its images and chart)
    python -m kindlab_twin.controller_types offline-chart TYPE
        the path of TYPE's local chart
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from kindlab_twin import binaries
from kindlab_twin.collection import registry

ROOT = Path(__file__).resolve().parents[2]
# What a scenario without lab_controllers runs (ansible-playbook -e @scenario over the default inventory).
DEFAULT_LAB = ROOT / "inventories" / "local" / "group_vars" / "all" / "lab.yml"


def lab_controllers(scenario: Path) -> list[dict[str, Any]]:
    """The scenario's lab_controllers, else the default inventory's."""
    for source in (scenario, DEFAULT_LAB):
        data = yaml.safe_load(source.read_text()) or {}
        if "lab_controllers" in data:
            return list(data["lab_controllers"] or [])
    return []


def kind_only(scenario: Path) -> list[str]:
    """Why the twin does not run the scenario: the types it does not emulate, and `lab_actions`
    when it has timed actions (lab_definition refuses them on the twin); [] when the twin runs it."""
    data = yaml.safe_load(scenario.read_text()) or {}
    return registry.off_twin(lab_controllers(scenario)) + (["lab_actions"] if data.get("lab_actions") else [])


def offline_chart(name: str) -> Path:
    offline = registry.controller_type(name).offline
    if offline is None:
        raise SystemExit("controller type %s has no offline part: the offline kind lab has no chart for it" % name)
    return binaries.cache_root() / offline.chart


def offline_vars() -> dict[str, Any]:
    """lab_images (each type's keys, the images built here) and lab_charts (each type's local chart),
    of the types with an offline part."""
    parts = [(name, registry.controller_type(name).offline) for name in registry.type_names()]
    return {"lab_images": {key: image for _name, o in parts if o is not None for key, image in o.images.items()},
            "lab_charts": {name: str(binaries.cache_root() / o.chart) for name, o in parts if o is not None}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kindlab_twin.controller_types", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    verbs = parser.add_subparsers(dest="verb", required=True)
    verbs.add_parser("kind-only").add_argument("scenario", type=Path)
    verbs.add_parser("offline-vars")
    verbs.add_parser("offline-chart").add_argument("type", choices=registry.type_names())
    args = parser.parse_args(argv)
    if args.verb == "kind-only":
        types = kind_only(args.scenario)
        if types:
            print(" ".join(types))
        return 0 if types else 1
    if args.verb == "offline-vars":
        print(json.dumps(offline_vars(), indent=2))
    else:
        print(offline_chart(args.type))
    return 0


if __name__ == "__main__":
    sys.exit(main())
