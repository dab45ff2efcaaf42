"""The one place an exception becomes an exit code (README: the table of exit codes).

Whatever ends a run early (an error of the command, of the parser before it, an interrupt, a stdout that cannot
be written, a bug) reaches `exit_code`: from cli.main (the parser, the streams) and from the command wrapper of
commands/options.py (the command's own run, before click turns a Ctrl-C into an Abort). It prints one `error:`
line and a hint on stderr (with --json also the error object on stdout) and returns the code:
OrtprovError's own (1 a check found problems, 2 bad input, 3 no compatible plan, 128+N a signal during apply),
130 an interrupt, 2 a usage error or a path the user gave that the system refuses, 70 a bug
(ORTPROV_TRACEBACK=1 shows it); a reader that went away (`| head -1`) ends the run quietly with 1.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from provisioner.errors import BadInput, InternalError, OrtprovError

if TYPE_CHECKING:
    from collections.abc import Callable, Collection


def exit_code(
    exc: BaseException,
    *,
    as_json: bool,
    verbose: bool = False,
    given_path: Callable[[BaseException], BadInput | None] | None = None,
    commands: Collection[str] = (),
    args: list[str] | None = None,
) -> int:
    """Say the error `exc` stands for and return its exit code. `given_path`: the BadInput for an OSError about
    a path the user gave (the command knows its options); `commands` and `args`: to name the command in a usage
    error's hint."""
    from provisioner.render import output

    if isinstance(exc, BrokenPipeError):
        # the reader went away (`ortprov plan --json | head -1`): exit quietly, as click does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    error = _error_of(exc, given_path, commands, args or [], verbose)
    if error is None:  # `ortprov` alone: click's help, shown
        return 2
    if isinstance(exc, OSError) and output.stdout_is_broken():
        as_json = False
    return output.show_error(error, as_json=as_json, verbose=verbose)


def _error_of(
    exc: BaseException,
    given_path: Callable[[BaseException], BadInput | None] | None,
    commands: Collection[str],
    args: list[str],
    verbose: bool = False,
) -> OrtprovError | None:
    from provisioner.render import output

    if isinstance(exc, OrtprovError):
        return exc
    usage_error, no_args = _parser_errors()
    aborted = type(exc).__name__ == "Abort" and _caused_by(exc, KeyboardInterrupt)  # click's, from a Ctrl-C
    if isinstance(exc, KeyboardInterrupt) or aborted:
        interrupted = OrtprovError("interrupted")
        interrupted.exit_code = 130
        return interrupted
    if isinstance(exc, no_args):
        exc.show()  # type: ignore[attr-defined] # `ortprov` alone: the help, on stderr, exit 2 (click's rule)
        return None
    if isinstance(exc, usage_error):
        invoked = " ".join(arg for arg in args[:2] if not arg.startswith("-") and arg in commands)
        hint = f"`ortprov {invoked} --help` lists its options" if invoked else "`ortprov --help` lists the commands"
        return BadInput(exc.format_message(), hint=hint)  # type: ignore[attr-defined]
    if isinstance(exc, OSError) and output.stdout_is_broken():
        return output.stdout_failed(exc)
    given = given_path(exc) if given_path is not None else None
    if given is not None:
        return given
    output.traceback_if_asked(exc, verbose)
    return InternalError.of(exc)


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    """click turns a Ctrl-C into Abort, raised from the KeyboardInterrupt."""
    cause: Any = exc.__cause__ or exc.__context__
    return isinstance(cause, kind)


def _parser_errors() -> tuple[type[Exception], type[Exception]]:
    """click's UsageError and NoArgsIsHelpError (vendored by typer >= 0.26, else click's own)."""
    try:
        from typer._click import exceptions  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        from click import exceptions  # type: ignore[no-redef,unused-ignore]
    no_args = getattr(exceptions, "NoArgsIsHelpError", None) or type("NoArgsIsHelpError", (Exception,), {})
    return exceptions.UsageError, no_args
