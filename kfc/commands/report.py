"""`kfc report`: the HTML report of a run."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from conformance.report import ReportError, build_report


@click.command("report")
@click.argument("directory", required=False, default="reports/latest",
                type=click.Path(file_okay=False, path_type=Path))
def report_command(directory: Path) -> None:
    """Turn DIRECTORY/allure-results (from `kfc check --report DIRECTORY`) into DIRECTORY/html/index.html.

    DIRECTORY defaults to reports/latest.  The first run installs the Allure CLI pinned in the package
    (conformance/allure/package.json) with `npm ci` into the per-user cache (KFC_CACHE_DIR, else the
    platform's cache directory; needs Node.js >= 20 and npm); the report is one self-contained HTML
    file without analytics, grouped by KIP, area and rule under "Behaviors".
    """
    try:
        index = build_report(directory / "allure-results", directory / "html",
                             log=lambda text: click.echo(text, err=True, nl=False))
    except ReportError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    click.echo(str(index))
