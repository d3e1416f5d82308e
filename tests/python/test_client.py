"""Agent protocol tests from the Python client (run by ctest).

Needs MLGO_ENV (the mlgo-env executable) in the environment: ctest sets it; a missing one
fails (real_tools.py). Serves the demo corpus with the real clang-22.
"""
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import mlgo_env  # noqa: E402
from mlgo_env import agents, remote  # noqa: E402
from mlgo_env.errors import MlgoError  # noqa: E402

import numpy as np  # noqa: E402
from real_tools import needs, path_of  # noqa: E402

MLGO_ENV = path_of("MLGO_ENV")
SMALL_INLINING = ["sha256.o", "bignum.o", "codecs.o", "arena_alloc.o", "csv_parser.o"]
SMALL_REGALLOC = ["arena_alloc.o", "json_parser.o", "expr_eval.o", "string_utils.o", "rb_tree.o"]


class Server:
    """mlgo-env serve as a child process."""

    def __init__(self, *args, listen=None):
        self.dir = tempfile.mkdtemp(prefix="mlgo-pytest-")
        self.listen = listen or "unix:" + os.path.join(self.dir, "s.sock")
        self.process = subprocess.Popen([MLGO_ENV, "serve", f"--listen={self.listen}",
                                         "--no-disk-cache", *args],
                                        stderr=subprocess.PIPE, text=True)
        self.first_line = self.process.stderr.readline()
        self.lines = [self.first_line]
        self.drainer = threading.Thread(target=self._drain, daemon=True)
        self.drainer.start()
        while "listening on" not in self.lines[-1]:
            if self.process.poll() is not None:
                raise RuntimeError("server failed: " + "".join(self.lines))
            time.sleep(0.02)
        self.address = self.lines[-1].strip().split("listening on ", 1)[1]

    def _drain(self):
        for line in self.process.stderr:
            self.lines.append(line)

    def connect(self):
        return remote.connect(self.address)

    def stop(self):
        self.process.terminate()
        code = self.process.wait(timeout=60)
        self.drainer.join(timeout=10)
        self.process.stderr.close()
        for name in os.listdir(self.dir):
            os.unlink(os.path.join(self.dir, name))
        os.rmdir(self.dir)
        return code


class ServedTestCase(unittest.TestCase):
    """One server, started with `server_args`, for all tests of a class."""
    server_args = ()

    @classmethod
    def setUpClass(cls):
        cls.server = Server(*cls.server_args)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0


@needs("MLGO_ENV")
class Conformance(ServedTestCase):
    server_args = ("--problem=inlining", "--jobs=2", "--max-line-bytes=65536")

    def setUp(self):
        self.client = self.server.connect()

    def tearDown(self):
        self.client.close()

    def test_describe(self):
        spec = self.client.describe()
        self.assertEqual(spec["problem"], "inlining")
        self.assertEqual(spec["protocol_version"], 1)
        self.assertEqual(spec["action_spec"]["name"], "inlining_decision")
        self.assertGreaterEqual(spec["corpus"]["modules"], 25)
        self.assertIsNone(spec["ir2vec"])
        self.assertNotIn("callee_embedding", [f["name"] for f in spec["observation_spec"]])

    def test_env_episode_follow_default_gives_reward_zero(self):
        env = mlgo_env.make("inlining", remote=self.client)
        result = agents.play_episode(env, "default", module="sha256.o")
        self.assertGreater(result["steps"], 0)
        self.assertEqual(result["reward"], 0.0)
        self.assertEqual(result["policy_score"], result["default_score"])

    def test_base64_and_binary_observations_decode(self):
        specs = remote.feature_specs(self.client.describe())
        self.assertIn("binary", self.client.describe()["encodings"])
        decoded = {}
        for encoding in ("base64", "json", "binary"):
            result = self.client.call("reset", {"module": "bignum.o", "encoding": encoding})
            self.assertEqual(isinstance(result["observation"].get("callee_users"), str),
                             encoding == "base64")
            decoded[encoding] = remote.decode_observation(result["observation"], specs)
            self.client.call("close", {"episode": result["episode"]})
        self.assertEqual(set(decoded["base64"]), set(specs))
        self.assertEqual(decoded["base64"]["callee_users"].shape, (1,))
        for name in specs:
            np.testing.assert_array_equal(decoded["base64"][name], decoded["json"][name])
            np.testing.assert_array_equal(decoded["binary"][name], decoded["json"][name])
        # A batch: frames follow the line in item order, errors carry none.
        first = self.client.call("reset", {"module": "bignum.o", "encoding": "binary"})
        second = self.client.call("reset", {"module": "sha256.o", "encoding": "binary"})
        replies = self.client.batch([("step", {"episode": first["episode"], "action": 1}),
                                     ("step", {"episode": 987654, "action": 1}),
                                     ("describe", None),
                                     ("step", {"episode": second["episode"], "action": 0})])
        self.assertIsInstance(replies[1], mlgo_env.UnknownEpisode)
        batch_obs = [remote.decode_observation(replies[i]["observation"], specs) for i in (0, 3)]
        plain = {}
        for module, action in (("bignum.o", 1), ("sha256.o", 0)):
            r = self.client.call("reset", {"module": module, "encoding": "json"})
            plain[module] = remote.decode_observation(self.client.call(
                "step", {"episode": r["episode"], "action": action})["observation"], specs)
            self.client.call("close", {"episode": r["episode"]})
        for got, module in zip(batch_obs, ("bignum.o", "sha256.o")):
            for name in specs:
                np.testing.assert_array_equal(got[name], plain[module][name])
        for r in (first, second):
            self.client.call("close", {"episode": r["episode"]})

    def test_error_codes(self):
        cases = [
            ("fly", {}, mlgo_env.MethodNotFound.code),
            ("reset", {"module": "nope.o"}, mlgo_env.InvalidParams.code),
            ("reset", {"seed": -1}, mlgo_env.InvalidParams.code),
            ("step", {"episode": 987654, "action": 1}, mlgo_env.UnknownEpisode.code),
            ("step", {"episode": "x", "action": 1}, mlgo_env.InvalidParams.code),
            ("close", {"episode": 987654}, mlgo_env.UnknownEpisode.code),
        ]
        for method, params, code in cases:
            with self.assertRaises(MlgoError) as caught:
                self.client.call(method, params)
            self.assertEqual(caught.exception.code, code, (method, params))
        episode = self.client.call("reset", {"module": "codecs.o"})["episode"]
        with self.assertRaises(MlgoError) as caught:
            self.client.call("step", {"episode": episode, "action": 5})
        self.assertEqual(caught.exception.code, mlgo_env.InvalidAction.code)
        self.assertIn("0 (do not inline) or 1", caught.exception.message)
        self.client.call("step", {"episode": episode, "action": 1})  # still alive
        self.assertEqual(self.client.call("close", {"episode": episode})["closed"], True)

    def test_raw_protocol_errors(self):
        transport = self.client._transport
        for line, code in [("{bad", mlgo_env.ParseError.code), ("[]", mlgo_env.InvalidRequest.code),
                           ("x" * 70000, mlgo_env.LineTooLong.code)]:
            transport.send_line(line)
            reply = __import__("json").loads(transport.recv_line())
            self.assertEqual(reply["error"]["code"], code)
        self.assertEqual(self.client.describe()["problem"], "inlining")

    def test_batch_steps_many_episodes(self):
        vec = mlgo_env.make_vec("inlining", 3, remote=self.client)
        _, infos = vec.reset(options={"modules": ["sha256.o", "bignum.o", "codecs.o"]})
        finals = [None] * 3
        while vec.live():
            actions = [infos[i].get("default_action") for i in range(3)]
            live = vec.live()
            _, rewards, terminated, truncated, step_infos = vec.step(actions)
            for i in live:
                infos[i] = step_infos[i]
                if terminated[i] or truncated[i]:
                    finals[i] = (rewards[i], step_infos[i])
        for reward, info in finals:
            self.assertEqual(reward, 0.0)


@needs("MLGO_ENV")
class Ir2Vec(ServedTestCase):
    """--ir2vec-vocab=default: embedding features and the module embedding."""
    server_args = ("--problem=inlining", "--jobs=2", "--ir2vec-vocab=default")

    def test_embeddings_in_observations_and_reset_info(self):
        client = self.server.connect()
        spec = client.describe()
        self.assertEqual(spec["ir2vec"]["dimension"], 75)
        self.assertTrue(spec["ir2vec"]["vocabulary"].endswith("demo-75d.json"))
        features = {f["name"]: f for f in spec["observation_spec"]}
        for name in ("callee_embedding", "caller_embedding"):
            self.assertEqual(features[name]["type"], "float")
            self.assertEqual(features[name]["shape"], [75])

        # The module embedding equals the sum of the function vectors that
        # `mlgo-env ir2vec embed` prints for the module's bitcode.
        bitcode = os.path.join(spec["corpus"]["root"], "sha256.o.bc")
        embedded = json.loads(subprocess.run(
            [MLGO_ENV, "ir2vec", "embed", "--format=json", "--vocab",
             spec["ir2vec"]["vocabulary"], bitcode],
            check=True, capture_output=True, text=True).stdout)
        expected = [sum(f["vector"][i] for f in embedded["embeddings"]) for i in range(75)]

        for _ in range(1):
            env = mlgo_env.make("inlining", remote=client)
            obs, info = env.reset(options={"module": "sha256.o"})
            self.assertEqual(obs["callee_embedding"].shape, (75,))
            self.assertTrue(any(v != 0 for v in obs["caller_embedding"]))
            self.assertEqual(len(info["module_embedding"]), 75)
            for got, want in zip(info["module_embedding"], expected):
                self.assertAlmostEqual(got, want, delta=1e-9 * (1 + abs(want)))
            done = False
            while not done:
                obs, reward, terminated, truncated, step_info = env.step(info["default_action"])
                self.assertNotIn("module_embedding", step_info)
                info = step_info
                done = terminated or truncated
            self.assertEqual(reward, 0.0)
        client.close()


@needs("MLGO_ENV")
class Transports(unittest.TestCase):
    def test_tcp_loopback_and_stdio(self):
        server = Server("--problem=regalloc", listen="127.0.0.1:0")
        try:
            self.assertRegex(server.address, r"^127\.0\.0\.1:\d+$")
            client = server.connect()
            self.assertEqual(client.describe()["problem"], "regalloc")
            client.close()
        finally:
            self.assertEqual(server.stop(), 0)
        client = remote.connect_stdio([MLGO_ENV, "--problem=regalloc-priority",
                                       "--no-disk-cache"], stderr=subprocess.DEVNULL)
        env = mlgo_env.make("regalloc-priority", remote=client)
        result = agents.play_episode(env, "random", random.Random(3), module="arena_alloc.o")
        self.assertGreater(result["steps"], 0)
        self.assertAlmostEqual(result["reward"],
                               1 - result["policy_score"] / result["default_score"], places=9)
        client.close()
        self.assertEqual(client._transport.process.returncode, 0)

    def test_non_loopback_warns(self):
        server = Server("--problem=inlining", listen="0.0.0.0:0")
        try:
            self.assertTrue(any("not a loopback address" in l for l in server.lines),
                            server.lines)
        finally:
            server.stop()


@needs("MLGO_ENV")
class Concurrency(unittest.TestCase):
    def test_eight_clients_twenty_episodes_mixed_problems(self):
        servers = {"inlining": Server("--problem=inlining", "--jobs=2"),
                   "regalloc": Server("--problem=regalloc", "--jobs=2")}
        results, errors = [], []

        def client_main(index):
            problem = "inlining" if index % 2 == 0 else "regalloc"
            modules = SMALL_INLINING if problem == "inlining" else SMALL_REGALLOC
            policy = "default" if problem == "inlining" and index % 4 == 0 else "random"
            rng = random.Random(index)
            try:
                client = servers[problem].connect()
                env = mlgo_env.make(problem, remote=client)
                for episode in range(20):
                    module = modules[(index + episode) % len(modules)]
                    result = agents.play_episode(env, policy, rng, module=module)
                    results.append((problem, policy, module, result))
                client.close()
            except Exception as error:  # reported below
                errors.append(f"client {index}: {error!r}")

        threads = [threading.Thread(target=client_main, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for server in servers.values():
            self.assertEqual(server.stop(), 0)
        self.assertEqual(errors, [])
        self.assertEqual(len(results), 160)
        defaults = {}
        for problem, policy, module, result in results:
            self.assertGreater(result["steps"], 0)
            expected = 1 - result["policy_score"] / result["default_score"]
            self.assertAlmostEqual(result["reward"], expected, places=9)
            if policy == "default":
                self.assertEqual(result["reward"], 0.0)
            # Every episode of a module saw the same baseline.
            key = (problem, module)
            defaults.setdefault(key, result["default_score"])
            self.assertEqual(defaults[key], result["default_score"], key)


if __name__ == "__main__":
    unittest.main()
