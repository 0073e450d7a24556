"""Load a trainer config: YAML defaults + `a.b.c=value` overrides -> a validated pydantic object.

Override syntax follows Hydra: `key=value` sets a key, `+key=value` / `++key=value` add or force a key,
`~key` deletes one. Every mistake becomes a `UserError` naming the key and what is allowed.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TypeVar, get_args

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from pydantic import BaseModel, ValidationError

from verl.utils.errors import UserError

CONFIG_DIR = Path(__file__).parent
Schema = TypeVar("Schema", bound=BaseModel)


def load_config(schema: type[Schema], config_file: str | Path, overrides: list[str] = ()) -> Schema:
    """Merge `overrides` into the YAML `config_file`, resolve `${...}` and validate against `schema`."""
    config = _read_yaml(Path(config_file))
    for override in overrides:
        _apply_override(config, override)
    try:
        plain = OmegaConf.to_container(config, resolve=True)
    except OmegaConfBaseException as exc:
        raise UserError(f"config error: cannot resolve an interpolation: {exc}") from None
    try:
        return schema.model_validate(plain)
    except ValidationError as exc:
        raise UserError(format_validation_error(schema, exc)) from None


def _read_yaml(path: Path) -> DictConfig:
    if not path.is_file():
        raise UserError(f"config error: config file {path} does not exist")
    try:
        config = OmegaConf.load(path)
    except Exception as exc:  # YAML syntax errors come in several types
        raise UserError(f"config error: {path} is not valid YAML: {exc}") from None
    if not isinstance(config, DictConfig):
        raise UserError(f"config error: {path} must hold a mapping at the top level")
    return config


def _apply_override(config: DictConfig, override: str) -> None:
    if override.startswith("~"):
        key = override[1:].split("=", 1)[0]
        parent_key, _, leaf = key.rpartition(".")
        parent = OmegaConf.select(config, parent_key) if parent_key else config
        if not isinstance(parent, DictConfig) or leaf not in parent:
            raise UserError(f"config error: cannot delete {key!r}: no such key")
        parent.pop(leaf)
        return
    key, sep, value = override.lstrip("+").partition("=")
    if not sep or not key:
        raise UserError(f"config error: override {override!r} is not of the form key=value (e.g. trainer.total_epochs=2)")
    try:
        config.merge_with(OmegaConf.from_dotlist([f"{key}={value}"]))
    except OmegaConfBaseException as exc:
        raise UserError(f"config error: cannot apply override {override!r}: {exc}") from None


def format_validation_error(schema: type[BaseModel], exc: ValidationError) -> str:
    """One line per problem: the dotted key, what is wrong, and what is allowed or meant."""
    lines = [f"config error ({len(exc.errors())} problem{'s' if len(exc.errors()) > 1 else ''}):"]
    for error in exc.errors():
        loc = [str(part) for part in error["loc"]]
        key = ".".join(loc)
        if error["type"] == "extra_forbidden":
            valid = _valid_keys(schema, loc[:-1])
            close = difflib.get_close_matches(loc[-1], valid, n=1, cutoff=0.5)
            hint = f"did you mean {'.'.join(loc[:-1] + close)!r}?" if close else f"valid keys here: {', '.join(valid)}"
            lines.append(f"  {key}: unknown key; {hint}")
        elif not loc:  # a check across fields: its message names them
            lines.append(f"  {error['msg'].removeprefix('Value error, ')}")
        else:
            lines.append(f"  {key}: {error['msg']} (got {error.get('input')!r})")
    return "\n".join(lines)


def _valid_keys(schema: type[BaseModel], path: list[str]) -> list[str]:
    model: type[BaseModel] | None = schema
    for part in path:
        annotation = model.model_fields[part].annotation if model and part in model.model_fields else None
        model = next((t for t in (annotation, *get_args(annotation)) if _is_model(t)), None)
    return sorted(model.model_fields) if model else []


def _is_model(t) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)
