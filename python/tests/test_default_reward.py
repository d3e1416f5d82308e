"""Following clang's own inlining decision reproduces a plain compile: reward
0 on every -Oz demo module (in process, batched)."""
import mlgo_env


def test_follow_default_gives_zero_reward_on_every_oz_module(cache_dir):
    vec = mlgo_env.make_vec("inlining", 2, jobs=2, cache_dir=cache_dir)
    modules = vec.corpus_modules()
    assert len(modules) >= 25
    results = {}
    for start in range(0, len(modules), 2):
        chunk = modules[start:start + 2]
        names = chunk + chunk[:1] * (2 - len(chunk))
        observations, infos = vec.reset(options={"modules": names})
        for i, info in enumerate(infos):
            assert "error" not in info, info
            if observations[i] is None:
                results[names[i]] = (info["reward"], info, 0)
        steps = [0, 0]
        while vec.live():
            actions = [infos[i].get("default_action") for i in range(2)]
            live = vec.live()
            observations, rewards, terminated, truncated, step_infos = vec.step(actions)
            for i in live:
                assert "error" not in step_infos[i], step_infos[i]
                infos[i] = step_infos[i]
                steps[i] += 1
                if terminated[i] or truncated[i]:
                    assert terminated[i] and not truncated[i]
                    results[names[i]] = (rewards[i], step_infos[i], steps[i])
    vec.close()
    assert sorted(results) == sorted(modules)
    for module, (reward, info, steps) in results.items():
        assert reward == 0.0, (module, info)
        assert info["policy_score"] == info["default_score"] > 0, module
    assert sum(steps for _, _, steps in results.values()) > 100
