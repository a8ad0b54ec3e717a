"""Config loading: inheritance, overrides and every kind of bad input."""

import re
from pathlib import Path

import pytest

from core.config import Config, ConfigError, load_config, parse_override

REPO = Path(__file__).resolve().parents[2]
BASE = REPO / "configs" / "_base_" / "default.yaml"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_base_file_matches_model_defaults():
    # The YAML is what users read, the models what the engine trusts: they must agree.
    assert load_config(BASE) == Config()


def test_every_shipped_config_loads():
    paths = sorted((REPO / "configs").glob("*.yaml"))
    assert len(paths) >= 2
    for path in paths:
        assert isinstance(load_config(path), Config)


def test_inheritance_chain_and_override_order(tmp_path):
    write(tmp_path / "a.yaml", "train:\n  epochs: 5\n  batch_size: 10\n")
    write(tmp_path / "b.yaml", "_base_: a.yaml\ntrain:\n  batch_size: 12\n")
    cfg = load_config(write(tmp_path / "c.yaml", "_base_: [b.yaml]\nrun:\n  seed: 7\n"))
    assert (cfg.train.epochs, cfg.train.batch_size, cfg.run.seed) == (5, 12, 7)
    cfg = load_config(tmp_path / "c.yaml", ["train.batch_size=3", "train.schedule.kind=linear"])
    assert cfg.train.batch_size == 3 and cfg.train.schedule.kind == "linear"


def test_nested_sections_merge_instead_of_replacing(tmp_path):
    write(tmp_path / "a.yaml", "models:\n  target:\n    temperature: 0.7\n    max_tokens: 99\n")
    cfg = load_config(
        write(tmp_path / "b.yaml", "_base_: a.yaml\nmodels:\n  target:\n    max_tokens: 5\n")
    )
    assert cfg.models.target.temperature == 0.7 and cfg.models.target.max_tokens == 5


def test_an_empty_section_inherits_instead_of_replacing(tmp_path):
    # `train: {}` (or a section whose keys were all commented out) says nothing: the base's
    # keys stay, at every depth.
    write(tmp_path / "a.yaml", "train:\n  epochs: 5\nmodels:\n  target:\n    max_tokens: 99\n")
    cfg = load_config(
        write(tmp_path / "b.yaml", "_base_: a.yaml\ntrain: {}\nmodels:\n  target: {}\n")
    )
    assert cfg.train.epochs == 5 and cfg.models.target.max_tokens == 99


def test_override_values_are_yaml_scalars():
    assert parse_override("train.epochs=3") == ("train.epochs", 3)
    assert parse_override("train.gate.early_decide=false") == ("train.gate.early_decide", False)
    assert parse_override("run.name=a=b") == ("run.name", "a=b")
    assert parse_override("budget.max_tokens=null") == ("budget.max_tokens", None)


@pytest.mark.parametrize(
    "yaml_text, expected",
    [
        (
            "train:\n  batch_sze: 8\n",
            "unknown key 'train.batch_sze'; did you mean 'train.batch_size'? "
            "(allowed: accumulation, batch_size",
        ),
        ("train:\n  schedule:\n    kind: exp\n", "'exp' is not allowed (allowed: 'constant'"),
        ("models:\n  target:\n    backend: gpt\n", "'gpt' is not allowed (allowed: 'auto'"),
        ("train:\n  gate:\n    metric: f1\n", "'f1' is not allowed"),
        ("train:\n  epochs: two\n", "train.epochs: Input should be a valid integer"),
        ("train:\n  epochs: 0\n", "train.epochs: Input should be greater than or equal to 1"),
        ("bogus: 1\n", "unknown key 'bogus'"),
    ],
)
def test_bad_values_name_key_file_and_allowed_values(tmp_path, yaml_text, expected):
    path = write(tmp_path / "bad.yaml", yaml_text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert expected in message
    assert str(path) in message
    assert "\n" not in message


def test_error_names_the_file_that_set_the_key(tmp_path):
    base = write(tmp_path / "base.yaml", "train:\n  strategy: genetic\n")
    write(tmp_path / "child.yaml", "_base_: base.yaml\nrun:\n  seed: 1\n")
    with pytest.raises(ConfigError, match=str(base)):
        load_config(tmp_path / "child.yaml")


def test_an_unknown_key_that_exists_at_another_level_is_suggested():
    """The strong-model run's `--set models.optimizer.handoff_dir=...`: the key is
    `models.handoff_dir` (fails on the old code: the message listed only the role's keys)."""
    with pytest.raises(ConfigError) as err:
        load_config(BASE, ["models.optimizer.handoff_dir=/tmp/h"])
    message = str(err.value)
    assert message.startswith(
        "--set models.optimizer.handoff_dir: unknown key 'models.optimizer.handoff_dir'; "
        "did you mean 'models.handoff_dir'? (allowed: "
    )
    assert "\n" not in message
    with pytest.raises(ConfigError) as far:
        load_config(BASE, ["budget.nothing_like_it=1"])
    assert "did you mean" not in str(far.value)  # no guess when nothing is close


def test_override_errors_name_the_override():
    with pytest.raises(ConfigError, match=r"--set train.nope.*unknown key"):
        load_config(BASE, ["train.nope=1"])
    with pytest.raises(ConfigError, match="expected section.key=value"):
        load_config(BASE, ["train.epochs"])


@pytest.mark.parametrize(
    "text, expected",
    [
        ("train: [unclosed\n", "malformed YAML"),
        ("- a\n- b\n", "a config must be a mapping"),
        ("_base_: 3\n", "_base_ must be a file name"),
    ],
)
def test_malformed_files(tmp_path, text, expected):
    with pytest.raises(ConfigError, match=expected):
        load_config(write(tmp_path / "x.yaml", text))


def test_missing_file_and_missing_base(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "absent.yaml")
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(write(tmp_path / "x.yaml", "_base_: nowhere.yaml\n"))


def test_inheritance_loop_is_an_error(tmp_path):
    write(tmp_path / "a.yaml", "_base_: b.yaml\n")
    write(tmp_path / "b.yaml", "_base_: a.yaml\n")
    with pytest.raises(ConfigError, match="inheritance loops"):
        load_config(tmp_path / "a.yaml")


def test_public_dict_holds_variable_names_not_secrets(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-value-123")
    cfg = load_config(write(tmp_path / "x.yaml", "models:\n  target:\n    api_key_env: MY_KEY\n"))
    dumped = str(cfg.to_public_dict())
    assert "MY_KEY" in dumped and "sk-secret-value-123" not in dumped


def test_partial_role_section_keeps_that_roles_defaults(tmp_path):
    cfg = load_config(write(tmp_path / "x.yaml", "models:\n  optimizer:\n    backend: openai\n"))
    assert cfg.models.optimizer.max_tokens == Config().models.optimizer.max_tokens == 2048
    assert cfg.models.target.max_tokens == 16_384  # the published target default


def test_non_utf8_config_is_a_one_line_error(tmp_path):
    path = tmp_path / "latin1.yaml"
    path.write_bytes("run:\n  name: caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)


@pytest.mark.parametrize(
    "url, expected",
    [
        ("127.0.0.1:8000/v1", "is not an http(s) URL"),
        ("http://127.0.0.1:99999/v1", "port out of range"),
        ("http://user:sk-secret@host:99999/v1", "port out of range"),
        ("http://user:sk-secret@host/v1", "must not carry credentials"),
        ("http://host/v1?api-key=sk-secret", "must not carry credentials"),
    ],
)
def test_bad_base_urls_are_refused_before_any_call(url, expected):
    with pytest.raises(ConfigError, match=re.escape(expected)) as err:
        load_config(BASE, [f"models.target.base_url={url}"])
    assert "sk-secret" not in str(err.value)


def test_good_base_url_is_kept():
    cfg = load_config(BASE, ["models.target.base_url=http://127.0.0.1:8000/v1"])
    assert cfg.models.target.base_url == "http://127.0.0.1:8000/v1"


def test_duplicate_keys_are_an_error_naming_both_lines(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("train:\n  epochs: 5\nrun:\n  seed: 1\ntrain:\n  batch_size: 2\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert str(path) in message and "duplicate key 'train'" in message
    assert "lines 1 and 5" in message and "\n" not in message


def test_duplicate_nested_keys_are_an_error_too(tmp_path):
    path = tmp_path / "dup.yaml"
    path.write_text("train:\n  epochs: 5\n  epochs: 6\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'epochs' .*lines 2 and 3"):
        load_config(path)
