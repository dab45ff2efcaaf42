"""User-facing errors: one clear sentence, a hint, and the exit code the CLI returns."""

from __future__ import annotations

EXIT_OK = 0
EXIT_PROBLEMS = 1
EXIT_BAD_INPUT = 2
EXIT_NO_PLAN = 3
EXIT_INTERNAL = 70  # a bug in ortprov (sysexits.h EX_SOFTWARE): never a user's mistake, never a check's verdict


class OrtprovError(Exception):
    """Base class: `message` is one sentence, `hint` says what to do next; `details` are extra keys of the
    JSON error object (docs/json.md), such as what apply did before it failed."""

    exit_code = EXIT_PROBLEMS

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details: dict[str, object] = {}


class BadInput(OrtprovError):
    """Malformed user input: a flag, a version string, a host file."""

    exit_code = EXIT_BAD_INPUT


class DataError(OrtprovError):
    """Shipped or cached data (matrices, templates) failed validation."""

    exit_code = EXIT_PROBLEMS


class NoCompatiblePlan(OrtprovError):
    """No candidate build runs on the host; `rejected` explains each loser."""

    exit_code = EXIT_NO_PLAN

    def __init__(self, message: str, rejected: list | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.rejected = rejected or []


class InternalError(OrtprovError):
    """An exception ortprov did not expect (a bug): one line naming it instead of a traceback."""

    exit_code = EXIT_INTERNAL

    @classmethod
    def of(cls, exc: BaseException) -> InternalError:
        """The error line for an unexpected exception."""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return cls(
            f"internal error (a bug in ortprov): {type(exc).__name__}" + (f": {text}" if text else ""),
            hint="please report it, with the output of the same command run with ORTPROV_TRACEBACK=1",
        )
