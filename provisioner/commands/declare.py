"""The machinery of the option declarations (commands/options.py holds the table and binds these to it): the
`Declared` type (what typer shows and parses, the check a value passes), the typer command written from a
command function's parameters, the one builder of `PlanningOptions`, and the planning flags a saved plan
refuses. Nothing here declares an option; the checks themselves are commands/checks.py's."""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from provisioner.commands.checks import shown, split_python_option
from provisioner.errors import BadInput

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping

    from provisioner.render.output import Result

# The options every command takes, declared in the table: what a pip or uv user types everywhere
EVERY_COMMAND = ("verbose", "quiet")

# what a value must not look like: an option (`--host --json` took `--json` as the host file's name)
_SHORT_FLAGS = ("-v", "-q", "-y", "-f", "-h")


@dataclass(frozen=True)
class PlanningOptions:
    """Every planning input, checked (`planning_options` builds it from the flags)."""

    host_files: tuple[str, ...] = ()
    driver: str | None = None  # "535.104.05", "580", or "none" (no driver: a build server)
    gpu_cc: str | None = None  # "8.6", "8.0,9.0" (several GPUs), or "none"
    python_version: str | None = None  # "3.12", "3.13t"
    platform: str | None = None  # linux-x86_64 | linux-aarch64 | windows-amd64
    ort: str | None = None  # "1.20", "1.20.1", ">=1.18,<1.21"
    cuda: str | None = None  # "12", "12.4"
    tensorrt: bool = False
    target_python: str | None = None  # an interpreter to probe (path or command name)
    prefer_existing_libraries: bool = True
    cuda_libraries: str | None = None  # wheels | system; None: not given (wheels)
    loader_hook: bool = True  # False: --no-loader-hook
    tensorrt_libraries: str | None = None  # wheels | system | a folder; None: not given (wheels)
    tensorrt_index_url: str | None = None  # a mirror of the index of the TensorRT wheels
    provider: str | None = None  # --provider: cuda | tensorrt | a plugin EP (tensorrt-rtx); None: not given


@dataclass(frozen=True)
class Declared:
    """One option: what typer shows and parses, and the check its value passes before a command runs."""

    flags: tuple[str, ...]
    annotation: Any  # the Python type typer converts to
    default: Any  # ... : required
    help: str
    metavar: str | None = None
    check: Callable[[Any], Any] | None = None  # BadInput, or None (the value stands), or the value to use
    old_flags: tuple[str, ...] = ()  # former spellings, still read, not shown in the help
    sets: tuple[str, ...] = ()  # planning options: the PlanningOptions fields it sets
    argument: bool = False  # a positional argument (flags: ()), named by its metavar

    def parameters(self, name: str) -> list[inspect.Parameter]:
        """The typer parameters of this option (and of its former spelling)."""
        import typer

        if self.argument:
            return [self._parameter(name, typer.Argument(self.default, help=self.help, metavar=self.metavar))]
        complete = getattr(self.check, "complete", None)  # the declared choices complete in the shell
        option = typer.Option(self.default, *self.flags, help=self.help, metavar=self.metavar, autocompletion=complete)
        found = [self._parameter(name, option)]
        if self.old_flags:
            old = typer.Option(None, *self.old_flags, metavar=self.metavar, hidden=True)
            found.append(self._parameter(_old(name), old, self.annotation | None))
        return found

    def _parameter(self, name: str, default: Any, annotation: Any = None) -> inspect.Parameter:
        kind = inspect.Parameter.KEYWORD_ONLY
        return inspect.Parameter(name, kind, default=default, annotation=annotation or self.annotation)

    def value(self, name: str, values: dict[str, Any]) -> Any:
        """The checked value (a former spelling, given, stands for the option)."""
        value = values[name]
        if self.old_flags and values.get(_old(name)) is not None:
            value = values[_old(name)]
        return self.checked(name, value)

    def checked(self, name: str, value: Any) -> Any:
        """`value` after its check: BadInput, or the value to use (a check returns None when the value stands,
        or the value converted: `８.６` read as 8.6, a path as a Path, --dim as sizes)."""
        _refuse_an_option(self, name, value)
        if self.check is None:
            return value
        converted = self.check(value)
        return value if converted is None else converted


def _old(name: str) -> str:
    return f"{name}__old_spelling"


def _refuse_an_option(declared: Declared, name: str, value: Any) -> None:
    """BadInput when a text value is an option (`--label --json`): the value the flag wanted is missing."""
    for each in value if isinstance(value, list) else [value]:
        if isinstance(each, str) and (each.startswith("--") or each in _SHORT_FLAGS):
            flag = _flag(declared, name)
            raise BadInput(
                f"{flag} got {shown(each)}, an option, as its value: {flag} needs a value",
                hint=f"write {flag} {declared.metavar or 'VALUE'} (a file whose name starts with -: ./{each})",
            )


def _flag(declared: Declared | None, name: str) -> str:
    """The flag of a declared option (its longest spelling); a positional argument's metavar (MODEL); for a name
    not declared, its flag-like spelling."""
    if declared is not None and declared.flags:
        return max(declared.flags, key=len)
    return declared.metavar or name if declared is not None else f"--{name.replace('_', '-')}"


def _declared_in(tables: tuple[Mapping[str, Declared], ...], name: str) -> Declared | None:
    """The declaration of `name` in the first table that has it."""
    return next((table[name] for table in tables if name in table), None)


def given_path_error(
    exc: BaseException, values: dict[str, Any], tables: tuple[Mapping[str, Declared], ...]
) -> BadInput | None:
    """BadInput when `exc` is an OSError about a path the user gave (a name too long, a loop of links, a special
    file system): that path is the mistake, not ortprov."""
    if not isinstance(exc, OSError) or not exc.filename:
        return None
    failed = str(exc.filename)
    for name, value in values.items():
        for each in value if isinstance(value, list) else [value]:
            if isinstance(each, (str, Path)) and str(each) and str(each).rstrip("/") in failed:
                flag = _flag(_declared_in(tables, name), name)
                said = str(each) if len(str(each)) <= 80 else str(each)[:60] + "..."
                return BadInput(f"{flag} {said!r}: {exc.strerror or exc}", hint="pass another path")
    return None


# -- planning options: one builder, and what a saved plan already decided -----------------------------------


def checked_planning(planning: Mapping[str, Declared], arguments: dict[str, Any]) -> PlanningOptions:
    """The planning flags (`arguments`, named as the `planning` declarations) as one checked PlanningOptions:
    each flag's own check, `--python` split into a version or an interpreter, then the checks across flags.
    BadInput for the first bad input."""
    given = {name: planning[name].checked(name, value) for name, value in arguments.items()}
    version, interpreter = split_python_option(given["python"])
    tensorrt_libraries, tensorrt_index_url = given["tensorrt_libraries"], given["tensorrt_index_url"]
    if tensorrt_index_url and tensorrt_libraries not in (None, "wheels"):
        raise BadInput(
            f"--tensorrt-index-url and --tensorrt-libraries {tensorrt_libraries} exclude each other: an index "
            "serves wheels, and TensorRT would come from elsewhere",
            hint="drop one of the two",
        )
    if tensorrt_libraries not in (None, "wheels", "system"):
        from provisioner.userfiles import expand_user

        tensorrt_libraries = str(expand_user(tensorrt_libraries, "--tensorrt-libraries").absolute())
    tensorrt = arguments["tensorrt"] or bool(tensorrt_libraries or tensorrt_index_url)
    provider = given["plan_provider"]
    if provider == "tensorrt":
        tensorrt = True
    elif provider not in (None, "cuda", "tensorrt"):  # a plugin EP: it bundles its runtime
        clashing = [
            flag
            for flag, value in (
                ("--tensorrt", tensorrt),
                ("--cuda-libraries", given["cuda_libraries"]),
                ("--no-loader-hook", arguments["no_loader_hook"]),
            )
            if value
        ]
        if clashing:
            raise BadInput(
                f"--provider {provider} and {clashing[0]} exclude each other: the {provider} EP bundles its runtime",
                hint=f"drop {clashing[0]}",
            )
    elif provider == "cuda" and tensorrt:
        raise BadInput("--provider cuda and --tensorrt ask for different providers", hint="keep one of them")
    if arguments["host"] and interpreter:
        raise BadInput(
            f"--python {interpreter!r} names an interpreter on this machine; it cannot be combined with --host",
            hint="to set the Python of the host files, pass a version: --python 3.12",
        )
    return PlanningOptions(
        host_files=tuple(given["host"] or ()),
        driver=given["driver"],
        gpu_cc=given["gpu_cc"],
        python_version=version,
        platform=given["platform"],
        ort=given["ort"],
        cuda=given["cuda"],
        tensorrt=tensorrt,
        target_python=interpreter,
        cuda_libraries=given["cuda_libraries"],
        loader_hook=not arguments["no_loader_hook"],
        tensorrt_libraries=tensorrt_libraries,
        tensorrt_index_url=tensorrt_index_url,
        provider=provider,
    )


def flag_labels(planning: Mapping[str, Declared]) -> dict[str, str]:
    """PlanningOptions field -> how a refusal names its flag ("--python X.Y" and "--python PATH" for the two
    fields --python sets, from its metavar)."""
    labels = {}
    for declared in planning.values():
        kinds = (declared.metavar or "").split("|") if len(declared.sets) > 1 else [""] * len(declared.sets)
        for field, kind in zip(declared.sets, kinds, strict=True):
            labels[field] = f"{declared.flags[0]} {kind}".rstrip()
    return labels


def flags_given(options: PlanningOptions, labels: Mapping[str, str], honoured: Collection[str] = ()) -> list[str]:
    """The planning flags (`labels`) the user gave, less the fields in `honoured`."""
    unset = PlanningOptions()
    return [
        flag for name, flag in labels.items() if name not in honoured and getattr(options, name) != getattr(unset, name)
    ]


def refuse_given(given: list[str], saved: str) -> None:
    """BadInput (one line) when planning flags were given (`given`) beside a saved plan."""
    if given:
        flags = " and ".join(given)
        raise BadInput(
            f"{saved} already says what to install: {flags} cannot change it",
            hint=f"drop {flags}, or make a new plan with {'them' if len(given) > 1 else 'it'}: "
            "`ortprov plan ... --json > plan.json`",
        )


# -- from declarations to a typer command --------------------------------------------------------------------


def wants_json(values: dict[str, Any]) -> bool:
    """--json, or plan's --format json: the result, and any error (a value refused by its check, --json beside
    another --format), is JSON on stdout (docs/json.md)."""
    return bool(values.get("json_output")) or values.get("fmt") == "json"


def json_in_args(args: list[str], json_flags: Collection[str], format_flags: Collection[str]) -> bool:
    """Whether the command line asks for JSON (`wants_json`, read from the words, for an error of the parser
    before any value is known): a flag of `json_flags`, or JSON named by a flag of `format_flags` (`--format
    json`, `--format=json`, `-f json`, `-fjson`); words after `--` are arguments."""
    for index, arg in enumerate(args):
        if arg == "--":
            return False
        if arg in json_flags:
            return True
        following = args[index + 1] if index + 1 < len(args) else None
        for flag in format_flags:
            joined = flag + ("=" if flag.startswith("--") else "")
            if (arg == flag and following == "json") or arg == f"{joined}json":
                return True
    return False


def typer_command(
    function: Callable[..., Result],
    planning: Mapping[str, Declared],
    options: Mapping[str, Declared],
    planning_options: Callable[..., PlanningOptions],
) -> Callable[..., None]:
    """A typer command from a command function whose parameters are declared option names: typer reads the
    options from the signature written here; the command gets checked values and returns a result object,
    printed by provisioner.render.output with its exit code (an OrtprovError: the error, and its code)."""
    names = list(inspect.signature(function).parameters)
    tables = (planning, options)

    def declared(name: str) -> Mapping[str, Declared]:
        """The declarations a command function's parameter stands for."""
        if name == "planning":
            return planning
        if name not in options:
            raise TypeError(f"option {name!r} is not declared in provisioner/commands/options.py")
        return {name: options[name]}

    every = [name for name in EVERY_COMMAND if name not in names]  # -q and -v, whether it names them or not
    parameters = [p for name in [*names, *every] for option, d in declared(name).items() for p in d.parameters(option)]

    def run(**values: Any) -> None:
        from provisioner.render.output import be_quiet, show

        as_json = wants_json(values)
        verbose = bool(values.get("verbose"))
        try:
            if values.get("quiet"):
                if verbose:
                    raise BadInput("-q and -v exclude each other", hint="keep one of them")
                be_quiet()
            kwargs = {}
            for name in names:
                if name == "planning":
                    kwargs[name] = planning_options(**{option: values[option] for option in planning})
                else:
                    kwargs[name] = options[name].value(name, values)
            code = show(function(**kwargs), as_json=as_json)
        except SystemExit:
            raise
        except BaseException as exc:  # noqa: BLE001 - before click turns a Ctrl-C into Abort: commands/exits.py
            from provisioner.commands.exits import exit_code

            sys.exit(
                exit_code(
                    exc,
                    as_json=as_json,
                    verbose=verbose,
                    given_path=lambda error: given_path_error(error, values, tables),
                )
            )
        if code:
            sys.exit(code)

    run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {parameter.name: parameter.annotation for parameter in parameters}
    run.__name__ = function.__name__
    run.__qualname__ = function.__qualname__
    run.__doc__ = function.__doc__
    run.__module__ = function.__module__
    return run
