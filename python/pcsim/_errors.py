"""Exceptions of pcsim: every error the library reports, as a Python exception.

Each carries the message pcsim prints (``str(e)``) and its parts: ``file`` (the file, flag or
argument holding the bad value), ``field`` and ``problem``. All derive from :class:`PcsimError`;
bad input derives from :class:`InputError` (also a ``ValueError``), so ``except ValueError`` works.
Exceptions pickle (they cross process boundaries in Dask, multiprocessing and Ray).
"""

from __future__ import annotations

from typing import Optional

__all__ = [
    "PcsimError",
    "InputError",
    "ParseError",
    "InvalidValueError",
    "UnknownModelError",
    "StrategyError",
    "UnsupportedError",
    "FileError",
    "ServerError",
    "InternalError",
]


class PcsimError(Exception):
    """Base of every pcsim error.

    Attributes:
        message: the whole message, as ``pcsim`` prints it.
        file: the file (or ``command line`` / ``argument``) holding the bad value, when known.
        field: the field (or flag / argument) holding it, when known.
        problem: what is wrong, without the file and field.
    """

    def __init__(
        self,
        message: str,
        file: Optional[str] = None,
        field: Optional[str] = None,
        problem: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.field = field
        self.problem = problem if problem is not None else message

    def __reduce__(self):  # keep every part through pickling
        return (type(self), (self.message, self.file, self.field, self.problem))

    def __str__(self) -> str:
        return self.message


class InputError(PcsimError, ValueError):
    """Bad input: what ``pcsim`` exits with code 2 for."""


class ParseError(InputError):
    """A file or text that is not well-formed TOML or JSON (line and column in the message)."""


class InvalidValueError(InputError):
    """A well-formed input holding a value that is not allowed (``file``, ``field``, ``problem``)."""


class UnknownModelError(InputError, LookupError):
    """A model id the catalog does not have (the message suggests the closest one)."""


class StrategyError(InputError):
    """A caching strategy that cannot be parsed or that the model does not offer."""


class UnsupportedError(InputError):
    """A well-formed request that cannot be simulated (e.g. nothing to draw)."""


class FileError(PcsimError, OSError):
    """A file that could not be read or written (``file`` is its path)."""


class ServerError(PcsimError):
    """An MCP server that failed."""


class InternalError(PcsimError, RuntimeError):
    """A bug in pcsim (exit code 1 in the command line): please report it."""
