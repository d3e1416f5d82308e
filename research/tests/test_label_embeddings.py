"""research/label_embeddings.py with the real clang-22 on the -Oz demo corpus (a labels'
trajectory, flipped decisions included, replayed with IR2Vec; a label row clang does not
reproduce leaves its module out), and research/label_transfer.py --embeddings (no clang:
flips that only an embedding column decides)."""

import importlib.util

import numpy as np

from mlgo_env import episodes as ep
from mlgo_env.policies.policy import feature_row
from mlgo_env.training.training_setup import env_factory

from research_paths import RESEARCH
from flip_search import FlipSet
from test_train import demo_corpus



def load(name):
    spec = importlib.util.spec_from_file_location(name, RESEARCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


label_embeddings = load("label_embeddings")
label_transfer = load("label_transfer")


class FlipFirst:
    """Flips a module's first decision, answers the default after it, records rows."""

    def __init__(self, names):
        self.names, self.rows, self.defaults = names, [], []

    def __call__(self, obs, info):
        self.rows.append(feature_row(obs, info, self.names))
        self.defaults.append(int(info["default_action"]))
        return 1 - self.defaults[-1] if len(self.rows) == 1 else self.defaults[-1]


def test_replays_labelled_trajectories_with_embeddings(tmp_path, capsys):
    _, corpus = demo_corpus()
    cache = str(tmp_path / "cache")
    with ep.EpisodePool(env_factory("inlining", corpus, None, cache, None), 1) as pool:
        names = list(dict.fromkeys(pool.observation_features() + ["inlining_default"]))
        modules = ep.corpus_modules(corpus)
        players = {}
        for m in modules:
            players[m] = FlipFirst(names)
            pool.play([(m, players[m])])
    chosen = [m for m in modules if len(players[m].rows) >= 3][:2]
    assert len(chosen) == 2, "the demo corpus has modules with decisions"
    mods, steps, rows, defaults, rewards = [], [], [], [], []
    for m in chosen:
        n = len(players[m].rows)
        mods += [m] * n
        steps += list(range(n))
        rows += players[m].rows
        defaults += players[m].defaults
        rewards += [1.0] + [-1.0] * (n - 1)
    rows = np.asarray(rows)
    second = np.flatnonzero(np.asarray(mods) == chosen[1])[1]
    rows[second, names.index("threshold")] += 1  # clang will not ask this
    labels = FlipSet(names, mods, np.asarray(steps), rows, np.asarray(defaults),
                     np.asarray(rewards), {m: mods.count(m) for m in chosen})
    labels.save(str(tmp_path / "labels.npz"))
    out = tmp_path / "emb.npz"
    assert label_embeddings.main([str(tmp_path / "labels.npz"), f"--corpus={corpus}",
                                  f"--output={out}", "--workers=1",
                                  f"--cache-dir={cache}"]) == 0
    err = capsys.readouterr().err
    assert f"{chosen[1]}: left out (decision 1: 'threshold' differs" in err
    d = np.load(out)
    first = np.asarray(mods) == chosen[0]
    assert d["replayed"].tolist() == first.tolist()
    assert d["embeddings"].shape[1] == 2 * 75  # the shipped vocabulary's dimension
    assert np.isfinite(d["embeddings"][first]).all()
    assert np.isnan(d["embeddings"][~first]).all()
    assert np.abs(d["embeddings"][first]).sum() > 0


def test_transfer_with_an_embedding_that_decides_the_flips(tmp_path, capsys):
    rng = np.random.default_rng(0)
    n = 900
    names = ["threshold", "cost_estimate", "callee_users", "inlining_default"]
    rows = np.column_stack([np.full(n, 5.0), rng.normal(-20, 30, n),
                            rng.integers(1, 60, n), np.ones(n)])
    key = rng.normal(0, 1, n)
    modules = [f"pkg{i % 3}/m{i % 30}.o" for i in range(n)]
    FlipSet(names, modules, np.arange(n), rows, np.ones(n, dtype=np.int64),
            np.where(key > 1.0, 1.0, -1.0), {m: 30 for m in set(modules)}
            ).save(str(tmp_path / "labels.npz"))
    emb = np.column_stack([key, rng.normal(0, 1, n)])
    replayed = np.array([not m.endswith("/m0.o") for m in modules])
    emb[~replayed] = np.nan
    np.savez(tmp_path / "emb.npz", embeddings=emb, replayed=replayed,
             names=np.asarray(["callee_embedding_0", "caller_embedding_0"]),
             modules=np.asarray(modules))

    def transfer_auc(*extra):
        assert label_transfer.main([str(tmp_path / "labels.npz"), "--hidden=4",
                                    f"--embeddings={tmp_path / 'emb.npz'}", *extra]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"{int(replayed.sum())} decisions of 29 modules")
        line = next(s for s in out.splitlines() if s.startswith("leave-one-package-out"))
        return float(line.split("AUC ")[1].split()[0])
    assert transfer_auc() > 0.95
    assert transfer_auc("--embedding-columns=no") < 0.7
    np.savez(tmp_path / "other.npz", embeddings=emb, replayed=replayed,
             names=np.asarray(["a", "b"]), modules=np.asarray(modules[::-1]))
    assert label_transfer.main([str(tmp_path / "labels.npz"),
                                f"--embeddings={tmp_path / 'other.npz'}"]) == 1
    assert "not made from these labels" in capsys.readouterr().err
