"""`skillopt data materialize alfworld --source $ALFWORLD_DATA`: checks that every game file
the published path manifest names exists under the data root (a regular file, not a link
out of it) and writes the split items
with absolute game-file paths (the games themselves stay where `alfworld-download` put
them)."""

from __future__ import annotations

from pathlib import Path

from core.atomic import write_json
from core.environment.contract import SPLITS, EnvError
from core.install_hint import install_extra
from envs.materialize import MaterializeReport, materialize_into
from envs.source_root import SourceRoot
from envs.split_data import ITEMS_FILE, read_items_file


def materialize(
    source: Path | None, out: Path, manifest_dir: Path, *, download: bool = False
) -> MaterializeReport:
    if download or source is None:
        raise EnvError(
            f"alfworld: run `{install_extra('alfworld')} && alfworld-download`, "
            "then pass --source $ALFWORLD_DATA"
        )
    root = SourceRoot(Path(source))
    splits, missing = {}, []
    for split in SPLITS:
        entries = read_items_file(Path(manifest_dir) / split / ITEMS_FILE)
        items = []
        for entry in entries:
            try:
                game = root.resolve(entry.get("gamefile"), f"alfworld manifest {entry['id']!r}")
            except EnvError:
                missing.append(str(entry.get("gamefile")))
                continue
            items.append({**entry, "gamefile": str(game)})
        splits[split] = items
    if missing:
        raise EnvError(
            f"alfworld: {len(missing)} game file(s) of the manifest are not under {root.root}, "
            f"e.g. {missing[0]}; nothing was written (is it the json_2.1.1 data root?)"
        )

    def build(stage: Path) -> MaterializeReport:
        for split, items in splits.items():
            write_json(stage / split / ITEMS_FILE, items)
        return MaterializeReport(
            env="alfworld", out=stage, counts={s: len(i) for s, i in splits.items()}
        )

    return materialize_into(out, source, build)
