"""Python client for mlgo-env's agent protocol (standard library only).

mlgo-env speaks newline-delimited JSON-RPC 2.0 (see README.md, "Agent
protocol"). This module connects to it over stdio (spawning mlgo-env), TCP or a
Unix socket and offers:

- ``Client``: raw calls and batches.
- ``Env``: one episode at a time, gymnasium semantics:
  ``reset(seed=None, options=None) -> (obs, info)`` and
  ``step(action) -> (obs, reward, terminated, truncated, info)``.
- ``VectorEnv``: many episodes stepped in one round trip (a JSON-RPC batch).
- ``GymEnv``: a ``gymnasium.Env`` subclass, when gymnasium is importable.

With ``mlgo-env --ir2vec-vocab=...`` the reset ``info`` carries
``module_embedding`` (a list of floats) and inlining observations carry
``callee_embedding`` / ``caller_embedding``.

Observations are ``{feature_name: list}`` (flattened row-major); with
``encoding="base64"`` they are numpy arrays when numpy is importable, else
lists decoded with ``struct``.

Example::

    from mlgo_client import Env, connect_stdio
    env = Env(connect_stdio(["build/src/mlgo-env", "--problem=inlining"]))
    obs, info = env.reset(seed=1)
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(info["default_action"])
        done = terminated or truncated
    print(info["policy_score"], info["default_score"], reward)
"""

import base64
import itertools
import json
import socket
import struct
import subprocess
import threading

__all__ = [
    "MlgoError", "Client", "Env", "VectorEnv", "connect_stdio", "connect_tcp",
    "connect_unix", "connect", "decode_tensor",
]

# Stable error codes (README, "Error codes").
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
INVALID_ACTION = -32001
UNKNOWN_EPISODE = -32002
EPISODE_FAILED = -32003
BUSY = -32004
LINE_TOO_LONG = -32005

_STRUCT_CODES = {
    "float": "f", "double": "d", "int8_t": "b", "uint8_t": "B", "int16_t": "h",
    "uint16_t": "H", "int32_t": "i", "uint32_t": "I", "int64_t": "q", "uint64_t": "Q",
}
_NUMPY_DTYPES = {
    "float": "<f4", "double": "<f8", "int8_t": "i1", "uint8_t": "u1", "int16_t": "<i2",
    "uint16_t": "<u2", "int32_t": "<i4", "uint32_t": "<u4", "int64_t": "<i8", "uint64_t": "<u8",
}

try:  # numpy is optional
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the machine
    _np = None


class MlgoError(Exception):
    """An error reply from mlgo-env: ``code`` is one of the stable codes."""

    def __init__(self, code, message, data=None):
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.data = data


class _Transport:
    """A line-oriented byte stream."""

    def __init__(self, reader, writer, closer):
        self._reader = reader
        self._writer = writer
        self._closer = closer

    def send_line(self, text):
        self._writer.write(text.encode("utf-8") + b"\n")
        self._writer.flush()

    def recv_line(self):
        line = self._reader.readline()
        if not line:
            raise ConnectionError("mlgo-env closed the connection")
        return line

    def close(self):
        self._closer()


def connect_stdio(command, stderr=None):
    """Spawns ``command`` (a list: mlgo-env and its flags) and talks over its
    stdin/stdout. ``stderr`` defaults to inheriting ours."""
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=stderr)

    def close():
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

    transport = _Transport(process.stdout, process.stdin, close)
    transport.process = process
    return Client(transport)


def _socket_client(sock):
    reader = sock.makefile("rb")
    writer = sock.makefile("wb")

    def close():
        for f in (writer, reader):
            try:
                f.close()
            except OSError:
                pass
        sock.close()

    return Client(_Transport(reader, writer, close))


def connect_tcp(host, port, timeout=None):
    sock = socket.create_connection((host, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return _socket_client(sock)


def connect_unix(path, timeout=None):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if timeout is not None:
        sock.settimeout(timeout)
    sock.connect(path)
    return _socket_client(sock)


def connect(address):
    """``"unix:PATH"``, ``"HOST:PORT"`` or a list (an mlgo-env command for stdio)."""
    if isinstance(address, (list, tuple)):
        return connect_stdio(list(address))
    if address.startswith("unix:"):
        return connect_unix(address[5:])
    host, _, port = address.rpartition(":")
    return connect_tcp(host.strip("[]") or "127.0.0.1", int(port))


class Client:
    """Raw JSON-RPC calls. Thread-safe: one request line in flight at a time."""

    def __init__(self, transport):
        self._transport = transport
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def call(self, method, params=None):
        """One request; returns its result or raises MlgoError."""
        request = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            request["params"] = params
        with self._lock:
            self._transport.send_line(json.dumps(request, separators=(",", ":")))
            reply = json.loads(self._transport.recv_line())
        return _unwrap(reply)

    def batch(self, calls):
        """Sends ``[(method, params), ...]`` as one batch; returns a list with,
        per call in order, its result or an MlgoError instance (not raised)."""
        if not calls:
            return []
        first = next(self._ids)
        requests = []
        for offset, (method, params) in enumerate(calls):
            request = {"jsonrpc": "2.0", "id": first + offset, "method": method}
            if params is not None:
                request["params"] = params
            requests.append(request)
        for _ in range(len(calls) - 1):
            next(self._ids)
        with self._lock:
            self._transport.send_line(json.dumps(requests, separators=(",", ":")))
            replies = json.loads(self._transport.recv_line())
        if isinstance(replies, dict):  # the whole batch was refused
            _unwrap(replies)
        by_id = {reply.get("id"): reply for reply in replies}
        out = []
        for request in requests:
            reply = by_id.get(request["id"])
            if reply is None:
                out.append(MlgoError(INTERNAL_ERROR, "no reply for request"))
                continue
            try:
                out.append(_unwrap(reply))
            except MlgoError as error:
                out.append(error)
        return out

    def describe(self):
        return self.call("describe")

    def close(self):
        self._transport.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _unwrap(reply):
    if "error" in reply:
        error = reply["error"]
        raise MlgoError(error.get("code"), error.get("message", ""), error.get("data"))
    return reply["result"]


def decode_tensor(spec, value):
    """One observation tensor: a JSON list as is, or a base64 string decoded
    to a numpy array (when numpy is importable) or a list."""
    if not isinstance(value, str):
        return value
    raw = base64.b64decode(value)
    if _np is not None:
        array = _np.frombuffer(raw, dtype=_NUMPY_DTYPES[spec["type"]])
        return array.reshape(spec["shape"]) if spec["shape"] else array
    code = _STRUCT_CODES[spec["type"]]
    count = len(raw) // struct.calcsize(code)
    return list(struct.unpack("<%d%s" % (count, code), raw))


class Env:
    """One episode at a time over a Client, with gymnasium's signatures.

    ``reset(options=...)`` accepts ``module`` (a corpus member), ``max_steps``
    and ``encoding`` ("json" or "base64"). The terminal step's ``info`` holds
    ``policy_score``, ``default_score`` and per-context scores.
    """

    def __init__(self, client, encoding="json"):
        self.client = client
        self.encoding = encoding
        self.spec = client.describe()
        self.problem = self.spec["problem"]
        self.observation_spec = {s["name"]: s for s in self.spec["observation_spec"]}
        self.action_spec = self.spec["action_spec"]
        self.episode = None
        self.module = None

    def _decode(self, observation):
        if observation is None:
            return None
        return {name: decode_tensor(self.observation_spec[name], value)
                for name, value in observation.items()}

    def reset(self, seed=None, options=None):
        self._close_open_episode()
        params = {"encoding": self.encoding}
        options = dict(options or {})
        if "module" in options:
            params["module"] = options.pop("module")
        if seed is not None:
            params["seed"] = seed
        if options:
            params["options"] = options
        result = self.client.call("reset", params)
        self.module = result["module"]
        info = dict(result["info"], module=result["module"], episode=result["episode"])
        if result["terminated"] or result["truncated"]:
            # A module without decisions (only when asked for by name).
            self.episode = None
            info["reward"] = result["reward"]
            return None, info
        self.episode = result["episode"]
        return self._decode(result["observation"]), info

    def step(self, action):
        if self.episode is None:
            raise RuntimeError("step() without an open episode: call reset() first")
        result = self.client.call("step", {"episode": self.episode, "action": _jsonable(action)})
        if result["terminated"] or result["truncated"]:
            self.episode = None
        return (self._decode(result["observation"]), result["reward"], result["terminated"],
                result["truncated"], result["info"])

    def _close_open_episode(self):
        if self.episode is not None:
            try:
                self.client.call("close", {"episode": self.episode})
            except MlgoError:
                pass
            self.episode = None

    def close(self):
        self._close_open_episode()


class VectorEnv:
    """``n`` episodes stepped together, one batch per round trip.

    ``reset()`` starts ``n`` episodes (sampled, or ``modules`` in order);
    ``step(actions)`` steps every live episode with its action and returns
    per-slot tuples; a finished slot stays finished (``None`` observation)
    until the next ``reset()``.
    """

    def __init__(self, client, n, encoding="json"):
        self.client = client
        self.n = n
        self.encoding = encoding
        self.spec = client.describe()
        self.observation_spec = {s["name"]: s for s in self.spec["observation_spec"]}
        self.episodes = [None] * n

    def _decode(self, observation):
        if observation is None:
            return None
        return {name: decode_tensor(self.observation_spec[name], value)
                for name, value in observation.items()}

    def reset(self, seed=None, modules=None, options=None):
        calls = []
        for i in range(self.n):
            params = {"encoding": self.encoding}
            if seed is not None:
                params["seed"] = seed + i
            if modules is not None:
                params["module"] = modules[i]
            if options:
                params["options"] = options
            calls.append(("reset", params))
        out = []
        for i, result in enumerate(self.client.batch(calls)):
            if isinstance(result, MlgoError):
                self.episodes[i] = None
                out.append((None, {"error": result}))
                continue
            ended = result["terminated"] or result["truncated"]
            self.episodes[i] = None if ended else result["episode"]
            out.append((self._decode(result["observation"]),
                        dict(result["info"], module=result["module"])))
        return out

    def step(self, actions):
        live = [i for i in range(self.n) if self.episodes[i] is not None]
        calls = [("step", {"episode": self.episodes[i], "action": _jsonable(actions[i])})
                 for i in live]
        out = [(None, 0.0, True, False, {})] * self.n
        for i, result in zip(live, self.client.batch(calls)):
            if isinstance(result, MlgoError):
                if result.code != INVALID_ACTION:
                    self.episodes[i] = None
                out[i] = (None, 0.0, False, False, {"error": result})
                continue
            if result["terminated"] or result["truncated"]:
                self.episodes[i] = None
            out[i] = (self._decode(result["observation"]), result["reward"],
                      result["terminated"], result["truncated"], result["info"])
        return out

    def live(self):
        return [i for i in range(self.n) if self.episodes[i] is not None]


def _jsonable(action):
    if _np is not None and isinstance(action, _np.generic):
        return action.item()
    if _np is not None and isinstance(action, _np.ndarray):
        return action.tolist()
    return action


try:  # gymnasium is optional
    import gymnasium as _gym
except ImportError:  # pragma: no cover - depends on the machine
    _gym = None

if _gym is not None:  # pragma: no cover - depends on the machine
    __all__.append("GymEnv")

    class GymEnv(_gym.Env):
        """A gymnasium.Env over mlgo-env (base64 observations as numpy arrays)."""

        metadata = {"render_modes": []}

        def __init__(self, client):
            self._env = Env(client, encoding="base64" if _np is not None else "json")
            spaces = {}
            for name, spec in self._env.observation_spec.items():
                dtype = _NUMPY_DTYPES[spec["type"]]
                spaces[name] = _gym.spaces.Box(low=-_np.inf, high=_np.inf,
                                               shape=tuple(spec["shape"]), dtype=dtype)
            self.observation_space = _gym.spaces.Dict(spaces)
            problem = self._env.problem
            if problem == "inlining":
                self.action_space = _gym.spaces.Discrete(2)
            elif problem == "regalloc":
                self.action_space = _gym.spaces.Discrete(33)
            else:
                self.action_space = _gym.spaces.Box(low=0.0, high=2.0**32 - 1, shape=(),
                                                    dtype=_np.float32)

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return self._env.reset(seed=seed, options=options)

        def step(self, action):
            return self._env.step(action)

        def close(self):
            self._env.close()
