"""Exceptions of mlgo_env: one class per stable error code.

The codes are the agent protocol's (docs/protocol.md, "Error codes"); the
in-process backend raises the same class the server's reply would. Every exception
carries ``code`` (the int), ``name`` (e.g. ``"invalid_action"``) and
``message`` (the server's or environment's text, unchanged).

=====================  ======  ==================================================
class                  code    raised when
=====================  ======  ==================================================
ParseError             -32700  the server could not parse a request line
InvalidRequest         -32600  a request that is not JSON-RPC
MethodNotFound         -32601  an unknown method
InvalidParams          -32602  bad arguments: unknown module, bad option, ...
InternalError          -32603  a bug in mlgo-env
InvalidAction          -32001  the action breaks the problem's rules, or is not a
                               number; the episode is unchanged (step again)
UnknownEpisode         -32002  no such episode (ended, closed, never existed)
EpisodeFailed          -32003  the episode ended in error (clang crashed, timed out)
Busy                   -32004  the environment is at a configured limit
LineTooLong            -32005  a request line over the server's limit
ServerGone             (none)  the server closed the connection or died
=====================  ======  ==================================================

``InvalidAction`` is also a ``ValueError``; ``ServerGone`` a ``ConnectionError``.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type

__all__ = [
    "MlgoError", "ParseError", "InvalidRequest", "MethodNotFound", "InvalidParams",
    "InternalError", "InvalidAction", "UnknownEpisode", "EpisodeFailed", "Busy", "LineTooLong",
    "ServerGone", "error_for",
]


class MlgoError(Exception):
    """Base class: an error reported by mlgo-env (``code``, ``name``, ``message``)."""

    code: Optional[int] = None
    name: str = "error"

    def __init__(self, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"


class ParseError(MlgoError):
    code, name = -32700, "parse_error"


class InvalidRequest(MlgoError):
    code, name = -32600, "invalid_request"


class MethodNotFound(MlgoError):
    code, name = -32601, "method_not_found"


class InvalidParams(MlgoError):
    code, name = -32602, "invalid_params"


class InternalError(MlgoError):
    code, name = -32603, "internal_error"


class InvalidAction(MlgoError, ValueError):
    code, name = -32001, "invalid_action"


class UnknownEpisode(MlgoError):
    code, name = -32002, "unknown_episode"


class EpisodeFailed(MlgoError):
    code, name = -32003, "episode_failed"


class Busy(MlgoError):
    code, name = -32004, "busy"


class LineTooLong(MlgoError):
    code, name = -32005, "line_too_long"


class ServerGone(MlgoError, ConnectionError):
    """The server vanished: the connection closed, reset, or the process died."""

    name = "server_gone"


_BY_CODE: Dict[int, Type[MlgoError]] = {
    cls.code: cls for cls in (ParseError, InvalidRequest, MethodNotFound, InvalidParams,
                              InternalError, InvalidAction, UnknownEpisode, EpisodeFailed,
                              Busy, LineTooLong)
}


def error_for(code: int, message: str, data: Any = None) -> MlgoError:
    """The exception for a stable ``code`` (an ``MlgoError`` with that code
    for codes this version does not know)."""
    cls = _BY_CODE.get(code)
    if cls is not None:
        return cls(message, data)
    error = MlgoError(message, data)
    error.code = code
    return error
