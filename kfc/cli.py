"""`kfc`: the click group.  Commands are attached from `kfc.commands`; errors are one line on stderr."""

from __future__ import annotations

from typing import Any

import click

from ._errors import run_one_line


class _OneLineErrors(click.Group):
    """Usage errors become one line on stderr and exit code 1, like every other kfc error."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        run_one_line(super(), *args, **kwargs)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kafka-feature-conformance", prog_name="kfc",
                      message="%(prog)s %(version)s (kafka-feature-conformance; `kfc doctor` shows the rest)")
def main() -> None:
    """kafka-feature-conformance: reference and conformance suite for Kafka feature versioning."""


def _attach() -> None:
    from .commands import check, cluster, doctor, generate, kafka, reference, replay, report, serve

    for command in reference.COMMANDS:
        main.add_command(command)
    for command in (check.check_command, check.replay_trace_command, check.mutants_cli, report.report_command,
                    generate.generate_command, replay.replay_command, serve.serve_broker_command,
                    doctor.doctor_command, kafka.kafka_group, cluster.cluster_group):
        main.add_command(command)

    @main.group("target")
    def target_group() -> None:
        """Targets: expose one over the JSON-lines protocol."""

    target_group.add_command(serve.serve_command, "serve")


_attach()
