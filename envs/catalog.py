"""Every environment the tool knows: how to build it, what it needs, where its split
manifest lives and how its data is materialised. `skillopt envs` prints this table; the
registry (`envs.get_environment`) builds from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.install_hint import install_extra


@dataclass(frozen=True)
class EnvSpec:
    name: str
    factory: str  # "module:Class"; the class takes (manifest_dir, data_dir, options)
    interaction: str
    needs: tuple[str, ...] = ()  # what a run needs beyond a text chat model
    # What the target may be: "chat" (a model called by the environment), "agent" (a
    # coding-agent CLI doing the item in a workspace). With both, the target backend picks.
    targets: tuple[str, ...] = ("chat",)
    manifest_folder: str | None = None  # under manifests/; None = the env's name
    materializer: str | None = None  # "module:function"; None = the data ships with us
    source: str = ""  # where the public data comes from

    @property
    def manifests(self) -> str:
        return self.manifest_folder or self.name


SPECS: tuple[EnvSpec, ...] = (
    EnvSpec(
        "capitals",
        "envs.capitals.environment:CapitalsEnvironment",
        "one chat call; short answer",
        source="ours (shipped)",
    ),
    EnvSpec(
        "bigbench",
        "envs.bigbench.environment:BigBenchEnvironment",
        "one chat call; short answer",
        source="BIG-bench task files, Apache-2.0 (shipped slices)",
    ),
    EnvSpec(
        "repo_tasks",
        "envs.repo_tasks.environment:RepoTasksEnvironment",
        "coding agent in a tiny repository; checks run after",
        needs=("agent backend (claude_code or codex)",),
        targets=("agent",),
        source="ours (shipped)",
    ),
    EnvSpec(
        "searchqa",
        "envs.searchqa.environment:SearchQAEnvironment",
        "one chat call over supplied context; <answer> tag",
        manifest_folder="searchqa_id_split",
        materializer="envs.searchqa.materialize:materialize",
        source="lucadiliello/searchqa",
    ),
    EnvSpec(
        "livemath",
        "envs.livemath.environment:LiveMathEnvironment",
        "one chat call; multiple choice, seeded shuffle",
        manifest_folder="livemathematicianbench_id_split",
        materializer="envs.livemath.materialize:materialize",
        source="LiveMathematicianBench/LiveMathematicianBench",
    ),
    EnvSpec(
        "docvqa",
        "envs.docvqa.environment:DocVQAEnvironment",
        "one multimodal call with the page image",
        needs=("multimodal backend",),
        manifest_folder="docvqa_id_split",
        materializer="envs.docvqa.materialize:materialize",
        source="lmms-lab/DocVQA (validation)",
    ),
    EnvSpec(
        "officeqa",
        "envs.officeqa.environment:OfficeQAEnvironment",
        "tool loop (glob, read, grep) over the item's source files; or a coding agent "
        "with them in its workspace",
        needs=("optional exec target: claude_code / codex",),
        targets=("chat", "agent"),
        manifest_folder="officeqa_id_split",
        materializer="envs.officeqa.materialize:materialize",
        source="databricks/officeqa (gated)",
    ),
    EnvSpec(
        "spreadsheetbench",
        "envs.spreadsheetbench.environment:SpreadsheetBenchEnvironment",
        "code generation run in a bubblewrap jail, errors fed back; or a coding agent "
        "writing the output workbook in its workspace",
        needs=(
            "bubblewrap (or env.options.sandbox: audit-hook-only, weaker)",
            "openpyxl",
            "optional exec target: codex / claude_code (with bubblewrap + socat)",
        ),
        targets=("chat", "agent"),
        manifest_folder="spreadsheetbench_id_split",
        materializer="envs.spreadsheetbench.materialize:materialize",
        source="KAKA22/SpreadsheetBench (verified 400)",
    ),
    EnvSpec(
        "alfworld",
        "envs.alfworld.environment:ALFWorldEnvironment",
        "multi-step text-world episode; admissible actions",
        needs=("alfworld + $ALFWORLD_DATA game files",),
        manifest_folder="alfworld_path_split",
        materializer="envs.alfworld.materialize:materialize",
        source="alfworld/alfworld json_2.1.1 (alfworld-download)",
    ),
    EnvSpec(
        "reasoning_gym",
        "envs.reasoning_gym.environment:ReasoningGymEnvironment",
        "one chat call; <answer> tag; the generator's own scorer",
        needs=(f"reasoning-gym extra: {install_extra('reasoning-gym')}",),
        source="reasoning-gym 0.1.25 generators, Apache-2.0 (generated, seeded)",
    ),
)

BY_NAME = {spec.name: spec for spec in SPECS}
