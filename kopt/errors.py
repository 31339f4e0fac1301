"""Errors a user can act on.

Anything raised as a KoptError reaches the user as one line and a non-zero exit;
everything else is a bug and shows its traceback only under --debug.
"""


class KoptError(Exception):
    """A problem the user can fix: bad input, missing setup, a failed precondition."""

    exit_code = 1

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text} ({self.hint})" if self.hint else text


class TaskError(KoptError):
    """A kernel task file is malformed: syntax error, missing reference/make_inputs, bad CASES."""


class CompileError(KoptError):
    """Triton could not compile a kernel; the message carries the compiler's words and location."""


class IndexError_(KoptError):
    """The knowledge index is missing, stale, locked or corrupt."""
