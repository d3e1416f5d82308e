"""Agent protocol tests from the Python client (run by ctest).

Needs MLGO_ENV (the mlgo-env executable) in the environment; serves the demo
corpus with the real clang-22.
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

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import agents  # noqa: E402
import mlgo_client  # noqa: E402
from mlgo_client import MlgoError  # noqa: E402

MLGO_ENV = os.environ.get("MLGO_ENV", "")
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
        return mlgo_client.connect(self.address)

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


@unittest.skipUnless(MLGO_ENV, "MLGO_ENV not set")
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
        env = mlgo_client.Env(self.client)
        result = agents.play_episode(env, "default", module="sha256.o")
        self.assertGreater(result["steps"], 0)
        self.assertEqual(result["reward"], 0.0)
        self.assertEqual(result["policy_score"], result["default_score"])

    def test_base64_observations_decode(self):
        env = mlgo_client.Env(self.client, encoding="base64")
        obs, info = env.reset(options={"module": "bignum.o"})
        self.assertEqual(set(obs), set(env.observation_spec))
        value = obs["callee_users"]
        self.assertEqual(len(value), 1)
        plain = mlgo_client.Env(self.client)
        obs2, _ = plain.reset(options={"module": "bignum.o"})
        self.assertEqual(list(value), obs2["callee_users"])
        env.close()
        plain.close()

    def test_error_codes(self):
        cases = [
            ("fly", {}, mlgo_client.METHOD_NOT_FOUND),
            ("reset", {"module": "nope.o"}, mlgo_client.INVALID_PARAMS),
            ("reset", {"seed": -1}, mlgo_client.INVALID_PARAMS),
            ("step", {"episode": 987654, "action": 1}, mlgo_client.UNKNOWN_EPISODE),
            ("step", {"episode": "x", "action": 1}, mlgo_client.INVALID_PARAMS),
            ("close", {"episode": 987654}, mlgo_client.UNKNOWN_EPISODE),
        ]
        for method, params, code in cases:
            with self.assertRaises(MlgoError) as caught:
                self.client.call(method, params)
            self.assertEqual(caught.exception.code, code, (method, params))
        episode = self.client.call("reset", {"module": "codecs.o"})["episode"]
        with self.assertRaises(MlgoError) as caught:
            self.client.call("step", {"episode": episode, "action": 5})
        self.assertEqual(caught.exception.code, mlgo_client.INVALID_ACTION)
        self.assertIn("0 (do not inline) or 1", caught.exception.message)
        self.client.call("step", {"episode": episode, "action": 1})  # still alive
        self.assertEqual(self.client.call("close", {"episode": episode})["closed"], True)

    def test_raw_protocol_errors(self):
        transport = self.client._transport
        for line, code in [("{bad", mlgo_client.PARSE_ERROR), ("[]", mlgo_client.INVALID_REQUEST),
                           ("x" * 70000, mlgo_client.LINE_TOO_LONG)]:
            transport.send_line(line)
            reply = __import__("json").loads(transport.recv_line())
            self.assertEqual(reply["error"]["code"], code)
        self.assertEqual(self.client.describe()["problem"], "inlining")

    def test_batch_steps_many_episodes(self):
        vec = mlgo_client.VectorEnv(self.client, 3)
        first = vec.reset(modules=["sha256.o", "bignum.o", "codecs.o"])
        infos = [info for _, info in first]
        finals = [None] * 3
        while vec.live():
            actions = [infos[i].get("default_action") for i in range(3)]
            live = vec.live()
            for i, (obs, reward, terminated, truncated, info) in zip(range(3), vec.step(actions)):
                if i not in live:
                    continue
                infos[i] = info
                if terminated or truncated:
                    finals[i] = (reward, info)
        for reward, info in finals:
            self.assertEqual(reward, 0.0)


@unittest.skipUnless(MLGO_ENV, "MLGO_ENV not set")
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

        for encoding in ("json", "base64"):
            env = mlgo_client.Env(client, encoding=encoding)
            obs, info = env.reset(options={"module": "sha256.o"})
            self.assertEqual(len(obs["callee_embedding"]), 75)
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


@unittest.skipUnless(MLGO_ENV, "MLGO_ENV not set")
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
        client = mlgo_client.connect_stdio([MLGO_ENV, "--problem=regalloc-priority",
                                            "--no-disk-cache"], stderr=subprocess.DEVNULL)
        env = mlgo_client.Env(client)
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


@unittest.skipUnless(MLGO_ENV, "MLGO_ENV not set")
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
                env = mlgo_client.Env(client)
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
