"""`skillopt envs` and `skillopt data materialize`: which environments exist, whether their
data is present, and turning a local copy of a public dataset into our data directory.
Heavy modules are imported inside the commands."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError
from skillopt_tui.cli.output import emit_json


class DataUsageError(UserError):
    """Bad command-line input for `skillopt data`."""


def envs(
    as_json: Annotated[bool, typer.Option("--json", help="Print the table as JSON.")] = False,
) -> None:
    """List environments: interaction, data present, split sizes, what each needs."""
    from envs.listing import list_environments

    rows = list_environments()
    if as_json:
        emit_json([r.to_dict() for r in rows])
        return
    for r in rows:
        sizes = "/".join(str(r.sizes[s]) for s in ("train", "val", "test")) if r.sizes else "?"
        data = "data ok" if r.data else "no data"
        needs = f"  needs: {', '.join(r.needs)}" if r.needs else ""
        typer.echo(f"{r.name:<17} {data:<8} {sizes:<13} {r.interaction}{needs}")
        if not r.data and r.problem:
            typer.echo(f"{'':<17} {r.problem}")


data_app = typer.Typer(help="Materialise benchmark data from a local copy of the public dataset.")


@data_app.command("materialize")
def materialize(
    env: Annotated[str, typer.Argument(help="Environment name (see `skillopt envs`).")],
    source: Annotated[
        Path | None,
        typer.Option("--source", help="Your local copy of the dataset, as its publishers ship it."),
    ] = None,
    download: Annotated[
        bool,
        typer.Option("--download", help="Fetch the public dataset with the `datasets` library."),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Data directory to write (default: $SKILLOPT_DATA/<env>)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Write <out>/{train,val,test}/items.json from --source, checked against the manifest."""
    from envs import manifest_dir_of, spec_of
    from envs.split_data import default_data_dir

    spec = spec_of(env)
    if spec.materializer is None:
        raise DataUsageError(
            f"{env}: its data ships with the project (or is generated); nothing to materialise"
        )
    if (source is None) == (not download):
        raise DataUsageError("give exactly one of --source PATH or --download")
    module_name, function = spec.materializer.split(":")
    run = getattr(importlib.import_module(module_name), function)
    report = run(source, out or default_data_dir(env), manifest_dir_of(env), download=download)
    if as_json:
        emit_json(report.to_dict())
    else:
        typer.echo(report.summary())


def register(app: typer.Typer) -> None:
    app.command("envs")(envs)
    app.add_typer(data_app, name="data")
