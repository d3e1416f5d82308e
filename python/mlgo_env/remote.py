"""The remote transport: mlgo-env's agent protocol (JSON-RPC 2.0, one line per
request or batch) over a Unix socket, TCP, or a child's stdio.

``Client`` makes raw calls and batches; mlgo_env's ``Env`` and ``VectorEnv``
use it through ``RemoteBackend`` (backend.py) with ``"encoding":"binary"``
observations, so a step formats no JSON numbers: the reply line holds
``{"$frame": N}`` and is followed by the N raw little-endian bytes of the
tensors (spec order), then a newline; the client reads them with the line
and decodes them into fresh numpy arrays. (``"base64"`` and ``"json"``
observations are decoded too.)

Errors: a reply's error raises the exception class of its code
(errors.py); a connection that closes, resets or breaks raises
``ServerGone``. A call interrupted (Ctrl-C) while waiting for its reply
leaves the connection unusable: the client closes it, and the server then
closes that connection's episodes and kills their compilers.
"""

from __future__ import annotations

import binascii
import itertools
import json
import socket
import subprocess
import threading
from typing import Any, Callable, Dict, IO, List, Optional, Sequence, Tuple, Union

import numpy as np

from .errors import InternalError, MlgoError, ServerGone, error_for
from .spaces import NUMPY_DTYPES

__all__ = ["Client", "connect", "connect_unix", "connect_tcp", "connect_stdio",
           "decode_observation", "frame_layout"]


_FRAME = "$frame"   # a binary observation's placeholder: its byte count
_BYTES = "$bytes"   # where the client puts the frame's bytes


class _Transport:
    """A line-oriented byte stream."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], closer: Callable[[], None],
                 where: str) -> None:
        self._reader = reader
        self._writer = writer
        self._closer = closer
        self.where = where
        self.process: Optional[subprocess.Popen] = None

    def send_line(self, text: str) -> None:
        try:
            self._writer.write(text.encode("utf-8") + b"\n")
            self._writer.flush()
        except (BrokenPipeError, ConnectionError, ValueError) as error:
            raise ServerGone(f"mlgo-env at {self.where} is gone: cannot send ({error})") from None

    def recv_line(self) -> bytes:
        try:
            line = self._reader.readline()
        except (ConnectionError, ValueError) as error:
            raise ServerGone(f"mlgo-env at {self.where} is gone: {error}") from None
        if not line:
            raise ServerGone(f"mlgo-env at {self.where} closed the connection "
                             "(the server exited or was killed)")
        return line

    def recv_exact(self, size: int) -> bytes:
        try:
            data = self._reader.read(size)
        except (ConnectionError, ValueError) as error:
            raise ServerGone(f"mlgo-env at {self.where} is gone: {error}") from None
        if data is None or len(data) != size:
            raise ServerGone(f"mlgo-env at {self.where} closed the connection in the middle "
                             "of an observation frame")
        return data

    def close(self) -> None:
        self._closer()


def connect_stdio(command: Sequence[str], stderr: Any = None) -> "Client":
    """Spawns ``command`` (mlgo-env and its flags) and talks over its
    stdin/stdout; ``stderr`` defaults to inheriting ours."""
    process = subprocess.Popen(list(command), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=stderr)

    def close() -> None:
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()

    transport = _Transport(process.stdout, process.stdin, close, "stdio:" + str(command[0]))
    transport.process = process
    return Client(transport)


def _socket_client(sock: socket.socket, where: str) -> "Client":
    reader = sock.makefile("rb")
    writer = sock.makefile("wb")

    def close() -> None:
        for f in (writer, reader):
            try:
                f.close()
            except OSError:
                pass
        sock.close()

    return Client(_Transport(reader, writer, close, where))


def connect_tcp(host: str, port: int, timeout: Optional[float] = None) -> "Client":
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as error:
        raise ServerGone(f"cannot connect to mlgo-env at {host}:{port}: {error}") from None
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return _socket_client(sock, f"{host}:{port}")


def connect_unix(path: str, timeout: Optional[float] = None) -> "Client":
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if timeout is not None:
        sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError as error:
        sock.close()
        raise ServerGone(f"cannot connect to mlgo-env at unix:{path}: {error}") from None
    return _socket_client(sock, "unix:" + path)


def connect(address: Union[str, Sequence[str]]) -> "Client":
    """``"unix:PATH"``, ``"HOST:PORT"``, or a list (an mlgo-env command for stdio)."""
    if not isinstance(address, str):
        return connect_stdio(list(address))
    if address.startswith("unix:"):
        return connect_unix(address[5:])
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"remote address {address!r} is neither unix:PATH nor HOST:PORT")
    return connect_tcp(host.strip("[]") or "127.0.0.1", int(port))


def _unwrap(reply: Dict[str, Any]) -> Any:
    if "error" in reply:
        error = reply["error"]
        raise error_for(error.get("code"), error.get("message", ""), error.get("data"))
    return reply["result"]


class Client:
    """Raw JSON-RPC calls. Thread-safe: one request line in flight at a time."""

    def __init__(self, transport: _Transport) -> None:
        self._transport = transport
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._broken: Optional[str] = None

    @property
    def where(self) -> str:
        return self._transport.where

    def _exchange(self, payload: Any) -> Any:
        line = json.dumps(payload, separators=(",", ":"))
        with self._lock:
            if self._broken:
                raise ServerGone(self._broken)
            try:
                self._transport.send_line(line)
                decoded = json.loads(self._transport.recv_line())
                self._read_frames(decoded)
            except ServerGone as error:
                self._broken = str(error.message)
                raise
            except BaseException:
                # Interrupted mid-call: the reply would come out of order.
                self._broken = (f"the connection to mlgo-env at {self.where} was closed after "
                                "an interrupted call")
                self._transport.close()
                raise
        return decoded

    def _read_frames(self, decoded: Any) -> None:
        """Reads the bytes of the reply's binary observations (the items'
        ``{"$frame": N}``, in order) and the newline after them; each
        observation gets its bytes under ``"$bytes"``."""
        framed = []
        for reply in decoded if isinstance(decoded, list) else [decoded]:
            result = reply.get("result") if isinstance(reply, dict) else None
            observation = result.get("observation") if isinstance(result, dict) else None
            if isinstance(observation, dict) and _FRAME in observation:
                framed.append(observation)
        if not framed:
            return
        for observation in framed:
            observation[_BYTES] = self._transport.recv_exact(int(observation[_FRAME]))
        if self._transport.recv_exact(1) != b"\n":
            raise ServerGone(f"mlgo-env at {self.where} sent observation frames without "
                             "their closing newline")

    def call(self, method: str, params: Optional[Dict[str, Any]] = None) -> Any:
        """One request; returns its result or raises the error's class."""
        request: Dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            request["params"] = params
        return _unwrap(self._exchange(request))

    def batch(self, calls: Sequence[Tuple[str, Optional[Dict[str, Any]]]]) -> List[Any]:
        """Sends ``[(method, params), ...]`` as one line; returns per call, in
        order, its result or its exception instance (not raised)."""
        if not calls:
            return []
        requests = []
        for method, params in calls:
            request: Dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
            if params is not None:
                request["params"] = params
            requests.append(request)
        replies = self._exchange(requests)
        if isinstance(replies, dict):  # the whole line was refused
            _unwrap(replies)
        by_id = {reply.get("id"): reply for reply in replies}
        out: List[Any] = []
        for request in requests:
            reply = by_id.get(request["id"])
            if reply is None:
                out.append(InternalError("the server sent no reply for a request"))
                continue
            try:
                out.append(_unwrap(reply))
            except MlgoError as error:
                out.append(error)
        return out

    def describe(self) -> Dict[str, Any]:
        return self.call("describe")

    def close(self) -> None:
        if self._broken is None:
            self._broken = f"the connection to mlgo-env at {self.where} is closed"
            self._transport.close()
        elif self._transport.process is not None:
            self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def decode_observation(observation: Optional[Dict[str, Any]],
                       specs: Dict[str, Tuple[str, Tuple[int, ...]]],
                       layout: Optional[FrameLayout] = None
                       ) -> Optional[Dict[str, np.ndarray]]:
    """An observation from a reply as fresh numpy arrays: a binary frame is
    cut into its tensors (spec order), base64 strings are decoded (raw
    little-endian bytes), JSON lists converted; ``specs`` maps each feature
    to its (numpy dtype, shape); ``layout`` is ``frame_layout(specs)``, made
    here when not given."""
    if observation is None:
        return None
    if _FRAME in observation:
        return _split_frame(observation[_BYTES], layout or frame_layout(specs))
    out = {}
    for name, value in observation.items():
        dtype, shape = specs[name]
        if isinstance(value, str):
            array = np.frombuffer(binascii.a2b_base64(value), dtype=dtype).reshape(shape).copy()
        else:
            array = np.asarray(value, dtype=dtype).reshape(shape)
        out[name] = array
    return out


FrameLayout = List[Tuple[str, np.dtype, int, int, Optional[Tuple[int, ...]]]]


def frame_layout(specs: Dict[str, Tuple[str, Tuple[int, ...]]]) -> FrameLayout:
    """Where each feature sits in a binary frame: (name, dtype, count, byte
    offset, shape or None when the flat array already has it). Computed once
    per description: per-feature numpy set-up costs more than the cutting."""
    layout, at = [], 0
    for name, (dtype, shape) in specs.items():
        kind = np.dtype(dtype)
        count = 1
        for extent in shape:
            count *= int(extent)
        layout.append((name, kind, count, at, None if len(shape) == 1 else tuple(shape)))
        at += count * kind.itemsize
    return layout


def _split_frame(data: bytes, layout: FrameLayout) -> Dict[str, np.ndarray]:
    if layout:
        name, kind, count, at, _ = layout[-1]
        expected = at + count * kind.itemsize
    else:
        expected = 0
    if len(data) != expected:
        raise InternalError(f"an observation frame has {len(data)} bytes; the features take "
                            f"{expected}")
    buffer = bytearray(data)  # one writable copy; the arrays are views of it
    out = {}
    for name, kind, count, at, shape in layout:
        array = np.frombuffer(buffer, dtype=kind, count=count, offset=at)
        out[name] = array if shape is None else array.reshape(shape)
    return out


def feature_specs(description: Dict[str, Any]) -> Dict[str, Tuple[str, Tuple[int, ...]]]:
    """{feature: (numpy dtype, shape)} from describe()'s observation_spec."""
    return {s["name"]: (NUMPY_DTYPES[s["type"]], tuple(s["shape"]))
            for s in description["observation_spec"]}


