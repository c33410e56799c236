"""`memeval publish`: notebook 07 from the command line — every figure and table from stored results."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

from memeval.commands.arguments import JSON, command
from memeval.safe_text import shown
from memeval.settings import add_config_arguments, flag


@dataclass
class PublishConfig:
    artifacts: str | None = flag("--artifacts", None, help="stored results (default: reports/artifacts)")
    figures: str | None = flag("--figures", None, help="where figures and tables go (default: figures/)")
    json: bool = flag(JSON, False, help="print the metrics as JSON")


def register(subparsers: argparse._SubParsersAction) -> None:
    pub = command(subparsers, "publish", "write every publication figure and table from stored results",
                  "memeval publish --artifacts reports/artifacts --figures figures")
    add_config_arguments(pub, PublishConfig)
    pub.set_defaults(handler=_publish)


def _publish(args: argparse.Namespace) -> int:
    from memeval.artifacts import artifacts_dir, artifacts_root, figures_dir
    from memeval.atomic import write_json_atomic
    from memeval.publication.publish import publication_metrics, publish_all

    root = artifacts_root(args.artifacts)
    results = publish_all(root, figures_dir(args.figures))
    metrics = publication_metrics(results, root)
    write_json_atomic(artifacts_dir("07_publication", root / "07_publication") / "metrics.json", metrics)
    if args.json:
        print(json.dumps(metrics, indent=2, sort_keys=True))
    else:
        for r in results:
            print(shown(f"{r.name:22} {r.status:13} {', '.join(r.paths) if r.paths else r.message}"))
        for key, read in metrics["configurations"].items():
            print(f"read {key}: {read['configuration']} ({read['directory']})")
    return 0
